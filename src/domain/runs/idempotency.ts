import { createHash, randomUUID } from "node:crypto";
import { sql } from "kysely";
import type { Db } from "../../db/database.ts";
import { conflict } from "../errors.ts";
import type { Run } from "./runs.schemas.ts";

// Idempotency-Key on run creation (POST .../runs and POST /v1/runs/{run_id}/rerun), per account:
// the first request with a key claims it in Postgres (a row keyed by account and key), creates its
// run and records the run's id; a request with the same key and the same request gets that run for
// 24 h; with another request, 409. A duplicate that arrives while the first is still creating waits
// for it (up to WAIT_MS), so concurrent duplicates make one run. A claim whose request failed is given
// up, so a retry can create the run; one whose process died is taken over after STALE_CLAIM.

export const IDEMPOTENCY_TTL = "24 hours";
const STALE_CLAIM = "10 minutes";
const WAIT_MS = 60_000;
const POLL_MS = 100;

/** A request's identity: the operation, its path's ids and its body, with object keys in one order. */
export function requestFingerprint(operation: string, target: readonly string[], body: unknown): string {
  const canonical = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(canonical)
      : v !== null && typeof v === "object"
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
          )
        : v;
  return createHash("sha256")
    .update(JSON.stringify([operation, target, canonical(body ?? null)]))
    .digest("hex");
}

export interface IdempotentResult {
  run: Run;
  /** The run was made by an earlier request with this key. */
  replayed: boolean;
}

export async function createIdempotently(
  db: Db,
  accountId: string,
  key: string,
  fingerprint: string,
  create: () => Promise<Run>,
  read: (runId: string) => Promise<Run>,
  opts: { waitMs?: number } = {},
): Promise<IdempotentResult> {
  const deadline = Date.now() + (opts.waitMs ?? WAIT_MS);
  for (;;) {
    const claim = randomUUID();
    const claimed = await db
      .insertInto("run_idempotency_keys")
      .values({ account_id: accountId, key, fingerprint, claim, run_id: null, expires_at: sql<Date>`now() + ${sql.lit(IDEMPOTENCY_TTL)}::interval` })
      .onConflict((oc) =>
        oc
          .columns(["account_id", "key"])
          .doUpdateSet((eb) => ({
            fingerprint: eb.ref("excluded.fingerprint"),
            claim: eb.ref("excluded.claim"),
            run_id: null,
            claimed_at: sql<Date>`now()`,
            expires_at: eb.ref("excluded.expires_at"),
          }))
          // An expired key is free again; so is a claim whose request never finished (its process died).
          .where((eb) =>
            eb.or([
              eb("run_idempotency_keys.expires_at", "<=", sql<Date>`now()`),
              eb.and([
                eb("run_idempotency_keys.run_id", "is", null),
                eb("run_idempotency_keys.claimed_at", "<", sql<Date>`now() - ${sql.lit(STALE_CLAIM)}::interval`),
              ]),
            ]),
          ),
      )
      .returning("claim")
      .executeTakeFirst();
    if (claimed?.claim === claim) {
      let run: Run;
      try {
        run = await create();
      } catch (err) {
        // Nothing was made (or what was made is not this key's): a retry with the key may try again.
        await db.deleteFrom("run_idempotency_keys").where("account_id", "=", accountId).where("key", "=", key).where("claim", "=", claim).execute();
        throw err;
      }
      await db
        .updateTable("run_idempotency_keys")
        .set({ run_id: run.run_id })
        .where("account_id", "=", accountId)
        .where("key", "=", key)
        .where("claim", "=", claim)
        .execute();
      return { run, replayed: false };
    }
    const held = await db
      .selectFrom("run_idempotency_keys")
      .select(["fingerprint", "run_id"])
      .where("account_id", "=", accountId)
      .where("key", "=", key)
      .where("expires_at", ">", sql<Date>`now()`)
      .executeTakeFirst();
    if (held) {
      if (held.fingerprint !== fingerprint)
        throw conflict("This Idempotency-Key was used with another request (a different path or body) in the last 24 hours");
      if (held.run_id) return { run: await read(held.run_id), replayed: true };
      if (Date.now() >= deadline) throw conflict("A request with this Idempotency-Key is still creating its run; try again shortly");
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    // Gone (its request failed, or it expired) or still pending: claim or look again.
  }
}
