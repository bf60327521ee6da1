import { verify } from "@octokit/webhooks-methods";
import type { Db } from "../../db/database.ts";
import { badRequest } from "../errors.ts";
import { recordDelivery } from "./delivery-rows.ts";

// Accepting a GitHub webhook: the signature is the authentication, checked
// over the raw bytes before anything is parsed or written; then the delivery
// is recorded (the durable queue) and handled later by the delivery worker.

export interface WebhookSecrets {
  current: string;
  /** Accepted too, while GitHub is switched over to the current one. */
  old: readonly string[];
}

export interface IncomingDelivery {
  signature: string | undefined;
  event: string | undefined;
  deliveryId: string | undefined;
  body: Buffer;
}

export type IntakeResult = { outcome: "unsigned" } | { outcome: "queued" | "requeued" | "duplicate"; id: string; event: string; action: string | null };

const SIGNATURE = /^sha256=[0-9a-f]{64}$/;
const DELIVERY_ID = /^[A-Za-z0-9._-]{1,100}$/;
const EVENT = /^[a-z_]{1,64}$/;

export async function signatureMatches(secrets: WebhookSecrets, body: Buffer, signature: string | undefined): Promise<boolean> {
  if (!signature || !SIGNATURE.test(signature)) return false;
  // verify() compares in constant time; it takes the payload as text, which must be the exact bytes GitHub signed.
  const text = body.toString("utf8");
  if (!Buffer.from(text, "utf8").equals(body)) return false;
  for (const secret of [secrets.current, ...secrets.old]) if (await verify(secret, text, signature)) return true;
  return false;
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

export async function acceptDelivery(db: Db, secrets: WebhookSecrets, d: IncomingDelivery): Promise<IntakeResult> {
  if (!(await signatureMatches(secrets, d.body, d.signature))) return { outcome: "unsigned" };
  // Signed by GitHub (or whoever holds the secret): now a malformed delivery is a 400 that says why.
  if (!d.event || !EVENT.test(d.event)) throw badRequest("X-GitHub-Event is missing or not an event name");
  if (!d.deliveryId || !DELIVERY_ID.test(d.deliveryId)) throw badRequest("X-GitHub-Delivery is missing or not a delivery id");
  let payload: unknown;
  try {
    payload = JSON.parse(d.body.toString("utf8"));
  } catch {
    throw badRequest("The body is not JSON (the webhook's content type must be application/json)");
  }
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
