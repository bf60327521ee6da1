import { ApiException } from "@kubernetes/client-node";
import { NETWORK_CODES as CONNECTION_CODES } from "../domain/infrastructure-errors.ts";

// Whether a failed reconcile may succeed later by itself: a server away or
// overloaded, a connection dropped, a conflict with a concurrent writer. Those
// are retried without limit; anything else (a bug, data that can never be
// stored, a request the API server refuses) counts towards giving up.

/** A connection that failed, dropped or timed out (what the API answers 503 for), a name that did not resolve, an aborted call. */
const NETWORK_CODES = new Set([...CONNECTION_CODES, "ENOTFOUND", "ABORT_ERR"]);

export function isTransient(err: unknown): boolean {
  if (err instanceof ApiException) return err.code === 409 || err.code === 429 || err.code >= 500 || err.code === 0;
  if (!err || typeof err !== "object") return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string") {
    if (NETWORK_CODES.has(code)) return true;
    // Postgres: connection exceptions, insufficient resources, operator intervention (restart, shutdown), serialization/deadlock.
    if (/^(08|53|57|40)/.test(code) && code.length === 5) return true;
  }
  const cause = (err as { cause?: unknown }).cause;
  if (cause && cause !== err && isTransient(cause)) return true;
  const message = err instanceof Error ? err.message : "";
  return /ECONNREFUSED|ECONNRESET|socket hang up|timed? ?out|Connection terminated|connection.*(closed|ended)/i.test(message);
}
