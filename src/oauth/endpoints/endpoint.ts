import type { Context, Middleware } from "koa";
import { OAuthError } from "@node-oauth/oauth2-server";
import type { OAuthConfig } from "../../config.ts";
import type { Db } from "../../db/database.ts";
import type { Logger } from "../../logger.ts";
import { baseUrlOf } from "../base-url.ts";
import type { MetadataDocumentOptions } from "../clients.ts";
import type { TokenEngine } from "../engine.ts";
import { invalidRequest, OAuthProblem } from "../errors.ts";
import type { OidcSignIn } from "../oidc.ts";
import type { CsrfTokens } from "../secrets.ts";

// What every OAuth endpoint shares: its dependencies, the base URL check and
// the RFC 6749 error body. Each endpoint is its own module beside this one;
// router.ts only mounts them.

export interface EndpointDeps {
  db: Db;
  publicUrl: string | null;
  config: OAuthConfig;
  /** The oauth component's logger: the audit trail of sign-ins, consents, tokens. */
  audit: Logger;
  csrf: CsrfTokens;
  cimd: MetadataDocumentOptions;
  engine: TokenEngine;
  oidc: OidcSignIn | null;
  apiKeySignIn: boolean;
}

/** The request's base URL; invalid_request when the Host header is not a host name. */
export function baseOf(ctx: Context, publicUrl: string | null): string {
  const b = baseUrlOf(ctx, publicUrl);
  if (!b) throw invalidRequest("the Host header is not a host name");
  return b;
}

/** Accepted as `resource` (RFC 8707): the base URL, which covers /v1 and /mcp, or the MCP endpoint's own URL. The token's audience is the base URL either way. */
export function canonicalResource(value: string | undefined, baseUrl: string): string | null {
  if (value === undefined) return baseUrl;
  const v = value.replace(/\/$/, "");
  return v === baseUrl || v === `${baseUrl}/mcp` ? baseUrl : null;
}

function sendProblem(ctx: Context, err: unknown, logger: Logger): void {
  let status: number;
  let body: { error: string; error_description: string };
  let headers: Record<string, string> = {};
  if (err instanceof OAuthProblem) {
    status = err.status;
    body = err.body;
    headers = err.headers;
  } else if (err instanceof OAuthError && err.name !== "server_error") {
    status = err.code;
    body = { error: err.name, error_description: err.message };
    if (err.name === "invalid_client" && ctx.get("authorization")) {
      status = 401;
      headers = { "WWW-Authenticate": 'Basic realm="codeplane", charset="UTF-8"' };
    }
  } else {
    logger.error(
      { err: err instanceof OAuthError ? ((err as { inner?: unknown }).inner ?? err) : err, request_id: ctx.state.requestId, path: ctx.path },
      "OAuth endpoint failed",
    );
    status = 500;
    body = { error: "server_error", error_description: "An unexpected failure; the log has the request id." };
  }
  ctx.status = status;
  ctx.set(headers);
  ctx.set("Cache-Control", "no-store");
  ctx.body = body;
}

/** An OAuth endpoint: RFC 6749 error bodies, never the API's {"detail"}. */
export const endpoint =
  (audit: Logger, handler: (ctx: Context) => Promise<void>): Middleware =>
  async (ctx) => {
    try {
      await handler(ctx);
    } catch (err) {
      sendProblem(ctx, err, audit);
    }
  };
