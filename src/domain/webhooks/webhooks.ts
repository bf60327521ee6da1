import type { Db } from "../../db/database.ts";
import { unavailable } from "../errors.ts";
import { listDeliveries, type DeliveryRow } from "./delivery-rows.ts";
import { acceptDelivery, EVENT, type IncomingDelivery } from "./intake.ts";
import { signatureCheck, type SignatureCheck, type WebhookSecrets } from "./signature.ts";
import type { Delivery } from "./webhooks.schemas.ts";

// The webhook endpoints' service: accept (verify, record, wake the worker)
// and the operator's view of recent deliveries.

export interface WebhookServiceDeps {
  /** null when no GitHub App is configured: the endpoint answers 503 naming what is missing. */
  secrets: WebhookSecrets | null;
  missingSettings: readonly string[];
  /** A delivery was queued by this process: handle it now rather than at the next poll. */
  onQueued(): void;
  count?(event: string, outcome: "accepted" | "duplicate" | "redelivered" | "unsigned"): void;
  /** Deeper JSON is refused with 400 (CODEPLANE_WEBHOOK_MAX_DEPTH). */
  maxDepth?: number;
}

/** GitHub's payloads nest about ten levels; a hundred leaves room for user-defined parts (repository_dispatch's client_payload). */
export const DEFAULT_MAX_DEPTH = 100;

export type AcceptAnswer = { status: 401 } | { status: 200 | 202; id: string; queued: boolean };

export class WebhookService {
  readonly #d: WebhookServiceDeps;

  constructor(d: WebhookServiceDeps) {
    this.#d = d;
  }

  get configured(): boolean {
    return this.#d.secrets !== null;
  }

  requireConfigured(): WebhookSecrets {
    if (!this.#d.secrets) throw unavailable(`The GitHub integration is not configured on this server: set ${this.#d.missingSettings.join(", ")}`);
    return this.#d.secrets;
  }

  /** The check to feed the body to as it is read; null (refuse before reading) when the header is not a well-formed signature. */
  signatureCheck(signature: string | undefined): SignatureCheck | null {
    return signatureCheck(this.requireConfigured(), signature);
  }

  /** Counts a delivery refused as unsigned before its body was read. */
  countUnsigned(event: string | undefined): void {
    this.#d.count?.(event && EVENT.test(event) ? event : "unknown", "unsigned");
  }

  async accept(db: Db, delivery: IncomingDelivery): Promise<AcceptAnswer> {
    this.requireConfigured();
    const r = await acceptDelivery(db, delivery, { maxDepth: this.#d.maxDepth ?? DEFAULT_MAX_DEPTH });
    if (r.outcome === "unsigned") {
      this.countUnsigned(delivery.event);
      return { status: 401 };
    }
    this.#d.count?.(r.event, r.outcome === "duplicate" ? "duplicate" : r.outcome === "requeued" ? "redelivered" : "accepted");
    if (r.outcome === "duplicate") return { status: 200, id: r.id, queued: false };
    this.#d.onQueued();
    return { status: 202, id: r.id, queued: true };
  }

  async list(db: Db, accountId: string, page: { limit: number; cursor?: string | undefined }): Promise<{ items: Delivery[]; next_cursor: string | null }> {
    const before = page.cursor ? decodeDeliveryCursor(page.cursor) : undefined;
    const rows = await listDeliveries(db, { accountId, limit: page.limit + 1, before: before ?? undefined });
    const more = rows.length > page.limit;
    const kept = more ? rows.slice(0, page.limit) : rows;
    const last = kept[kept.length - 1];
    return { items: kept.map(toDelivery), next_cursor: more && last ? encodeDeliveryCursor(last) : null };
  }
}

function toDelivery(r: DeliveryRow): Delivery {
  return {
    id: r.id,
    event: r.event,
    action: r.action,
    installation_id: r.installation_id === null ? null : Number(r.installation_id),
    repository: r.repository_full_name,
    status: r.status,
    error: r.reason,
    attempts: r.attempts,
    received_at: r.received_at.toISOString(),
    finished_at: r.finished_at ? r.finished_at.toISOString() : null,
  };
}

/** Newest first by arrival, then id: the cursor holds both (opaque to clients). */
export function encodeDeliveryCursor(r: { received_at: Date; id: string }): string {
  return Buffer.from(`d1:${r.received_at.toISOString()}|${r.id}`, "utf8").toString("base64url");
}

export function decodeDeliveryCursor(cursor: string): { receivedAt: Date; id: string } | null {
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(cursor)) return null;
  const m = /^d1:(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)\|([A-Za-z0-9._-]{1,100})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!m) return null;
  const at = new Date(m[1]!);
  return Number.isNaN(at.getTime()) ? null : { receivedAt: at, id: m[2]! };
}
