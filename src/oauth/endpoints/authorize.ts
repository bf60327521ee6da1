import type { Context } from "koa";
import { authenticateApiKey } from "../../domain/auth/api-keys.ts";
import type { Scope } from "../../domain/auth/scopes.ts";
import { baseUrlOf } from "../base-url.ts";
import { findClient, type OAuthClient } from "../clients.ts";
import { OAuthProblem } from "../errors.ts";
import { OidcRefusal } from "../oidc.ts";
import { consentPage, errorPage, pageCsp, signInPage, type ClientShown } from "../pages.ts";
import { matchRedirectUri } from "../redirect-uris.ts";
import { createSession, findSession, issueCode, recordConsent, rememberedGrant, type SessionInfo } from "../store.ts";
import { checkAuthorizationRequest, REQUEST_PARAMS, requestParams } from "./authorize-request.ts";
import { cookie, LOGIN_SECONDS, loginCookieName, loginNonce, sessionCookieName, setCookie, startOidcFlow } from "./cookies.ts";
import type { EndpointDeps } from "./endpoint.ts";

// The authorization endpoint (RFC 6749 section 4.1): a browser's page, so its
// errors are pages (until the redirect URI is trusted) or redirects (after).
// One request goes: find the client and its redirect URI, check the request,
// then sign in (API key or OIDC), consent, and a code back to the client.

function page(ctx: Context, status: number, html: string, formTargets: string[] = []): void {
  ctx.status = status;
  ctx.type = "text/html; charset=utf-8";
  ctx.set("Content-Security-Policy", pageCsp(formTargets));
  // Not no-referrer: under it a browser sends its forms' POSTs with `Origin: null`, and the same-origin
  // check (same-origin.ts) could not tell this page's form from another site's. Nothing leaves the origin.
  ctx.set("Referrer-Policy", "same-origin");
  ctx.body = html;
}

/** How long a consent page's Allow and Deny work: a person reads the page and decides, or starts again. */
export const CONSENT_SECONDS = 600;

const refuse = (ctx: Context, message: string | OAuthProblem) => {
  // A problem of the server's (too many document fetches at once: 503) keeps its status and Retry-After.
  if (message instanceof OAuthProblem) ctx.set(message.headers);
  const status = message instanceof OAuthProblem ? message.status : 400;
  page(ctx, status, errorPage("This authorization request cannot be served", typeof message === "string" ? message : message.message));
};

/** The client and the redirect URI it registered, or why there is none: shown on the page, never redirected. */
async function redirectTarget(d: EndpointDeps, params: Record<string, string>): Promise<{ client: OAuthClient; redirectUri: string } | string | OAuthProblem> {
  if (!params.client_id) return "client_id is missing.";
  let client: OAuthClient | null;
  try {
    client = await findClient(d.db, params.client_id, d.cimd);
  } catch (err) {
    if (err instanceof OAuthProblem && err.status >= 500) return err;
    return err instanceof OAuthProblem ? err.message : "The client could not be loaded.";
  }
  if (!client) return "Unknown client_id.";
  if (!params.redirect_uri) return "redirect_uri is missing.";
  const redirectUri = matchRedirectUri(client.redirectUris, params.redirect_uri);
  if (!redirectUri) return "redirect_uri is not registered for this client.";
  return { client, redirectUri };
}

/** Sends the browser back to the client's redirect URI with `values`, the request's state and the issuer (RFC 9207). */
function backToClient(ctx: Context, b: string, redirectUri: string, params: Record<string, string>, values: Record<string, string>): void {
  const status = ctx.method === "GET" ? 302 : 303;
  const u = new URL(redirectUri);
  for (const [k, v] of Object.entries(values)) u.searchParams.append(k, v);
  if (params.state !== undefined) u.searchParams.append("state", params.state);
  u.searchParams.append("iss", b);
  ctx.status = status;
  ctx.redirect(u.href);
  ctx.status = status;
}

/** One authorization request whose client and redirect URI are trusted: what it may still answer. */
interface FlowInput {
  d: EndpointDeps;
  ctx: Context;
  b: string;
  params: Record<string, string>;
  client: OAuthClient;
  redirectUri: string;
  asked: string[];
  resource: string;
}

class AuthorizeFlow {
  readonly d: EndpointDeps;
  readonly ctx: Context;
  readonly b: string;
  readonly params: Record<string, string>;
  readonly client: OAuthClient;
  readonly redirectUri: string;
  readonly asked: string[];
  readonly resource: string;
  readonly request: Record<string, string>;
  readonly shown: ClientShown;

  constructor(i: FlowInput) {
    ({
      d: this.d,
      ctx: this.ctx,
      b: this.b,
      params: this.params,
      client: this.client,
      redirectUri: this.redirectUri,
      asked: this.asked,
      resource: this.resource,
    } = i);
    this.request = requestParams(i.params);
    this.shown = { name: i.client.name, clientId: i.client.clientId, redirectHost: new URL(i.redirectUri).host, unverified: i.client.accountId === null };
  }

  redirect(values: Record<string, string>): void {
    backToClient(this.ctx, this.b, this.redirectUri, this.params, values);
  }

  fail(error: string, description: string): void {
    this.redirect({ error, error_description: description });
  }

  /** This same authorization request, as a local path: where sign-in comes back to. */
  #back(): string {
    const back = new URL(`${this.b}/oauth/authorize`);
    for (const [k, v] of Object.entries(this.request)) back.searchParams.append(k, v);
    return `/oauth/authorize${back.search}`;
  }

  /** What a form's CSRF token is bound to: the browser (session or login cookie) and this very request, each parameter. */
  #binding(browser: string): string {
    return `${browser}\n${JSON.stringify(REQUEST_PARAMS.map((k) => this.request[k] ?? null))}`;
  }

  #csrfOk(): boolean {
    const nonce = cookie(this.ctx, loginCookieName(this.b));
    return Boolean(nonce) && this.d.csrf.verify("sign_in", this.#binding(nonce!), this.params.csrf_token, LOGIN_SECONDS);
  }

  #csrfRefused(): void {
    page(this.ctx, 403, errorPage("Sign-in refused", "The form's CSRF token does not match this browser. Start again from the application."));
  }

  async signIn(error?: string): Promise<void> {
    const { d } = this;
    // A fresh nonce for the page, except when it shows a failed sign-in again: that POST proved the
    // browser's nonce with a token this server issued for it (so the person may simply try again).
    const proven = error ? cookie(this.ctx, loginCookieName(this.b)) : undefined;
    const nonce = proven ?? loginNonce(this.ctx, this.b);
    // Browsers apply form-action to a form's redirects: the OIDC button's answer goes to the provider.
    const providerOrigin = d.oidc ? await d.oidc.authorizationOrigin() : null;
    page(
      this.ctx,
      error ? 401 : 200,
      signInPage({
        client: this.shown,
        request: this.request,
        csrf: d.csrf.issue("sign_in", this.#binding(nonce)),
        apiKey: d.apiKeySignIn,
        ...(d.oidc && { oidc: d.oidc.providerName }),
        ...(error && { error }),
      }),
      providerOrigin ? [providerOrigin] : [],
    );
  }

  async issue(s: SessionInfo, granted: Scope[], remembered: boolean): Promise<void> {
    const { db, audit } = this.d;
    const grant = await recordConsent(db, s.accountId, this.client.clientId, s.apiKeyId, granted);
    const code = await issueCode(db, {
      grant,
      redirectUri: this.redirectUri,
      scopes: granted,
      resource: this.resource,
      codeChallenge: this.params.code_challenge!,
    });
    audit.info(
      { event: "oauth.consent", client_id: this.client.clientId, account_id: s.accountId, session_id: s.id, grant_id: grant.id, scopes: granted, remembered },
      remembered ? "OAuth consent remembered" : "OAuth consent given",
    );
    this.redirect({ code });
  }

  /** The sign-in page's OIDC button: off to the provider, back to this request. */
  async startOidc(): Promise<void> {
    const { ctx, d } = this;
    if (!this.#csrfOk()) return this.#csrfRefused();
    try {
      const url = await startOidcFlow(ctx, this.b, d.oidc!, this.#back());
      ctx.status = 303;
      ctx.redirect(url);
      ctx.status = 303;
    } catch (err) {
      if (!(err instanceof OidcRefusal)) throw err;
      d.audit.warn({ event: "oauth.sign_in_failed", method: "oidc", reason: err.reason, client_id: this.client.clientId }, "OIDC sign-in could not start");
      page(ctx, err.status, errorPage("Sign-in failed", err.message));
    }
  }

  /** The sign-in page's API key form: a session, then (post/redirect/get) the consent page. */
  async signInWithApiKey(): Promise<void> {
    const { ctx, d, b } = this;
    if (!this.#csrfOk()) return this.#csrfRefused();
    if (!d.apiKeySignIn)
      return page(ctx, 403, errorPage("Sign-in refused", `Signing in with an API key is turned off here; sign in with ${d.oidc!.providerName}.`));
    const principal = this.params.api_key ? await authenticateApiKey(d.db, this.params.api_key.trim()) : null;
    if (!principal || principal.credential.kind !== "api_key") {
      d.audit.info({ event: "oauth.sign_in_failed", client_id: this.client.clientId }, "sign-in refused: not a valid API key");
      return this.signIn("That is not a valid API key.");
    }
    const created = await createSession(d.db, principal.accountId, principal.credential.id, d.config.sessionSeconds);
    setCookie(ctx, b, sessionCookieName(b), created.token, d.config.sessionSeconds);
    d.audit.info({ event: "oauth.sign_in", account_id: principal.accountId, api_key_id: principal.credential.id, session_id: created.session.id }, "signed in");
    ctx.status = 303;
    ctx.redirect(this.#back());
    ctx.status = 303;
  }

  /** The consent page's answer. */
  async consent(session: SessionInfo, granted: Scope[]): Promise<void> {
    if (!this.d.csrf.verify("consent", this.#binding(session.id), this.params.csrf_token, CONSENT_SECONDS)) {
      return page(
        this.ctx,
        403,
        errorPage(
          "Consent refused",
          "The form's CSRF token does not match your session and this request, or it has expired. Start again from the application.",
        ),
      );
    }
    if (this.params.decision !== "allow") {
      this.d.audit.info(
        { event: "oauth.consent_denied", client_id: this.client.clientId, account_id: session.accountId, session_id: session.id },
        "OAuth consent denied",
      );
      return this.fail("access_denied", "the person denied the request");
    }
    if (granted.length === 0) return this.fail("invalid_scope", "the account's API key has none of the scopes asked");
    return this.issue(session, granted, false);
  }

  /** A GET (or a POSTed authorization request) by someone signed in: remembered consent, or the consent page. */
  async askConsent(session: SessionInfo, granted: Scope[], unavailable: string[]): Promise<void> {
    const { db, csrf } = this.d;
    if (granted.length > 0) {
      const remembered = await rememberedGrant(db, session.accountId, this.client.clientId, granted);
      if (remembered && remembered.apiKeyId === session.apiKeyId) return this.issue(session, granted, true);
    }
    const account = await db.selectFrom("accounts").select("name").where("id", "=", session.accountId).executeTakeFirst();
    const html = consentPage({
      client: this.shown,
      request: this.request,
      csrf: csrf.issue("consent", this.#binding(session.id)),
      scopes: granted,
      unavailable,
      account: account?.name ?? session.accountId,
    });
    page(this.ctx, 200, html, [new URL(this.redirectUri).origin]);
  }

  async run(): Promise<void> {
    const token = cookie(this.ctx, sessionCookieName(this.b));
    const session = token ? await findSession(this.d.db, token) : null;
    const action = this.ctx.method === "POST" ? this.params.cp_action : undefined;
    if (action === "oidc" && this.d.oidc) return this.startOidc();
    if (action === "sign_in") return this.signInWithApiKey();
    if (!session) return this.signIn();
    const granted = this.asked.filter((s) => session.scopes.includes(s as Scope)) as Scope[];
    const unavailable = this.asked.filter((s) => !session.scopes.includes(s as Scope));
    if (action === "consent") return this.consent(session, granted);
    return this.askConsent(session, granted, unavailable);
  }
}

/** Serves one authorization request, its parameters read from the query (GET) or the form (POST). */
export const authorize =
  (d: EndpointDeps) =>
  async (ctx: Context, params: Record<string, string>): Promise<void> => {
    ctx.set("Cache-Control", "no-store");
    const b = baseUrlOf(ctx, d.publicUrl);
    if (!b) return refuse(ctx, "The Host header is not a host name.");
    // 1. Until the client and its redirect URI are known to be right, errors are shown here, never redirected.
    const target = await redirectTarget(d, params);
    if (typeof target === "string" || target instanceof OAuthProblem) return refuse(ctx, target);
    // 2. The rest of the request: errors go back to the client.
    const checked = checkAuthorizationRequest(params, target.client, b);
    if ("error" in checked) return backToClient(ctx, b, target.redirectUri, params, { error: checked.error, error_description: checked.description });
    return new AuthorizeFlow({ d, ctx, b, params, ...target, ...checked }).run();
  };
