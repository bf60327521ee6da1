import { sql } from "kysely";
import type { Db } from "../../db/database.ts";
import type { GitHubWebhookDeliveriesTable } from "../../db/schema.ts";
import type { Selectable } from "kysely";

// The durable queue of GitHub webhook deliveries (migration 0008).

export type DeliveryRow = Selectable<GitHubWebhookDeliveriesTable>;
export type DeliveryStatus = DeliveryRow["status"];

export interface NewDelivery {
  id: string;
  event: string;
  action: string | null;
  installationId: number | null;
  repositoryFullName: string | null;
  payload: string;
}

/**
 * Records a verified delivery. GitHub's redelivery reuses the delivery id: an
 * accepted one (queued, being handled, handled or skipped) is not queued again;
 * one whose handling failed is queued again with its attempts reset.
 */
// received_at is written from the clock here (millisecond precision, like the list's cursor) rather than now() (microseconds).
export async function recordDelivery(db: Db, d: NewDelivery): Promise<"queued" | "requeued" | "duplicate"> {
  const inserted = await db
    .insertInto("github_webhook_deliveries")
    .values({
      id: d.id,
      event: d.event,
      action: d.action,
      installation_id: d.installationId,
      repository_full_name: d.repositoryFullName,
      status: "queued",
      payload: d.payload,
      received_at: new Date(),
    })
    .onConflict((c) => c.column("id").doNothing())
    .returning("id")
    .executeTakeFirst();
  if (inserted) return "queued";
  const requeued = await db
    .updateTable("github_webhook_deliveries")
    .set({ status: "queued", attempts: 0, reason: null, payload: d.payload, available_at: sql<Date>`now()`, finished_at: null })
    .where("id", "=", d.id)
    .where("status", "=", "failed")
    .returning("id")
    .executeTakeFirst();
  return requeued ? "requeued" : "duplicate";
}

/**
 * Claims the oldest delivery that is due: queued, or processing with a lease
 * that ran out (its replica died). The claim is a lease of leaseSeconds; SKIP
 * LOCKED keeps replicas from waiting on, or taking, each other's claim.
 */
export async function claimDelivery(db: Db, leaseSeconds: number): Promise<DeliveryRow | undefined> {
  const r = await sql<DeliveryRow>`
    update github_webhook_deliveries
       set status = 'processing', attempts = attempts + 1, available_at = now() + make_interval(secs => ${leaseSeconds})
     where id = (
       select id from github_webhook_deliveries
        where status in ('queued', 'processing') and available_at <= now()
        order by available_at, received_at
        limit 1
        for update skip locked)
    returning *`.execute(db);
  return r.rows[0];
}

/** Extends the lease of a delivery still being handled here (false when it is no longer this claim's). */
export async function renewDeliveryLease(db: Db, id: string, attempts: number, leaseSeconds: number): Promise<boolean> {
  const r = await db
    .updateTable("github_webhook_deliveries")
    .set({ available_at: sql<Date>`now() + make_interval(secs => ${leaseSeconds})` })
    .where("id", "=", id)
    .where("status", "=", "processing")
    .where("attempts", "=", attempts)
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/** Ends a claimed delivery (this claim's: `attempts` tells claims apart): handled or skipped (with why), its payload dropped. */
export async function finishDelivery(db: Db, id: string, attempts: number, status: "handled" | "skipped", reason: string | null): Promise<void> {
  await db
    .updateTable("github_webhook_deliveries")
    .set({ status, reason, payload: null, finished_at: sql<Date>`now()` })
    .where("id", "=", id)
    .where("status", "=", "processing")
    .where("attempts", "=", attempts)
    .execute();
}

/** A claimed delivery whose handling failed: tried again after a delay, or failed for good (payload kept, so a redelivery or an operator can see it). */
export async function failDelivery(db: Db, id: string, attempts: number, reason: string, retryAfterSeconds: number | null): Promise<void> {
  const q = db.updateTable("github_webhook_deliveries").where("id", "=", id).where("status", "=", "processing").where("attempts", "=", attempts);
  if (retryAfterSeconds === null) await q.set({ status: "failed", reason, finished_at: sql<Date>`now()` }).execute();
  else await q.set({ status: "queued", reason, available_at: sql<Date>`now() + make_interval(secs => ${retryAfterSeconds})` }).execute();
}

export interface DeliveryListFilter {
  accountId: string;
  limit: number;
  before?: { receivedAt: Date; id: string } | undefined;
}

/**
 * Recent deliveries about the account's installations, newest first: those
 * received while the installation was connected to this account (an
 * installation disconnected here and connected by another account later is
 * the other account's from then on).
 */
export function listDeliveries(db: Db, f: DeliveryListFilter): Promise<DeliveryRow[]> {
  let q = db
    .selectFrom("github_webhook_deliveries as d")
    .selectAll("d")
    // Kysely's expression builder hands out bound functions, made to be destructured.
    // eslint-disable-next-line @typescript-eslint/unbound-method
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom("integrations as i")
          .select("i.id")
          .where("i.account_id", "=", f.accountId)
          .whereRef("i.installation_id", "=", "d.installation_id")
          .whereRef("d.received_at", ">=", "i.created_at")
          .where((eb) => eb.or([eb("i.deleted_at", "is", null), eb("d.received_at", "<=", eb.ref("i.deleted_at"))])),
      ),
    );
  if (f.before) {
    const { receivedAt, id } = f.before;
    q = q.where((eb) => eb.or([eb("d.received_at", "<", receivedAt), eb.and([eb("d.received_at", "=", receivedAt), eb("d.id", "<", id)])]));
  }
  return q.orderBy("d.received_at", "desc").orderBy("d.id", "desc").limit(f.limit).execute();
}

/** Finished deliveries older than the retention go (the queue itself never loses an unfinished one). */
export async function pruneDeliveries(db: Db, olderThanDays: number): Promise<number> {
  const r = await db
    .deleteFrom("github_webhook_deliveries")
    .where("status", "in", ["handled", "skipped", "failed"])
    .where("received_at", "<", sql<Date>`now() - make_interval(days => ${olderThanDays})`)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}
