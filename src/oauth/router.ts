import Router from "@koa/router";
import type { Context, Middleware } from "koa";
import { OAuthError } from "@node-oauth/oauth2-server";
import type { Db } from "../db/database.ts";
import type { OAuthConfig } from "../config.ts";
import { authenticateApiKey } from "../domain/auth/api-keys.ts";
import { SCOPES, type Principal, type Scope } from "../domain/auth/scopes.ts";
import type { Logger } from "../logger.ts";
import { baseUrlOf } from "./base-url.ts";
import {
  authenticateClient,
  findClient,
  presentedCredentials,
  registerClient,
  registrationResponse,
  type MetadataDocumentOptions,
  type OAuthClient,
} from "./clients.ts";
import { TokenEngine } from "./engine.ts";
import { invalidClient, invalidClientMetadata, invalidRequest, OAuthProblem } from "./errors.ts";
import { readForm, readJson, singleValues } from "./http.ts";
import { consentPage, errorPage, pageCsp, signInPage, type ClientShown } from "./pages.ts";
import { OIDC_CALLBACK_PATH, OIDC_FLOW_SECONDS, OidcRefusal, type OidcSignIn } from "./oidc.ts";
import { matchRedirectUri } from "./redirect-uris.ts";
import { CsrfTokens, newSecret } from "./secrets.ts";
import { createSession, findSession, issueCode, liveToken, recordConsent, rememberedGrant, revokeFamily, tokenRow, type SessionInfo } from "./store.ts";

export interface OAuthRouterOptions {
  db: Db;
  publicUrl: string | null;
  config: OAuthConfig;
  /** Key material for CSRF tokens (derived from the encryption key). */
  csrfSecret: Buffer;
  logger: Logger;
  /** Rate limits the API layer applies (per client address). */
  limits: { token: Middleware; register: Middleware; signIn: Middleware };
  /** Sign-in through the upstream OpenID Connect provider, when configured. */
  oidc: OidcSignIn | null;
  /** Whether the sign-in page takes an API key (OAuthServer.signInMethods decides, for the dashboard too). */
  apiKeySignIn: boolean;
}

/** Accepted as `resource` (RFC 8707): the base URL, which covers /v1 and /mcp, or the MCP endpoint's own URL. The token's audience is the base URL either way. */
export function canonicalResource(value: string | undefined, baseUrl: string): string | null {
  if (value === undefined) return baseUrl;
  const v = value.replace(/\/$/, "");
  return v === baseUrl || v === `${baseUrl}/mcp` ? baseUrl : null;
}

/** The authorization request's parameters, carried through the page's forms. */
const REQUEST_PARAMS = ["response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method", "resource"] as const;

const GRANT_TYPES = ["authorization_code", "refresh_token", "client_credentials"];

const SESSION_COOKIE = "codeplane_session";
const LOGIN_COOKIE = "codeplane_login";
const LOGIN_SECONDS = 1800;

export const sessionCookieName = (baseUrl: string): string => (baseUrl.startsWith("https://") ? `__Host-${SESSION_COOKIE}` : SESSION_COOKIE);
const loginCookieName = (baseUrl: string) => (baseUrl.startsWith("https://") ? `__Host-${LOGIN_COOKIE}` : LOGIN_COOKIE);
const OIDC_COOKIE = "codeplane_oidc";
const oidcCookieName = (baseUrl: string) => (baseUrl.startsWith("https://") ? `__Host-${OIDC_COOKIE}` : OIDC_COOKIE);

function setCookie(ctx: Context, baseUrl: string, name: string, value: string, maxAgeSeconds: number): void {
  const secure = baseUrl.startsWith("https://") ? "; Secure" : "";
  ctx.append("Set-Cookie", `${name}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure}`);
}

/**
 * Sends a browser to the OIDC provider, coming back to `returnTo`: the flow's
 * sealed state goes in a cookie bound to the browser's pre-login cookie (set
 * here when it has none), so only this browser can finish it. The provider's
 * URL, or OidcRefusal when the provider cannot be reached.
 */
export async function startOidcFlow(ctx: Context, baseUrl: string, oidc: OidcSignIn, returnTo: string): Promise<string> {
  let nonce = cookie(ctx, loginCookieName(baseUrl));
  if (!nonce || !LOGIN_NONCE.test(nonce)) {
    nonce = newSecret("login");
    setCookie(ctx, baseUrl, loginCookieName(baseUrl), nonce, LOGIN_SECONDS);
  }
  const started = await oidc.start(baseUrl, nonce, returnTo);
  setCookie(ctx, baseUrl, oidcCookieName(baseUrl), started.sealed, OIDC_FLOW_SECONDS);
  return started.url;
}

const LOGIN_NONCE = /^cpl_[A-Za-z0-9_-]{43}$/;

const cookie = (ctx: Context, name: string): string | undefined => {
  const header = ctx.get("cookie");
  for (const part of header.split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
};

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
    logger.error({ err: err instanceof OAuthError ? ((err as { inner?: unknown }).inner ?? err) : err, request_id: ctx.state.requestId, path: ctx.path }, "OAuth endpoint failed");
    status = 500;
    body = { error: "server_error", error_description: "An unexpected failure; the log has the request id." };
  }
  ctx.status = status;
  ctx.set(headers);
  ctx.set("Cache-Control", "no-store");
  ctx.body = body;
}

export function createOAuthRouter(o: OAuthRouterOptions): Router {
  const { db, logger } = o;
  const audit = logger.child({ component: "oauth" });
  const csrf = new CsrfTokens(o.csrfSecret);
  const cimd: MetadataDocumentOptions = { allowLocal: o.config.allowLocalClientMetadata };
  const engine = new TokenEngine({ db, accessTokenSeconds: o.config.accessTokenSeconds, refreshTokenSeconds: o.config.refreshTokenSeconds, logger: audit });
  const router = new Router();
  const oidc = o.oidc;
  const { apiKeySignIn } = o;

  const base = (ctx: Context): string => {
    const b = baseUrlOf(ctx, o.publicUrl);
    if (!b) throw invalidRequest("the Host header is not a host name");
    return b;
  };

  /** An OAuth endpoint: RFC 6749 error bodies, never the API's {"detail"}. */
  const endpoint = (handler: (ctx: Context) => Promise<void>): Middleware => async (ctx) => {
    try {
      await handler(ctx);
    } catch (err) {
      sendProblem(ctx, err, audit);
    }
  };

  // ------------------------------------------------------------ discovery
  router.get("/.well-known/oauth-authorization-server", endpoint(async (ctx) => {
    const b = base(ctx);
    ctx.body = {
      issuer: b,
      authorization_endpoint: `${b}/oauth/authorize`,
      token_endpoint: `${b}/oauth/token`,
      registration_endpoint: `${b}/oauth/register`,
      revocation_endpoint: `${b}/oauth/revoke`,
      introspection_endpoint: `${b}/oauth/introspect`,
      scopes_supported: [...SCOPES],
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      grant_types_supported: ["authorization_code", "refresh_token", "client_credentials"],
      token_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post"],
      revocation_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post"],
      introspection_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      code_challenge_methods_supported: ["S256"],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
      service_documentation: `${b}/docs`,
    };
  }));

  router.get("/.well-known/oauth-protected-resource", endpoint(async (ctx) => {
    const b = base(ctx);
    ctx.body = {
      resource: b,
      authorization_servers: [b],
      scopes_supported: [...SCOPES],
      bearer_methods_supported: ["header"],
      resource_name: "codeplane",
      resource_documentation: `${b}/docs`,
    };
  }));

  // --------------------------------------------------------- registration
  router.post("/oauth/register", o.limits.register, endpoint(async (ctx) => {
    base(ctx);
    ctx.set("Cache-Control", "no-store");
    let registrar: Principal | null = null;
    const authorization = ctx.get("authorization");
    if (authorization) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
      registrar = m?.[1] ? await authenticateApiKey(db, m[1]) : null;
      if (!registrar) throw new OAuthProblem("invalid_token", "the bearer token is not a valid API key", 401, { "WWW-Authenticate": 'Bearer error="invalid_token"' });
      if (!registrar.scopes.has("keys:write")) {
        throw new OAuthProblem("insufficient_scope", "registering a client for an account needs an API key with keys:write", 403, { "WWW-Authenticate": 'Bearer error="insufficient_scope", scope="keys:write"' });
      }
    }
    const body = await readJson(ctx, 64 * 1024, invalidClientMetadata);
    const registered = await registerClient(db, body, registrar);
    audit.info(
      { event: "oauth.client_registered", client_id: registered.client.clientId, account_id: registered.client.accountId, auth_method: registered.client.authMethod, grant_types: registered.client.grantTypes },
      "OAuth client registered",
    );
    ctx.status = 201;
    ctx.body = registrationResponse(registered);
  }));

  // ---------------------------------------------------------------- token
  router.post("/oauth/token", o.limits.token, endpoint(async (ctx) => {
    ctx.set("Cache-Control", "no-store");
    const b = base(ctx);
    const body = await readForm(ctx);
    if (!body.grant_type) throw invalidRequest("grant_type is required");
    if (!GRANT_TYPES.includes(body.grant_type)) throw new OAuthProblem("unsupported_grant_type", "grant_type must be authorization_code, refresh_token or client_credentials");
    const client = await authenticateClient(db, presentedCredentials(ctx.get("authorization") || undefined, body), cimd);
    const resource = canonicalResource(body.resource, b);
    if (!resource) throw new OAuthProblem("invalid_target", `resource must be ${b} (or ${b}/mcp)`);
    ctx.body = await engine.token({ client, body, headers: ctx.headers, resource });
  }));

  // ------------------------------------------------------------ revocation
  router.post("/oauth/revoke", endpoint(async (ctx) => {
    ctx.set("Cache-Control", "no-store");
    base(ctx);
    const body = await readForm(ctx);
    const client = await authenticateClient(db, presentedCredentials(ctx.get("authorization") || undefined, body), cimd);
    if (!body.token) throw invalidRequest("token is required");
    const row = await tokenRow(db, body.token);
    // RFC 7009: unknown tokens, and tokens of other clients, are answered 200 all the same.
    if (row && row.client_id === client.clientId && !row.revoked_at) {
      const now = new Date();
      const n = row.kind === "refresh" ? await revokeFamily(db, row.family_id, now) : Number((await db.updateTable("oauth_tokens").set({ revoked_at: now }).where("id", "=", row.id).executeTakeFirst()).numUpdatedRows);
      audit.info({ event: "oauth.token_revoked", client_id: client.clientId, account_id: row.account_id, kind: row.kind, family_id: row.family_id, revoked: n }, "OAuth token revoked");
    }
    ctx.status = 200;
    ctx.body = "";
  }));

  // --------------------------------------------------------- introspection
  router.post("/oauth/introspect", endpoint(async (ctx) => {
    ctx.set("Cache-Control", "no-store");
    const b = base(ctx);
    const body = await readForm(ctx);
    const client = await authenticateClient(db, presentedCredentials(ctx.get("authorization") || undefined, body), cimd);
    if (client.authMethod === "none") throw invalidClient("introspection needs client authentication: a public client cannot introspect");
    if (!body.token) throw invalidRequest("token is required");
    const hint = body.token_type_hint === "refresh_token" ? "refresh" : "access";
    const found = (await liveToken(db, hint, body.token)) ?? (await liveToken(db, hint === "access" ? "refresh" : "access", body.token));
    // Only the client a token was issued to learns anything about it.
    if (!found || found.clientId !== client.clientId) {
      ctx.body = { active: false };
      return;
    }
    const kind = body.token.startsWith("cprt_") ? "refresh_token" : "access_token";
    ctx.body = {
      active: true,
      scope: found.scopes.join(" "),
      client_id: found.clientId,
      token_type: kind === "access_token" ? "Bearer" : "refresh_token",
      exp: Math.floor(found.expiresAt.getTime() / 1000),
      iat: Math.floor(found.createdAt.getTime() / 1000),
      sub: found.accountId,
      aud: found.resource,
      iss: b,
    };
  }));

  // ------------------------------------------------------- authorization
  const authorize = async (ctx: Context, params: Record<string, string>) => {
    ctx.set("Cache-Control", "no-store");
    const b = baseUrlOf(ctx, o.publicUrl);
    const page = (status: number, html: string, formTargets: string[] = []) => {
      ctx.status = status;
      ctx.type = "text/html; charset=utf-8";
      ctx.set("Content-Security-Policy", pageCsp(formTargets));
      ctx.body = html;
    };
    const refuse = (message: string) => page(400, errorPage("This authorization request cannot be served", message));
    if (!b) return refuse("The Host header is not a host name.");

    // 1. Until the client and its redirect URI are known to be right, errors are shown here, never redirected.
    if (!params.client_id) return refuse("client_id is missing.");
    let client: OAuthClient | null;
    try {
      client = await findClient(db, params.client_id, cimd);
    } catch (err) {
      return refuse(err instanceof OAuthProblem ? err.message : "The client could not be loaded.");
    }
    if (!client) return refuse("Unknown client_id.");
    if (!params.redirect_uri) return refuse("redirect_uri is missing.");
    const redirectUri = matchRedirectUri(client.redirectUris, params.redirect_uri);
    if (!redirectUri) return refuse("redirect_uri is not registered for this client.");
    const redirectOrigin = new URL(redirectUri).origin;

    const redirect = (status: 302 | 303, values: Record<string, string>) => {
      const u = new URL(redirectUri);
      for (const [k, v] of Object.entries(values)) u.searchParams.append(k, v);
      if (params.state !== undefined) u.searchParams.append("state", params.state);
      u.searchParams.append("iss", b); // RFC 9207
      ctx.status = status;
      ctx.redirect(u.href);
      ctx.status = status;
    };
    const fail = (error: string, description: string) => redirect(ctx.method === "GET" ? 302 : 303, { error, error_description: description });

    // 2. The rest of the request: errors go back to the client.
    if (!client.grantTypes.includes("authorization_code")) return fail("unauthorized_client", "this client did not register the authorization_code grant");
    if (params.response_type !== "code") return fail("unsupported_response_type", "response_type must be code");
    if (!params.code_challenge) return fail("invalid_request", "code_challenge is required (PKCE with S256)");
    if (params.code_challenge_method !== "S256") return fail("invalid_request", "code_challenge_method must be S256");
    if (!/^[A-Za-z0-9_-]{43}$/.test(params.code_challenge)) return fail("invalid_request", "code_challenge must be the base64url SHA-256 of the verifier (43 characters)");
    const asked = params.scope === undefined ? (client.scopes ?? [...SCOPES]) : params.scope.split(" ").filter(Boolean);
    const unknown = asked.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (unknown.length) return fail("invalid_scope", `unknown scope: ${unknown.join(" ")}`);
    if (client.scopes && asked.some((s) => !client.scopes!.includes(s as Scope))) return fail("invalid_scope", "scope beyond what the client registered");
    if (asked.length === 0) return fail("invalid_scope", "no scope asked");
    const resource = canonicalResource(params.resource, b);
    if (!resource) return fail("invalid_target", `resource must be ${b} (or ${b}/mcp)`);

    const request: Record<string, string> = {};
    for (const k of REQUEST_PARAMS) if (params[k] !== undefined) request[k] = params[k];
    const shown: ClientShown = { name: client.name, clientId: client.clientId, redirectHost: new URL(redirectUri).host, unverified: client.accountId === null };
    const token = cookie(ctx, sessionCookieName(b));
    const session: SessionInfo | null = token ? await findSession(db, token) : null;

    const signIn = async (error?: string) => {
      let nonce = cookie(ctx, loginCookieName(b));
      if (!nonce || !LOGIN_NONCE.test(nonce)) {
        nonce = newSecret("login");
        setCookie(ctx, b, loginCookieName(b), nonce, LOGIN_SECONDS);
      }
      // Browsers apply form-action to a form's redirects: the OIDC button's answer goes to the provider.
      const providerOrigin = oidc ? await oidc.authorizationOrigin() : null;
      page(
        error ? 401 : 200,
        signInPage({ client: shown, request, csrf: csrf.issue("sign_in", nonce), apiKey: apiKeySignIn, ...(oidc && { oidc: oidc.providerName }), ...(error && { error }) }),
        providerOrigin ? [providerOrigin] : [],
      );
    };
    const issue = async (s: SessionInfo, granted: Scope[], remembered: boolean) => {
      const grant = await recordConsent(db, s.accountId, client.clientId, s.apiKeyId, granted);
      const code = await issueCode(db, { grant, redirectUri, scopes: granted, resource, codeChallenge: params.code_challenge! });
      audit.info({ event: "oauth.consent", client_id: client.clientId, account_id: s.accountId, session_id: s.id, grant_id: grant.id, scopes: granted, remembered }, remembered ? "OAuth consent remembered" : "OAuth consent given");
      redirect(ctx.method === "GET" ? 302 : 303, { code });
    };

    const action = ctx.method === "POST" ? params.cp_action : undefined;
    if (action === "oidc" && oidc) {
      const nonce = cookie(ctx, loginCookieName(b));
      if (!nonce || !csrf.verify("sign_in", nonce, params.csrf_token)) return page(403, errorPage("Sign-in refused", "The form's CSRF token does not match this browser. Start again from the application."));
      const back = new URL(`${b}/oauth/authorize`);
      for (const [k, v] of Object.entries(request)) back.searchParams.append(k, v);
      try {
        const url = await startOidcFlow(ctx, b, oidc, `/oauth/authorize${back.search}`);
        ctx.status = 303;
        ctx.redirect(url);
        ctx.status = 303;
      } catch (err) {
        if (!(err instanceof OidcRefusal)) throw err;
        audit.warn({ event: "oauth.sign_in_failed", method: "oidc", reason: err.reason, client_id: client.clientId }, "OIDC sign-in could not start");
        page(err.status, errorPage("Sign-in failed", err.message));
      }
      return;
    }
    if (action === "sign_in") {
      const nonce = cookie(ctx, loginCookieName(b));
      if (!nonce || !csrf.verify("sign_in", nonce, params.csrf_token)) return page(403, errorPage("Sign-in refused", "The form's CSRF token does not match this browser. Start again from the application."));
      if (!apiKeySignIn) return page(403, errorPage("Sign-in refused", `Signing in with an API key is turned off here; sign in with ${oidc!.providerName}.`));
      const principal = params.api_key ? await authenticateApiKey(db, params.api_key.trim()) : null;
      if (!principal || principal.credential.kind !== "api_key") {
        audit.info({ event: "oauth.sign_in_failed", client_id: client.clientId }, "sign-in refused: not a valid API key");
        return signIn("That is not a valid API key.");
      }
      const created = await createSession(db, principal.accountId, principal.credential.id, o.config.sessionSeconds);
      setCookie(ctx, b, sessionCookieName(b), created.token, o.config.sessionSeconds);
      audit.info({ event: "oauth.sign_in", account_id: principal.accountId, api_key_id: principal.credential.id, session_id: created.session.id }, "signed in");
      // Post/redirect/get: the consent page is a GET of the same request.
      const back = new URL(`${b}/oauth/authorize`);
      for (const [k, v] of Object.entries(request)) back.searchParams.append(k, v);
      ctx.status = 303;
      ctx.redirect(`/oauth/authorize${back.search}`);
      ctx.status = 303;
      return;
    }
    if (!session) return signIn();
    const granted = asked.filter((s) => session!.scopes.includes(s as Scope)) as Scope[];
    const unavailable = asked.filter((s) => !session!.scopes.includes(s as Scope));
    if (action === "consent") {
      if (!csrf.verify("consent", session.id, params.csrf_token)) return page(403, errorPage("Consent refused", "The form's CSRF token does not match your session. Start again from the application."));
      if (params.decision !== "allow") {
        audit.info({ event: "oauth.consent_denied", client_id: client.clientId, account_id: session.accountId, session_id: session.id }, "OAuth consent denied");
        return fail("access_denied", "the person denied the request");
      }
      if (granted.length === 0) return fail("invalid_scope", "the account's API key has none of the scopes asked");
      return issue(session, granted, false);
    }
    // A GET (or a POSTed authorization request): remembered consent, or the consent page.
    if (granted.length > 0) {
      const remembered = await rememberedGrant(db, session.accountId, client.clientId, granted);
      if (remembered && remembered.apiKeyId === session.apiKeyId) return issue(session, granted, true);
    }
    const account = await db.selectFrom("accounts").select("name").where("id", "=", session.accountId).executeTakeFirst();
    page(200, consentPage({ client: shown, request, csrf: csrf.issue("consent", session.id), scopes: granted, unavailable, account: account?.name ?? session.accountId }), [redirectOrigin]);
  };

  router.get("/oauth/authorize", async (ctx) => {
    let params: Record<string, string>;
    try {
      params = singleValues(new URLSearchParams(ctx.querystring));
    } catch (err) {
      ctx.status = 400;
      ctx.type = "text/html; charset=utf-8";
      ctx.set("Content-Security-Policy", pageCsp());
      ctx.body = errorPage("This authorization request cannot be served", (err as Error).message);
      return;
    }
    await authorize(ctx, params);
  });

  // The upstream OpenID Connect provider sends the browser back here (src/oauth/oidc.ts).
  router.get(OIDC_CALLBACK_PATH, o.limits.signIn, async (ctx) => {
    ctx.set("Cache-Control", "no-store");
    ctx.type = "text/html; charset=utf-8";
    ctx.set("Content-Security-Policy", pageCsp());
    const b = baseUrlOf(ctx, o.publicUrl);
    if (!oidc || !b) {
      ctx.status = 404;
      ctx.body = errorPage("Not found", oidc ? "The Host header is not a host name." : "Sign-in through an OpenID Connect provider is not configured.");
      return;
    }
    const sealed = cookie(ctx, oidcCookieName(b));
    // The flow state is spent whatever happens next.
    if (sealed) setCookie(ctx, b, oidcCookieName(b), "", 0);
    try {
      const who = await oidc.finish(b, cookie(ctx, loginCookieName(b)), sealed, ctx.querystring);
      const created = await createSession(db, who.accountId, who.apiKeyId, o.config.sessionSeconds);
      setCookie(ctx, b, sessionCookieName(b), created.token, o.config.sessionSeconds);
      audit.info({ event: "oauth.sign_in", method: "oidc", account_id: who.accountId, api_key_id: who.apiKeyId, session_id: created.session.id, oidc_subject: who.subject }, "signed in through the OIDC provider");
      ctx.status = 303;
      ctx.redirect(who.returnTo);
      ctx.status = 303;
    } catch (err) {
      if (!(err instanceof OidcRefusal)) throw err;
      audit.info({ event: "oauth.sign_in_failed", method: "oidc", reason: err.reason }, "OIDC sign-in refused");
      ctx.status = err.status;
      ctx.body = errorPage("Sign-in refused", err.message);
    }
  });

  router.post("/oauth/authorize", async (ctx, next) => {
    // Sign-in attempts are rate limited per address; other posts are not.
    let params: Record<string, string>;
    try {
      params = await readForm(ctx);
    } catch (err) {
      ctx.status = err instanceof OAuthProblem ? err.status : 400;
      ctx.type = "text/html; charset=utf-8";
      ctx.set("Content-Security-Policy", pageCsp());
      ctx.body = errorPage("This authorization request cannot be served", (err as Error).message);
      return;
    }
    if (params.cp_action === "sign_in" || params.cp_action === "oidc") await o.limits.signIn(ctx, async () => undefined);
    await authorize(ctx, params);
    void next;
  });

  return router;
}
