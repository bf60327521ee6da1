import { sql, type Selectable } from "kysely";
import type { Db } from "../../db/database.ts";
import type { NotificationDeliveriesTable, NotificationEndpointsTable } from "../../db/schema.ts";
import { newId } from "../shared/ids.ts";
import { keysetPage } from "../shared/keyset.ts";
import type { PageRequest } from "../shared/pagination.ts";
import type { NotificationEvent, SubjectKind } from "./events.ts";

// The SQL of notifications (migration 0016): endpoints, and the delivery
// queue drained like the GitHub intake's (delivery-rows.ts): a claim is a
// lease taken with FOR UPDATE SKIP LOCKED, and every later write to the row
// names the claim (its attempt number), so a replica whose lease ran out
// cannot overwrite the attempt of the one that took over.

export type EndpointRow = Selectable<NotificationEndpointsTable>;
export type NotificationDeliveryRow = Selectable<NotificationDeliveriesTable>;

export interface TerminalEvent {
  accountId: string;
  kind: SubjectKind;
  subjectId: string;
  event: NotificationEvent;
  occurredAt: Date;
}

/**
 * Queues the event for every enabled endpoint of the account subscribed to it:
 * called inside the transaction that records the terminal transition, so the
 * queue and the status commit together. Returns how many were queued.
 */
export async function enqueueEvent(trx: Db, e: TerminalEvent): Promise<number> {
  const endpoints = await trx
    .selectFrom("notification_endpoints")
    .select("id")
    .where("account_id", "=", e.accountId)
    .where("enabled", "=", true)
    .where(sql<boolean>`${e.event} = any(events)`)
    .execute();
  if (endpoints.length === 0) return 0;
  await trx
    .insertInto("notification_deliveries")
    .values(
      endpoints.map((ep) => ({
        id: newId(),
        endpoint_id: ep.id,
        account_id: e.accountId,
        event: e.event,
        subject_kind: e.kind,
        subject_id: e.subjectId,
        occurred_at: e.occurredAt,
        status: "queued" as const,
      })),
    )
    .execute();
  return endpoints.length;
}

/**
 * Claims the oldest due delivery: queued and due, or sending with a lease that
 * ran out (its replica died mid-attempt: at-least-once). The lease outlasts an
 * attempt's timeout, so a live claim is never taken over. The first attempt
 * (after creation or a redelivery) starts the retry window.
 */
export async function claimNotification(db: Db, leaseSeconds: number, retryWindowSeconds: number): Promise<NotificationDeliveryRow | undefined> {
  const r = await sql<NotificationDeliveryRow>`
    update notification_deliveries
       set status = 'sending', attempts = attempts + 1, last_attempt_at = now(),
           available_at = now() + make_interval(secs => ${leaseSeconds}),
           retry_until = coalesce(retry_until, now() + make_interval(secs => ${retryWindowSeconds}))
     where id = (
       select id from notification_deliveries
        where status in ('queued', 'sending') and available_at <= now()
        order by available_at, id
        limit 1
        for update skip locked)
    returning *`.execute(db);
  return r.rows[0];
}

const claimed = (db: Db, id: string, attempts: number) =>
  db.updateTable("notification_deliveries").where("id", "=", id).where("status", "=", "sending").where("attempts", "=", attempts);

/** Keeps the body rendered by the first attempt (only if none is kept yet); the kept one wins. */
export async function keepPayload(db: Db, id: string, payload: string): Promise<string> {
  await db.updateTable("notification_deliveries").set({ payload }).where("id", "=", id).where("payload", "is", null).execute();
  const row = await db.selectFrom("notification_deliveries").select("payload").where("id", "=", id).executeTakeFirst();
  return row?.payload ?? payload;
}

export interface AttemptRecord {
  responseStatus: number | null;
  error: string | null;
  /** Delivered (2xx); otherwise retried at nextAt, or failed for good when null. */
  delivered: boolean;
  nextAt: Date | null;
}

/** Records the claimed attempt's outcome; false when the claim was no longer this one's. */
export async function recordAttempt(db: Db, id: string, attempts: number, a: AttemptRecord): Promise<boolean> {
  const common = { response_status: a.responseStatus, last_error: a.error };
  const set = a.delivered
    ? { ...common, status: "delivered" as const, delivered_at: sql<Date>`now()` }
    : a.nextAt
      ? { ...common, status: "queued" as const, available_at: a.nextAt }
      : { ...common, status: "failed" as const };
  const r = await claimed(db, id, attempts).set(set).executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

export function findEndpoint(db: Db, accountId: string, id: string): Promise<EndpointRow | undefined> {
  return db.selectFrom("notification_endpoints").selectAll().where("id", "=", id).where("account_id", "=", accountId).executeTakeFirst();
}

export function endpointById(db: Db, id: string): Promise<EndpointRow | undefined> {
  return db.selectFrom("notification_endpoints").selectAll().where("id", "=", id).executeTakeFirst();
}

export function listEndpointRows(db: Db, accountId: string, page: PageRequest): Promise<EndpointRow[]> {
  return keysetPage(db.selectFrom("notification_endpoints").selectAll().where("account_id", "=", accountId), page).execute();
}

export async function countEndpoints(db: Db, accountId: string): Promise<number> {
  const r = await db
    .selectFrom("notification_endpoints")
    .select((eb) => eb.fn.countAll<string>().as("n"))
    .where("account_id", "=", accountId)
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

export function listDeliveryRows(db: Db, accountId: string, endpointId: string, page: PageRequest): Promise<NotificationDeliveryRow[]> {
  return keysetPage(
    db.selectFrom("notification_deliveries").selectAll().where("account_id", "=", accountId).where("endpoint_id", "=", endpointId),
    page,
  ).execute();
}

export function findDelivery(db: Db, accountId: string, endpointId: string, id: string): Promise<NotificationDeliveryRow | undefined> {
  return db
    .selectFrom("notification_deliveries")
    .selectAll()
    .where("id", "=", id)
    .where("account_id", "=", accountId)
    .where("endpoint_id", "=", endpointId)
    .executeTakeFirst();
}

/** Queues a finished delivery again, now, with a fresh retry window; undefined when it is still queued or being sent. */
export function requeueDelivery(db: Db, accountId: string, endpointId: string, id: string): Promise<NotificationDeliveryRow | undefined> {
  return db
    .updateTable("notification_deliveries")
    .set({ status: "queued", available_at: sql<Date>`now()`, retry_until: null, delivered_at: null })
    .where("id", "=", id)
    .where("account_id", "=", accountId)
    .where("endpoint_id", "=", endpointId)
    .where("status", "in", ["delivered", "failed"])
    .returningAll()
    .executeTakeFirst();
}

/** Finished deliveries older than the retention go; unfinished ones are never pruned. */
export async function pruneNotificationDeliveries(db: Db, olderThanDays: number): Promise<number> {
  const r = await db
    .deleteFrom("notification_deliveries")
    .where("status", "in", ["delivered", "failed"])
    .where("created_at", "<", sql<Date>`now() - make_interval(days => ${olderThanDays})`)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}
