import type { ValidationIssue } from "../domain/errors.ts";

/** An error the API answers with its own status and a `{"detail": ...}` body. */
export class HttpError extends Error {
  readonly status: number;
  readonly detail: string | ValidationIssue[];
  readonly headers: Record<string, string>;

  constructor(status: number, detail: string | ValidationIssue[], headers: Record<string, string> = {}) {
    super(typeof detail === "string" ? detail : "Validation failed");
    this.name = "HttpError";
    this.status = status;
    this.detail = detail;
    this.headers = headers;
  }
}

export const notAuthenticated = () => new HttpError(401, "Not authenticated", { "WWW-Authenticate": "Bearer" });
