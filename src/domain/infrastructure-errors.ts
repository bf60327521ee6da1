import { DomainError } from "./errors.ts";

// What the service depends on (Postgres, the Kubernetes API server, git, the
// file system) fails in a few known ways under load: a pool with no free
// connection, a serialization failure, an API server throttling or restarting,
// a connection reset, no file descriptor or disk left. None is a bug in the
// request or in codeplane, and a client can do something about each (try
// again, or re-read a resource changed meanwhile), so each is answered 503 with
// Retry-After, or 409, with a detail that names the class and nothing of the
// infrastructure. Anything not recognised here stays a 500 (a bug to fix).
// The errors are recognised by shape, not class, so the domain needs neither
// pg nor the Kubernetes client (docs/users/api-behaviour.md lists them).

/** Seconds a client should wait before retrying each transient class. */
const RETRY = { database: 2, kubernetes: 5, network: 2, resources: 10 } as const;

/** errno and undici codes of a connection that failed, dropped or timed out (the controller retries them too). */
export const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

/** This process ran out of something (descriptors, memory, processes, disk). */
const RESOURCE_CODES = new Set(["EMFILE", "ENFILE", "EAGAIN", "ENOMEM", "ENOSPC", "EBUSY"]);

/** pg-pool and pg say these in prose only (no code): no connection free within connectionTimeoutMillis, or the server went away. */
const DATABASE_MESSAGES =
  /timeout exceeded when trying to connect|Connection terminated (unexpectedly|due to connection timeout)|Client has encountered a connection error/i;

const unavailableFor = (message: string, retryAfterSeconds: number, cause: unknown) => new DomainError("unavailable", message, { cause, retryAfterSeconds });

const DB_BUSY = "The database is busy or was unavailable; try again shortly";
const DB_CONCURRENT = "A concurrent change to the same data conflicted with this request; try again";

/** A Postgres SQLSTATE (pg's DatabaseError, PGlite's): the classes that say "not now" or "changed meanwhile". */
function fromSqlState(code: string, err: unknown): DomainError | null {
  // 40001 serialization failure, 40P01 deadlock: repeating the request succeeds.
  if (code.startsWith("40")) return unavailableFor(DB_CONCURRENT, 1, err);
  // 08 connection exceptions, 53 insufficient resources (too many connections), 57 operator intervention
  // (statement timeout, shutdown, restart), 55P03 lock not available.
  if (/^(08|53|57)/.test(code) || code === "55P03") return unavailableFor(DB_BUSY, RETRY.database, err);
  // 23505 unique violation, 23503 foreign key violation: a row created or removed by a concurrent request.
  if (code === "23505" || code === "23503")
    return new DomainError("conflict", "The resource was created or removed by a concurrent request; read it again", { cause: err });
  return null;
}

/** A Kubernetes API server's answer (the client's ApiException: a numeric `code`, with `body` and `headers`). */
function fromApiStatus(code: number, headers: unknown, err: unknown): DomainError {
  if (code === 409)
    return new DomainError("conflict", "A concurrent change to the workload's Kubernetes object conflicted with this request; read it again and retry", {
      cause: err,
    });
  const retryHeader = Number((headers as Record<string, unknown> | null)?.["retry-after"]);
  const retry = Number.isFinite(retryHeader) && retryHeader >= 1 ? Math.min(retryHeader, 60) : RETRY.kubernetes;
  if (code === 429) return unavailableFor("The Kubernetes API server is throttling requests; try again later", retry, err);
  if (code === 0 || code >= 500) return unavailableFor("The Kubernetes API server failed or was unavailable; try again later", retry, err);
  // 401/403 (RBAC, quota), 404 (CRD missing), 422 (admission): the installation's problem, not the request's.
  return unavailableFor("Kubernetes refused to create or change the workload (see the service's log); try again later", retry, err);
}

function isApiException(err: object): err is { code: number; headers?: unknown } {
  const e = err as { code?: unknown; body?: unknown; headers?: unknown };
  return typeof e.code === "number" && "body" in e && "headers" in e;
}

function classifyOne(err: unknown): DomainError | null {
  if (!err || typeof err !== "object") return null;
  if (isApiException(err)) return fromApiStatus(err.code, err.headers, err);
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string") {
    if (NETWORK_CODES.has(code)) return unavailableFor("A service this request needs did not answer or dropped the connection; try again", RETRY.network, err);
    if (RESOURCE_CODES.has(code)) return unavailableFor("The server is short of resources right now; try again later", RETRY.resources, err);
    if (/^[0-9A-Z]{5}$/.test(code) && /^[0-9]{2}/.test(code)) return fromSqlState(code, err);
  }
  const name = (err as { name?: unknown }).name;
  if (name === "TimeoutError") return unavailableFor("A service this request needs did not answer in time; try again", RETRY.network, err);
  if (err instanceof Error && DATABASE_MESSAGES.test(err.message)) return unavailableFor(DB_BUSY, RETRY.database, err);
  return null;
}

/**
 * The contract's answer to an infrastructure failure: a DomainError (503 with
 * retryAfterSeconds, or 409), or null for anything else. Looks through `cause`
 * and AggregateError's `errors` (a connect that tried several addresses), at
 * most a few levels deep.
 */
export function classifyInfrastructureError(err: unknown, depth = 0): DomainError | null {
  if (depth > 4 || err instanceof DomainError) return null;
  const own = classifyOne(err);
  if (own) return own;
  if (!err || typeof err !== "object") return null;
  const nested = [(err as { cause?: unknown }).cause, ...(err instanceof AggregateError ? (err.errors as unknown[]) : [])];
  for (const inner of nested) {
    if (inner === err) continue;
    const found = classifyInfrastructureError(inner, depth + 1);
    if (found) return found;
  }
  return null;
}
