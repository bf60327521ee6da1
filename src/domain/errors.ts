// Domain errors carry an HTTP-meaningful kind so the API layer can map them
// without the domain importing Koa. Messages are safe to show to clients.

export type ErrorKind = "bad_request" | "not_found" | "conflict" | "forbidden" | "unavailable" | "payload_too_large" | "too_many_requests";

export class DomainError extends Error {
  readonly kind: ErrorKind;
  /** For "unavailable" and "too_many_requests": when trying again makes sense (sent as Retry-After). */
  readonly retryAfterSeconds: number | undefined;
  constructor(kind: ErrorKind, message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "DomainError";
    this.kind = kind;
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }
}

export const notFound = (what: string) => new DomainError("not_found", `${what} not found`);
export const conflict = (message: string) => new DomainError("conflict", message);
export const badRequest = (message: string) => new DomainError("bad_request", message);
export const unavailable = (message: string, cause?: unknown) => new DomainError("unavailable", message, { cause });

/** One item of a 422 body, in the FastAPI/pydantic vocabulary the contract uses. */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** A validation failure found by domain logic (not by a zod schema), answered as 422. */
export class DomainValidationError extends Error {
  readonly issues: ValidationIssue[];
  constructor(issues: ValidationIssue[]) {
    super(issues.map((i) => `${i.loc.join(".")}: ${i.msg}`).join("; "));
    this.name = "DomainValidationError";
    this.issues = issues;
  }
}
