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

/** `{base_url}/.well-known/oauth-protected-resource` (RFC 9728), where a client finds how to get a token. */
const resourceMetadata = (baseUrl: string) => `resource_metadata="${baseUrl}/.well-known/oauth-protected-resource"`;

/**
 * 401; with the request's base URL, the challenge names the protected-resource
 * metadata (RFC 9728 section 5.1). `invalidToken`: a token was sent and is not
 * valid (unknown, revoked, expired, another audience), which RFC 6750 section 3
 * says with `error="invalid_token"` (a client refreshes or signs in again); a
 * request without one gets no error code. `scope`: the scopes a client should
 * ask for (RFC 6750 section 3; /mcp names them, as MCP's authorization spec asks).
 */
export const notAuthenticated = (baseUrl?: string | null, invalidToken = false, scope?: string) => {
  const params = [...(invalidToken ? ['error="invalid_token"'] : []), ...(scope ? [`scope="${scope}"`] : []), ...(baseUrl ? [resourceMetadata(baseUrl)] : [])];
  return new HttpError(401, "Not authenticated", { "WWW-Authenticate": params.length ? `Bearer ${params.join(", ")}` : "Bearer" });
};

/** 403 for a credential without the scope (RFC 6750 section 3.1: insufficient_scope, with the scope needed). */
export const missingScope = (scope: string, baseUrl?: string | null) =>
  new HttpError(403, `Missing scope: ${scope}`, {
    "WWW-Authenticate": `Bearer error="insufficient_scope", scope="${scope}"${baseUrl ? `, ${resourceMetadata(baseUrl)}` : ""}`,
  });
