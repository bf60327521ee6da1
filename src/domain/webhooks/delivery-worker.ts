import type { Db } from "../../db/database.ts";
import type { Logger } from "../../logger.ts";
import { DomainError } from "../errors.ts";
import { DrainLoop } from "../shared/drain-loop.ts";
import { claimDelivery, failDelivery, finishDelivery, pruneDeliveries, renewDeliveryLease, type DeliveryRow } from "./delivery-rows.ts";
import type { HandleOutcome } from "./handle.ts";

// Drains the delivery queue: claim one (a lease), handle it, record the
// outcome. Every replica runs one; the lease and SKIP LOCKED make sure a
// delivery has one handler at a time. The lease is renewed while handling
// goes on (a slow fetch is not taken over), so a replica that dies mid-way
// only delays its delivery by one lease.

export type DeliveryOutcome = "handled" | "skipped" | "retried" | "failed";

export interface DeliveryWorkerOptions {
  db: Db;
  logger: Logger;
  handle(row: DeliveryRow): Promise<HandleOutcome>;
  /** Counts each outcome by event. */
  count?(event: string, outcome: DeliveryOutcome): void;
  leaseSeconds?: number;
  pollMs?: number;
  maxAttempts?: number;
  retentionDays?: number;
}

const PRUNE_EVERY_MS = 60 * 60 * 1000;

/** 10 s, 20 s, 40 s ... up to 10 minutes. */
export const retryDelaySeconds = (attempt: number) => Math.min(600, 10 * 2 ** Math.max(0, attempt - 1));

/** Whether trying again can help: a refusal the domain gives for the input itself will give the same answer next time. */
function permanent(err: unknown): boolean {
  return err instanceof DomainError && err.kind !== "unavailable";
}

export class DeliveryWorker extends DrainLoop {
  readonly #o: DeliveryWorkerOptions & { leaseSeconds: number; maxAttempts: number; retentionDays: number };
  #lastPrune = 0;

  constructor(o: DeliveryWorkerOptions) {
    super({ name: "webhook deliveries", logger: o.logger, pollMs: o.pollMs ?? 2000, next: () => this.#next(), after: () => this.#prune() });
    this.#o = { leaseSeconds: 30, maxAttempts: 8, retentionDays: 30, ...o };
  }

  async #next(): Promise<boolean> {
    const row = await claimDelivery(this.#o.db, this.#o.leaseSeconds);
    if (!row) return false;
    await this.#one(row);
    return true;
  }

  async #prune(): Promise<void> {
    if (Date.now() - this.#lastPrune < PRUNE_EVERY_MS) return;
    this.#lastPrune = Date.now();
    const pruned = await pruneDeliveries(this.#o.db, this.#o.retentionDays);
    if (pruned) this.#o.logger.info({ pruned, retention_days: this.#o.retentionDays }, "pruned finished webhook deliveries past their retention");
  }

  async #one(row: DeliveryRow): Promise<void> {
    const { db, logger } = this.#o;
    const log = logger.child({ delivery_id: row.id, event: row.event, action: row.action, attempt: row.attempts });
    const lease = this.#o.leaseSeconds;
    const heartbeat = setInterval(
      () => {
        renewDeliveryLease(db, row.id, row.attempts, lease).catch((err: unknown) => log.warn({ err }, "could not renew the delivery's lease"));
      },
      (lease * 1000) / 3,
    );
    try {
      const outcome = await this.#o.handle(row);
      await finishDelivery(db, row.id, row.attempts, outcome.status, outcome.reason.slice(0, 2000));
      this.#o.count?.(row.event, outcome.status);
      log.info({ outcome: outcome.status, reason: outcome.reason }, "webhook delivery handled");
    } catch (err) {
      const reason = (err instanceof Error ? err.message : String(err)).slice(0, 2000);
      const giveUp = permanent(err) || row.attempts >= this.#o.maxAttempts;
      const retry = giveUp ? null : retryDelaySeconds(row.attempts);
      await failDelivery(db, row.id, row.attempts, reason, retry);
      this.#o.count?.(row.event, giveUp ? "failed" : "retried");
      if (giveUp) log.warn({ err, reason }, "webhook delivery failed; a redelivery from GitHub will try it again");
      else log.warn({ err, reason, retry_in_seconds: retry }, "webhook delivery failed; trying again later");
    } finally {
      clearInterval(heartbeat);
    }
  }
}
