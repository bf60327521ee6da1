import type { Db } from "../../db/database.ts";
import { badRequest } from "../errors.ts";
import { recordDelivery } from "./delivery-rows.ts";
import { nestsDeeperThan } from "./json-depth.ts";
import type { SignatureCheck } from "./signature.ts";

// Accepting a GitHub webhook: the signature is the authentication, checked
// over the raw bytes as they arrive (./signature.ts) before anything is
// parsed or written; then the delivery is recorded (the durable queue) and
// handled later by the delivery worker.

export type { WebhookSecrets } from "./signature.ts";

export interface IncomingDelivery {
  event: string | undefined;
  deliveryId: string | undefined;
  body: Buffer;
  /** Fed with exactly `body`, as it was read. */
  signature: SignatureCheck;
}

export type IntakeResult = { outcome: "unsigned" } | { outcome: "queued" | "requeued" | "duplicate"; id: string; event: string; action: string | null };

export const DELIVERY_ID = /^[A-Za-z0-9._-]{1,100}$/;
export const EVENT = /^[a-z_]{1,64}$/;

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The signed body as a JSON value; a 400 that says why when it is not one codeplane can keep. */
function parsePayload(body: Buffer, maxDepth: number): unknown {
  // Refused, not lost: GitHub shows the delivery as failed with this detail.
  if (nestsDeeperThan(body, maxDepth)) throw badRequest(`The body nests JSON more than ${maxDepth} levels deep (CODEPLANE_WEBHOOK_MAX_DEPTH)`);
  try {
    return JSON.parse(utf8.decode(body));
  } catch {
    throw badRequest("The body is not JSON (the webhook's content type must be application/json)");
  }
}

/**
 * Stored as jsonb, which refuses NUL and unpaired surrogates in strings:
 * such characters (in values or keys) are dropped or replaced rather than the
 * delivery being lost. GitHub's text rarely has them; a commit message can.
 */
export function storableJson(this: unknown, _key: string, value: unknown): unknown {
  const clean = (s: string) => s.replaceAll("\u0000", "").toWellFormed();
  if (typeof value === "string") return clean(value);
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[clean(k)] = v;
    return out;
  }
  return value;
}

export async function acceptDelivery(db: Db, d: IncomingDelivery, limits: { maxDepth: number }): Promise<IntakeResult> {
  if (!d.signature.matches()) return { outcome: "unsigned" };
  // Signed by GitHub (or whoever holds the secret): now a malformed delivery is a 400 that says why.
  if (!d.event || !EVENT.test(d.event)) throw badRequest("X-GitHub-Event is missing or not an event name");
  if (!d.deliveryId || !DELIVERY_ID.test(d.deliveryId)) throw badRequest("X-GitHub-Delivery is missing or not a delivery id");
  const payload = parsePayload(d.body, limits.maxDepth);
  const p = payload && typeof payload === "object" && !Array.isArray(payload) ? (payload as Record<string, unknown>) : {};
  const action = typeof p.action === "string" ? p.action.slice(0, 100) : null;
  const installation = p.installation as { id?: unknown } | undefined;
  const installationId = typeof installation?.id === "number" && Number.isSafeInteger(installation.id) ? installation.id : null;
  const repository = p.repository as { full_name?: unknown } | undefined;
  const repositoryFullName = typeof repository?.full_name === "string" ? repository.full_name.slice(0, 300) : null;
  const stored = JSON.stringify(payload, storableJson);
  const outcome = await recordDelivery(db, { id: d.deliveryId, event: d.event, action, installationId, repositoryFullName, payload: stored });
  return { outcome, id: d.deliveryId, event: d.event, action };
}
