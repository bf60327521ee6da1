import type { Db } from "../../db/database.ts";
import type { Logger } from "../../logger.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import { DrainLoop } from "../shared/drain-loop.ts";
import { iso } from "../shared/time.ts";
import { nextAttemptAt, type BackoffPolicy } from "./backoff.ts";
import type { SubjectKind } from "./events.ts";
import { endpointAad } from "./notifications.ts";
import { claimNotification, endpointById, keepPayload, pruneNotificationDeliveries, recordAttempt, type NotificationDeliveryRow } from "./notification-rows.ts";
import { sendAttempt } from "./sender.ts";
import { webhookHeaders } from "./signing.ts";

// Sends queued notification deliveries. Every replica runs `concurrency`
// drain loops over the one queue in Postgres; a claim is a lease longer than
// an attempt can take, so while a replica sends, no other sends the same
// delivery. A replica that dies mid-attempt leaves its delivery to be claimed
// again once the lease runs out: delivery is at least once, and receivers
// deduplicate on webhook-id.

export interface NotificationWorkerOptions {
  db: Db;
  logger: Logger;
  box: SecretBox;
  /** The run or analysis as the API shows it, or null when it is gone (deleted before the first attempt). */
  render(kind: SubjectKind, accountId: string, id: string): Promise<unknown>;
  concurrency: number;
  timeoutMs: number;
  maxResponseBytes: number;
  allowLocal: boolean;
  backoff: BackoffPolicy;
  retryWindowSeconds: number;
  retentionDays: number;
  pollMs?: number;
  /** Injected for tests; Math.random otherwise. */
  random?: () => number;
}

const PRUNE_EVERY_MS = 60 * 60 * 1000;

/** The body of a delivery: the event, when it happened, and its subject as the API shows it. */
export function deliveryBody(row: Pick<NotificationDeliveryRow, "event" | "occurred_at" | "subject_kind" | "subject_id">, data: unknown): string {
  const status = row.event.slice(row.event.indexOf(".") + 1);
  const gone = row.subject_kind === "run" ? { run_id: row.subject_id, status } : { id: row.subject_id, status };
  return JSON.stringify({ type: row.event, timestamp: iso(row.occurred_at), data: data ?? gone });
}

export class NotificationWorker {
  readonly #o: NotificationWorkerOptions;
  readonly #loops: DrainLoop[];
  readonly #leaseSeconds: number;
  #lastPrune = 0;

  constructor(o: NotificationWorkerOptions) {
    this.#o = o;
    // Longer than one attempt can take (its timeout), so a live claim is never taken over.
    this.#leaseSeconds = Math.ceil(o.timeoutMs / 1000) + 30;
    // The first loop looks every pollMs; the others are woken when it finds work (and look now and then
    // themselves), so an idle replica asks the queue about once per poll, not once per loop.
    const pollMs = o.pollMs ?? 2000;
    this.#loops = Array.from(
      { length: o.concurrency },
      (_, i) =>
        new DrainLoop({
          name: "notification deliveries",
          logger: o.logger,
          pollMs: i === 0 ? pollMs : pollMs * 15,
          next: () => this.#next(),
          ...(i === 0 && { after: () => this.#prune() }),
        }),
    );
  }

  start(): void {
    for (const l of this.#loops) l.start();
  }

  /** Looks at the queue now (a redelivery, or a test). */
  wake(): void {
    for (const l of this.#loops) l.wake();
  }

  /** Stops claiming; attempts in flight finish and are recorded first. */
  async stop(): Promise<void> {
    await Promise.all(this.#loops.map((l) => l.stop()));
  }

  async #next(): Promise<boolean> {
    const row = await claimNotification(this.#o.db, this.#leaseSeconds, this.#o.retryWindowSeconds);
    if (!row) return false;
    // There may be more: the other loops look too (a wake while draining makes a loop look again afterwards).
    for (const l of this.#loops) l.wake();
    try {
      await this.#attempt(row);
    } catch (err) {
      // Not the endpoint's failure (the body could not be rendered, the secret not opened): recorded as an attempt, retried in its window.
      const now = new Date();
      const nextAt = nextAttemptAt(row.attempts, now, row.retry_until ?? now, this.#o.backoff, (this.#o.random ?? Math.random)());
      const error = `could not send: ${err instanceof Error ? err.message : String(err)}`.slice(0, 500);
      await recordAttempt(this.#o.db, row.id, row.attempts, { responseStatus: null, error, delivered: false, nextAt });
      this.#o.logger.error({ err, delivery_id: row.id, attempt: row.attempts }, "notification attempt could not be made");
    }
    return true;
  }

  async #prune(): Promise<void> {
    if (Date.now() - this.#lastPrune < PRUNE_EVERY_MS) return;
    this.#lastPrune = Date.now();
    const pruned = await pruneNotificationDeliveries(this.#o.db, this.#o.retentionDays);
    if (pruned) this.#o.logger.info({ pruned, retention_days: this.#o.retentionDays }, "pruned finished notification deliveries past their retention");
  }

  async #attempt(row: NotificationDeliveryRow): Promise<void> {
    const { db, logger } = this.#o;
    const log = logger.child({ delivery_id: row.id, endpoint_id: row.endpoint_id, event: row.event, attempt: row.attempts });
    const endpoint = await endpointById(db, row.endpoint_id);
    if (!endpoint) return; // deleted meanwhile: its deliveries went with it
    const now = new Date();
    if (!endpoint.enabled) {
      await recordAttempt(db, row.id, row.attempts, { responseStatus: null, error: "the endpoint is disabled", delivered: false, nextAt: null });
      log.info("notification not sent: its endpoint is disabled");
      return;
    }
    const payload = row.payload ?? (await keepPayload(db, row.id, deliveryBody(row, await this.#o.render(row.subject_kind, row.account_id, row.subject_id))));
    const secret = this.#o.box.open({ keyId: endpoint.key_id, data: endpoint.secret_ciphertext }, endpointAad(endpoint));
    const result = await sendAttempt(endpoint.url, webhookHeaders(secret, row.id, payload, now), payload, {
      timeoutMs: this.#o.timeoutMs,
      maxResponseBytes: this.#o.maxResponseBytes,
      allowLocal: this.#o.allowLocal,
    });
    const nextAt = result.ok ? null : nextAttemptAt(row.attempts, new Date(), row.retry_until ?? now, this.#o.backoff, (this.#o.random ?? Math.random)());
    const recorded = await recordAttempt(db, row.id, row.attempts, { responseStatus: result.status, error: result.error, delivered: result.ok, nextAt });
    const fields = { response_status: result.status, error: result.error, ...(nextAt && { next_attempt_at: nextAt.toISOString() }) };
    if (!recorded) log.warn(fields, "notification attempt finished after its claim was taken over; its outcome was not recorded");
    else if (result.ok) log.info(fields, "notification delivered");
    else if (nextAt) log.info(fields, "notification attempt failed; trying again later");
    else log.warn(fields, "notification failed for good: its retry window is over");
  }
}
