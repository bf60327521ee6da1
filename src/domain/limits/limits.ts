import { sql } from "kysely";
import type { Limits } from "../../config.ts";
import type { Db } from "../../db/database.ts";
import { getAccountByName } from "../accounts/accounts.ts";
import { DomainError } from "../errors.ts";

// Per-account limits (design.md, Limits and queueing): the operator's defaults
// (CODEPLANE_LIMIT_*) and each account's overrides (account_limits, set with
// `codeplane accounts limits`). 0 means no limit. The waiting limit is checked
// here, by the API, before a run is created; the executing limit by the
// controller's admission (src/controller/admission.ts).

export type { Limits };

export const NO_LIMITS: Limits = { executingPerAccount: 0, waitingPerAccount: 0, executingTotal: 0, retryAfterSeconds: 30 };

/** One account's effective limits and where each comes from. */
export interface AccountLimits {
  executing: number;
  waiting: number;
  overrides: { executing: number | null; waiting: number | null };
}

export type LimitOverride = number | null | undefined;

/** Every account's overrides (what the controller's admission reads); accounts without any are absent. */
export async function limitOverrides(db: Db): Promise<Map<string, { executing: number | null; waiting: number | null }>> {
  const rows = await db.selectFrom("account_limits").select(["account_id", "executing", "waiting"]).execute();
  return new Map(rows.map((r) => [r.account_id, { executing: r.executing, waiting: r.waiting }]));
}

export async function accountLimits(db: Db, accountId: string, defaults: Limits): Promise<AccountLimits> {
  const row = await db.selectFrom("account_limits").select(["executing", "waiting"]).where("account_id", "=", accountId).executeTakeFirst();
  const overrides = { executing: row?.executing ?? null, waiting: row?.waiting ?? null };
  return {
    executing: overrides.executing ?? defaults.executingPerAccount,
    waiting: overrides.waiting ?? defaults.waitingPerAccount,
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
  change: { executing: LimitOverride; waiting: LimitOverride },
  defaults: Limits,
): Promise<{ account: string; account_id: string; executing: number; waiting: number; overrides: AccountLimits["overrides"] }> {
  const account = await getAccountByName(db, accountName);
  await db.transaction().execute(async (trx) => {
    const current = await trx.selectFrom("account_limits").select(["executing", "waiting"]).where("account_id", "=", account.id).forUpdate().executeTakeFirst();
    const next = {
      executing: change.executing === undefined ? (current?.executing ?? null) : change.executing,
      waiting: change.waiting === undefined ? (current?.waiting ?? null) : change.waiting,
    };
    if (next.executing === null && next.waiting === null) {
      await trx.deleteFrom("account_limits").where("account_id", "=", account.id).execute();
      return;
    }
    await trx
      .insertInto("account_limits")
      .values({ account_id: account.id, ...next, updated_at: new Date() })
      .onConflict((oc) => oc.column("account_id").doUpdateSet({ ...next, updated_at: new Date() }))
      .execute();
  });
  const limits = await accountLimits(db, account.id, defaults);
  return { account: account.name, account_id: account.id, executing: limits.executing, waiting: limits.waiting, overrides: limits.overrides };
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
 * Runs `create` unless the account already has its waiting limit of pending
 * runs (429, naming the limit, with Retry-After). With a limit, the count and
 * the creation hold the account's advisory lock in one transaction, so
 * concurrent requests cannot pass the check together.
 */
export async function withinWaitingLimit<T>(db: Db, accountId: string, defaults: Limits, create: (db: Db) => Promise<T>): Promise<T> {
  const { waiting } = await accountLimits(db, accountId, defaults);
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
