import { sql } from "kysely";
import type { Limits } from "../../config.ts";
import type { Db } from "../../db/database.ts";
import { getAccountByName } from "../accounts/accounts.ts";
import { DomainError, DomainValidationError } from "../errors.ts";
import { formatCpu, formatMemory, type CpuMemory } from "../../resources/quantity.ts";

// The CLI reads and writes caps as quantities through here (its layer does not reach resources/).
export { cpuMillis, formatCpu, formatMemory, memoryBytes } from "../../resources/quantity.ts";

// Per-account limits (design.md, Limits and queueing): the operator's defaults
// (CODEPLANE_LIMIT_*) and each account's overrides (account_limits, set with
// `codeplane accounts limits`). 0 means no limit. CPU and memory are caps of
// what an account's executing runs and analyses request at once, in
// millicores and bytes (the built-in limiter's; with Kueue, its quotas). The waiting limit is checked
// here, by the API, before a run is created; the executing limit by the
// controller's admission (src/controller/admission.ts).

export type { Limits };

export const NO_LIMITS: Limits = {
  executingPerAccount: 0,
  waitingPerAccount: 0,
  executingTotal: 0,
  cpuPerAccount: 0,
  memoryPerAccount: 0,
  retryAfterSeconds: 30,
};

type Overrides = { executing: number | null; waiting: number | null; cpu: number | null; memory: number | null };

/** One account's effective limits and where each comes from (cpu in millicores, memory in bytes). */
export interface AccountLimits {
  executing: number;
  waiting: number;
  cpu: number;
  memory: number;
  overrides: Overrides;
}

const COLUMNS = ["executing", "waiting", "cpu_millis", "memory_bytes"] as const;
const num = (v: string | number | null | undefined) => (v === null || v === undefined ? null : Number(v));
const overridesOf = (
  r: { executing: number | null; waiting: number | null; cpu_millis: string | null; memory_bytes: string | null } | undefined,
): Overrides => ({
  executing: r?.executing ?? null,
  waiting: r?.waiting ?? null,
  cpu: num(r?.cpu_millis),
  memory: num(r?.memory_bytes),
});

export type LimitOverride = number | null | undefined;

/** Every account's overrides (what the controller's admission reads); accounts without any are absent. */
export async function limitOverrides(db: Db): Promise<Map<string, Overrides>> {
  const rows = await db
    .selectFrom("account_limits")
    .select(["account_id", ...COLUMNS])
    .execute();
  return new Map(rows.map((r) => [r.account_id, overridesOf(r)]));
}

export async function accountLimits(db: Db, accountId: string, defaults: Limits): Promise<AccountLimits> {
  const row = await db.selectFrom("account_limits").select(COLUMNS).where("account_id", "=", accountId).executeTakeFirst();
  const overrides = overridesOf(row);
  return {
    executing: overrides.executing ?? defaults.executingPerAccount,
    waiting: overrides.waiting ?? defaults.waitingPerAccount,
    cpu: overrides.cpu ?? defaults.cpuPerAccount,
    memory: overrides.memory ?? defaults.memoryPerAccount,
    overrides,
  };
}

/**
 * Sets (a number), resets to the default (null) or keeps (undefined) an
 * account's overrides; an account with no override left has no row.
 */
export async function setAccountLimits(
  db: Db,
  accountName: string,
  change: { executing?: LimitOverride; waiting?: LimitOverride; cpu?: LimitOverride; memory?: LimitOverride },
  defaults: Limits,
): Promise<{ account: string; account_id: string } & AccountLimits> {
  const account = await getAccountByName(db, accountName);
  await db.transaction().execute(async (trx) => {
    const current = overridesOf(await trx.selectFrom("account_limits").select(COLUMNS).where("account_id", "=", account.id).forUpdate().executeTakeFirst());
    const pick = (key: keyof Overrides) => (change[key] === undefined ? current[key] : change[key]);
    const next = { executing: pick("executing"), waiting: pick("waiting"), cpu_millis: pick("cpu"), memory_bytes: pick("memory") };
    if (Object.values(next).every((v) => v === null)) {
      await trx.deleteFrom("account_limits").where("account_id", "=", account.id).execute();
      return;
    }
    await trx
      .insertInto("account_limits")
      .values({ account_id: account.id, ...next, updated_at: new Date() })
      .onConflict((oc) => oc.column("account_id").doUpdateSet({ ...next, updated_at: new Date() }))
      .execute();
  });
  return { account: account.name, account_id: account.id, ...(await accountLimits(db, account.id, defaults)) };
}

/** The account's runs that count against its waiting limit: `pending` (queued, or admitted and not yet started). */
export async function countWaitingRuns(db: Db, accountId: string): Promise<number> {
  const row = await db
    .selectFrom("runs")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("account_id", "=", accountId)
    .where("status", "=", "pending")
    .where("deleted_at", "is", null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Why a run requesting `requests` could never start under the account's CPU
 * and memory caps (it asks for more than a cap by itself); null when it could.
 */
export function overCap(limits: Pick<AccountLimits, "cpu" | "memory">, requests: CpuMemory, computeType: string): string | null {
  const over = [
    limits.cpu > 0 &&
      requests.cpu > limits.cpu &&
      `${formatCpu(requests.cpu)} CPU, more than this account's cap of ${formatCpu(limits.cpu)} (limit 'cpu' per account)`,
    limits.memory > 0 &&
      requests.memory > limits.memory &&
      `${formatMemory(requests.memory)} memory, more than this account's cap of ${formatMemory(limits.memory)} (limit 'memory' per account)`,
  ].filter(Boolean);
  return over.length ? `compute type '${computeType}' requests ${over.join(" and ")}: a run of it could never start` : null;
}

/**
 * Runs `create` unless the account already has its waiting limit of pending
 * runs (429, naming the limit, with Retry-After), or the run (`caps`: its
 * compute type's requests, where the built-in limiter applies the CPU and
 * memory caps) asks for more than a cap by itself and so could never start
 * (422 on `compute_type`). With a waiting limit, the count and the creation
 * hold the account's advisory lock in one transaction, so concurrent
 * requests cannot pass the check together.
 */
export async function withinWaitingLimit<T>(
  db: Db,
  accountId: string,
  defaults: Limits,
  create: (db: Db) => Promise<T>,
  caps?: { requests: CpuMemory; computeType: string },
): Promise<T> {
  const limits = await accountLimits(db, accountId, defaults);
  const over = caps && overCap(limits, caps.requests, caps.computeType);
  if (over) throw new DomainValidationError([{ loc: ["body", "compute_type"], msg: over, type: "value_error" }]);
  const { waiting } = limits;
  if (waiting === 0) return create(db);
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`codeplane.waiting:${accountId}`}, 0))`.execute(trx);
    const n = await countWaitingRuns(trx, accountId);
    if (n >= waiting) {
      throw new DomainError(
        "too_many_requests",
        `waiting limit reached: this account has ${n} pending runs and may have ${waiting} (limit 'waiting' per account); try again when some have started`,
        { retryAfterSeconds: defaults.retryAfterSeconds },
      );
    }
    return create(trx);
  });
}
