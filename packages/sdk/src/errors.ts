// Errors as the API states them: every failure answers `{"detail": "..."}`,
// a validation failure `{"detail": [{loc, msg, type}]}` (422). The SDK throws
// them as these classes, so callers catch by kind and read `detail` as sent.

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/** Any non-2xx answer of the API. */
export class CodeplaneError extends Error {
  readonly status: number;
  /** The API's `detail`: a sentence, or (422) the list of validation issues. */
  readonly detail: string | ValidationIssue[];
  /** The server's X-Request-Id, to find the request in its log. */
  readonly requestId: string | null;
  /** Seconds the server asked to wait (429, 503), when it said. */
  readonly retryAfter: number | null;

  constructor(status: number, detail: string | ValidationIssue[], requestId: string | null, retryAfter: number | null) {
    super(`${status}: ${typeof detail === "string" ? detail : detail.map((i) => `${i.loc.join(".")}: ${i.msg}`).join("; ")}`);
    this.name = "CodeplaneError";
    this.status = status;
    this.detail = detail;
    this.requestId = requestId;
    this.retryAfter = retryAfter;
  }
}

/** 422: the request was refused as invalid; `issues` say where and why. */
export class ValidationError extends CodeplaneError {
  readonly issues: ValidationIssue[];
  constructor(issues: ValidationIssue[], requestId: string | null) {
    super(422, issues, requestId, null);
    this.name = "ValidationError";
    this.issues = issues;
  }
}

/** 401 or 403: no valid credential, or one without the scope the operation needs. */
export class AuthError extends CodeplaneError {
  constructor(status: number, detail: string, requestId: string | null) {
    super(status, detail, requestId, null);
    this.name = "AuthError";
  }
}

/** 404: no such resource in the caller's account (another account's is a 404 too). */
export class NotFoundError extends CodeplaneError {
  constructor(detail: string, requestId: string | null) {
    super(404, detail, requestId, null);
    this.name = "NotFoundError";
  }
}

/** Waiting for a run or an analysis took longer than the caller allowed. */
export class WaitTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not end within ${ms} ms`);
    this.name = "WaitTimeoutError";
  }
}

const isIssues = (d: unknown): d is ValidationIssue[] =>
  Array.isArray(d) && d.every((i) => typeof i === "object" && i !== null && Array.isArray((i as ValidationIssue).loc));

/** The error a non-2xx response stands for, from its status, body and headers. */
export function errorFrom(status: number, body: unknown, headers: Headers): CodeplaneError {
  const requestId = headers.get("x-request-id");
  const retry = Number(headers.get("retry-after"));
  const raw = typeof body === "object" && body !== null && "detail" in body ? body.detail : body;
  if (status === 422 && isIssues(raw)) return new ValidationError(raw, requestId);
  const detail = typeof raw === "string" ? raw : raw === undefined || raw === null ? `HTTP ${status}` : JSON.stringify(raw);
  if (status === 401 || status === 403) return new AuthError(status, detail, requestId);
  if (status === 404) return new NotFoundError(detail, requestId);
  return new CodeplaneError(status, detail, requestId, Number.isFinite(retry) && retry > 0 ? retry : null);
}
