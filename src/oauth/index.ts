import { createHmac } from "node:crypto";
import type Router from "@koa/router";
import type { Context } from "koa";
import type { OAuthConfig } from "../config.ts";
import type { Db } from "../db/database.ts";
import type { Page, PageRequest } from "../domain/shared/pagination.ts";
import type { Logger } from "../logger.ts";
import { accessTokenAuthenticator } from "./authenticator.ts";
import { deleteClient, listClients, listGrants, revokeGrant, type OAuthClientView, type OAuthGrantView } from "./grants.ts";
import { OidcSignIn } from "./oidc.ts";
import { createOAuthRouter, startOidcFlow, type OAuthLimits } from "./router.ts";

export { baseUrlOf, resourceMetadataUrl } from "./base-url.ts";
export type { BearerRequest } from "./authenticator.ts";
export { oauthClientSchema, oauthGrantSchema } from "./grants.ts";
export { sessionCookieName } from "./router.ts";
export { OidcRefusal } from "./oidc.ts";
export { sameOrigin } from "./same-origin.ts";
export { createSession, findSession, revokeSession, type SessionInfo } from "./store.ts";

export interface OAuthServerOptions {
  db: Db;
  /** CODEPLANE_PUBLIC_URL; null: the base URL is derived from each request. */
  publicUrl: string | null;
  config: OAuthConfig;
  /** The current encryption key: CSRF tokens are keyed by a value derived from it. */
  encryptionKey: Buffer;
  logger: Logger;
}

/** The OAuth 2.0 authorization server: its endpoints, the access-token authenticator, and what /v1/oauth manages. */
export class OAuthServer {
  readonly #o: OAuthServerOptions;
  readonly #log: Logger;
  readonly #csrfSecret: Buffer;
  readonly #oidc: OidcSignIn | null;
  /** For the API's authenticator chain: OAuth access tokens (null for anything else). */
  readonly authenticator: ReturnType<typeof accessTokenAuthenticator>;

  constructor(opts: OAuthServerOptions) {
    this.#o = opts;
    this.#log = opts.logger.child({ component: "oauth" });
    this.authenticator = accessTokenAuthenticator(opts.db, opts.publicUrl);
    this.#csrfSecret = createHmac("sha256", opts.encryptionKey).update("codeplane oauth").digest();
    const c = opts.config;
    this.#oidc = c.oidc
      ? new OidcSignIn({ config: c.oidc, db: opts.db, secret: this.#csrfSecret, keySeconds: Math.max(c.sessionSeconds, c.refreshTokenSeconds) })
      : null;
  }

  /** The unversioned endpoints (discovery, /oauth/*), with the API layer's rate limits. */
  router(limits: OAuthLimits): Router {
    return createOAuthRouter({
      db: this.#o.db,
      publicUrl: this.#o.publicUrl,
      config: this.#o.config,
      csrfSecret: this.#csrfSecret,
      logger: this.#o.logger,
      limits,
      oidc: this.#oidc,
      apiKeySignIn: this.signInMethods.apiKey,
    });
  }

  /** How people sign in here, the same on the authorization page and the dashboard: an API key (unless turned off), the OIDC provider (when configured). */
  get signInMethods(): { apiKey: boolean; oidc: string | null } {
    return { apiKey: this.#o.config.apiKeySignIn || !this.#oidc, oidc: this.#oidc?.providerName ?? null };
  }

  /**
   * Starts a browser's sign-in at the OIDC provider that comes back to the
   * local path `returnTo` signed in (the session cookie set by the callback):
   * the provider's URL to send the browser to. Throws OidcRefusal when the
   * provider cannot be reached, and an Error when none is configured.
   */
  startOidcSignIn(ctx: Context, baseUrl: string, returnTo: string): Promise<string> {
    if (!this.#oidc) throw new Error("no OpenID Connect provider is configured");
    return startOidcFlow(ctx, baseUrl, this.#oidc, returnTo);
  }

  listClients(accountId: string, page: PageRequest): Promise<Page<OAuthClientView>> {
    return listClients(this.#o.db, accountId, page);
  }

  deleteClient(accountId: string, clientId: string): Promise<void> {
    return deleteClient(this.#o.db, accountId, clientId, this.#log);
  }

  listGrants(accountId: string, page: PageRequest): Promise<Page<OAuthGrantView>> {
    return listGrants(this.#o.db, accountId, page);
  }

  revokeGrant(accountId: string, grantId: string): Promise<void> {
    return revokeGrant(this.#o.db, accountId, grantId, this.#log);
  }
}
