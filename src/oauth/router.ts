import Router from "@koa/router";
import type { Middleware } from "koa";
import type { Db } from "../db/database.ts";
import type { OAuthConfig } from "../config.ts";
import type { Logger } from "../logger.ts";
import { isMetadataDocumentId, type MetadataDocumentOptions } from "./clients.ts";
import { TokenEngine } from "./engine.ts";
import { OAuthProblem } from "./errors.ts";
import { readForm, singleValues } from "./http.ts";
import { errorPage, pageCsp } from "./pages.ts";
import { OIDC_CALLBACK_PATH, type OidcSignIn } from "./oidc.ts";
import { CsrfTokens } from "./secrets.ts";
import { sameOrigin } from "./same-origin.ts";
import { MetadataFetchGate } from "./metadata-fetches.ts";
import { authorize } from "./endpoints/authorize.ts";
import { authorizationServerMetadata, protectedResourceMetadata } from "./endpoints/discovery.ts";
import { endpoint, type EndpointDeps } from "./endpoints/endpoint.ts";
import { introspect } from "./endpoints/introspect.ts";
import { oidcCallback } from "./endpoints/oidc-callback.ts";
import { register } from "./endpoints/register.ts";
import { revoke } from "./endpoints/revoke.ts";
import { token } from "./endpoints/token.ts";

// The authorization server's routes. Each endpoint is its own module in
// endpoints/; this file builds what they share and mounts them.

export { canonicalResource } from "./endpoints/endpoint.ts";
export { sessionCookieName, startOidcFlow } from "./endpoints/cookies.ts";

/**
 * The per-address rate limits the API layer applies, one budget each. `revoke`,
 * `introspect` and `authorize` exist because a metadata-document client_id
 * there makes this server fetch a URL: `authorize` is charged only for such a
 * client_id (a person's page views with a registered client are not counted).
 */
export interface OAuthLimits {
  token: Middleware;
  register: Middleware;
  signIn: Middleware;
  revoke: Middleware;
  introspect: Middleware;
  authorize: Middleware;
}

export interface OAuthRouterOptions {
  db: Db;
  publicUrl: string | null;
  config: OAuthConfig;
  /** Key material for CSRF tokens (derived from the encryption key). */
  csrfSecret: Buffer;
  logger: Logger;
  /** Rate limits the API layer applies (per client address). */
  limits: OAuthLimits;
  /** Sign-in through the upstream OpenID Connect provider, when configured. */
  oidc: OidcSignIn | null;
  /** Whether the sign-in page takes an API key (OAuthServer.signInMethods decides, for the dashboard too). */
  apiKeySignIn: boolean;
}

/** A request the authorization page cannot even read: shown as a page, with the status given. */
function unreadable(ctx: Parameters<Middleware>[0], status: number, err: unknown): void {
  ctx.status = status;
  ctx.type = "text/html; charset=utf-8";
  ctx.set("Content-Security-Policy", pageCsp());
  ctx.body = errorPage("This authorization request cannot be served", (err as Error).message);
}

export function createOAuthRouter(o: OAuthRouterOptions): Router {
  const { db } = o;
  const audit = o.logger.child({ component: "oauth" });
  const cimd: MetadataDocumentOptions = {
    allowLocal: o.config.allowLocalClientMetadata,
    gate: new MetadataFetchGate(o.config.clientMetadata),
    unusedDays: o.config.clientMetadata.unusedDays,
  };
  const d: EndpointDeps = {
    db,
    publicUrl: o.publicUrl,
    config: o.config,
    audit,
    csrf: new CsrfTokens(o.csrfSecret),
    cimd,
    engine: new TokenEngine({ db, accessTokenSeconds: o.config.accessTokenSeconds, refreshTokenSeconds: o.config.refreshTokenSeconds, logger: audit }),
    oidc: o.oidc,
    apiKeySignIn: o.apiKeySignIn,
  };
  const router = new Router();

  router.get("/.well-known/oauth-authorization-server", endpoint(audit, authorizationServerMetadata(d)));
  router.get("/.well-known/oauth-protected-resource", endpoint(audit, protectedResourceMetadata(d)));
  router.post("/oauth/register", o.limits.register, endpoint(audit, register(d)));
  router.post("/oauth/token", o.limits.token, endpoint(audit, token(d)));
  router.post("/oauth/revoke", o.limits.revoke, endpoint(audit, revoke(d)));
  router.post("/oauth/introspect", o.limits.introspect, endpoint(audit, introspect(d)));
  // A metadata-document client_id costs an outbound fetch: charged per address before the page runs.
  const chargeFetching = async (ctx: Parameters<Middleware>[0], params: Record<string, string>) => {
    if (params.client_id && isMetadataDocumentId(params.client_id, cimd.allowLocal)) await o.limits.authorize(ctx, async () => undefined);
  };

  const authorizeRequest = authorize(d);
  router.get("/oauth/authorize", async (ctx) => {
    let params: Record<string, string>;
    try {
      params = singleValues(new URLSearchParams(ctx.querystring));
    } catch (err) {
      return unreadable(ctx, 400, err);
    }
    await chargeFetching(ctx, params);
    await authorizeRequest(ctx, params);
  });
  router.post("/oauth/authorize", async (ctx) => {
    // Its forms post only from its own pages: a cross-site form cannot sign a browser in or approve for it.
    if (!sameOrigin(ctx)) return unreadable(ctx, 403, new Error("Cross-origin request refused: start again from the application."));
    let params: Record<string, string>;
    try {
      params = await readForm(ctx);
    } catch (err) {
      return unreadable(ctx, err instanceof OAuthProblem ? err.status : 400, err);
    }
    // Sign-in attempts are rate limited per address; other posts are not.
    if (params.cp_action === "sign_in" || params.cp_action === "oidc") await o.limits.signIn(ctx, async () => undefined);
    await chargeFetching(ctx, params);
    await authorizeRequest(ctx, params);
  });

  router.get(OIDC_CALLBACK_PATH, o.limits.signIn, oidcCallback(d));

  return router;
}
