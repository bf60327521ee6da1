import OAuth2Server, { InvalidGrantError, InvalidScopeError, OAuthError, Request, Response, UnauthorizedClientError } from "@node-oauth/oauth2-server";
import type { Db } from "../db/database.ts";
import type { Scope } from "../domain/auth/scopes.ts";
import { newId } from "../domain/shared/ids.ts";
import type { Logger } from "../logger.ts";
import type { OAuthClient } from "./clients.ts";
import { hashSecret, newSecret } from "./secrets.ts";
import { liveKey, liveToken, onlyScopes, revokeFamily, tokenRow } from "./store.ts";

// The token endpoint's grants run in @node-oauth/oauth2-server (5.3), behind
// this adapter. The library does not know clients' registered
// authentication methods, resources, token families or reuse, so:
// - the client is authenticated before the library sees the request
//   (authenticateClient: a confidential client always proves its secret, even
//   with PKCE, where the library would skip the check), and getClient only
//   hands the library that client;
// - a code without a PKCE challenge is never issued and never redeemed (the
//   library would redeem it without a verifier);
// - a rotated refresh token presented again revokes its whole family (the
//   library has no reuse detection);
// - a refresh asking for more scope is refused before anything is revoked
//   (5.3.0 revokes the old token first, then fails);
// - `resource` (RFC 8707) is checked against the code's or token's audience.

/** RFC 8707's error for a resource this server does not serve. */
export class InvalidTargetError extends OAuthError {
  constructor(message: string) {
    super(message, { code: 400, name: "invalid_target" });
  }
}

/** Who a token acts for, as the library carries it between the model's calls. */
interface GrantUser {
  accountId: string;
  apiKeyId: string;
  /** The consent it derives from; null for client_credentials. */
  grantId: string | null;
  familyId: string;
  resource: string;
}

export interface TokenRequest {
  client: OAuthClient;
  /** The form body, one value per parameter. */
  body: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  /** The audience a new token gets (the base URL), after `resource` was checked. */
  resource: string;
}

export interface EngineOptions {
  db: Db;
  accessTokenSeconds: number;
  refreshTokenSeconds: number;
  logger: Logger;
}

const libClient = (c: OAuthClient) => ({ id: c.clientId, grants: c.grantTypes, redirectUris: c.redirectUris });

const parseScope = (value: string | undefined): string[] | undefined => (value === undefined ? undefined : value.split(" ").filter(Boolean));

export class TokenEngine {
  readonly #o: EngineOptions;

  constructor(opts: EngineOptions) {
    this.#o = opts;
  }

  /** Runs the grant; returns the token response body, or throws the library's OAuthError (or ours). */
  async token(req: TokenRequest): Promise<Record<string, unknown>> {
    const { db, logger } = this.#o;
    if (req.body.grant_type === "refresh_token" && req.body.refresh_token && req.body.scope !== undefined) {
      // Checked before the library runs: 5.3.0 revokes the refresh token before refusing the scope.
      const live = await liveToken(db, "refresh", req.body.refresh_token);
      const asked = parseScope(req.body.scope) ?? [];
      if (live && live.clientId === req.client.clientId && asked.some((s) => !live.scopes.includes(s as Scope))) {
        throw new InvalidScopeError("Invalid scope: a refresh cannot add scopes the grant did not have");
      }
    }
    if (req.body.grant_type === "client_credentials") {
      if (!req.client.grantTypes.includes("client_credentials"))
        throw new UnauthorizedClientError("Unauthorized client: client_credentials is not among the client's grant_types");
      if (!req.client.apiKeyId || !(await liveKey(db, req.client.apiKeyId))) {
        throw new UnauthorizedClientError("Unauthorized client: the API key this client was registered with is revoked or expired");
      }
    }
    const server = new OAuth2Server({
      model: this.#model(req),
      accessTokenLifetime: this.#o.accessTokenSeconds,
      refreshTokenLifetime: this.#o.refreshTokenSeconds,
      // Public clients send no secret (authorization_code with PKCE, refresh_token); confidential ones were authenticated already.
      requireClientAuthentication: { authorization_code: false, refresh_token: false },
      alwaysIssueNewRefreshToken: true,
    });
    // The client is already authenticated (by the method it registered): the library gets its id in the body and no
    // Authorization header (it would read Basic credentials without RFC 6749's form-decoding), and for a confidential
    // client a stand-in secret so that its "client_secret required" check passes; getClient ignores the secret.
    const { authorization: _authorization, ...headers } = req.headers;
    const body: Record<string, string> = { ...req.body, client_id: req.client.clientId };
    if (req.client.authMethod === "none") delete body.client_secret;
    else body.client_secret = "authenticated";
    const request = new Request({ method: "POST", headers: headers as Record<string, string>, query: {}, body });
    const response = new Response();
    const issued = await server.token(request, response);
    const user = issued.user as GrantUser;
    logger.info(
      {
        event: "oauth.token_issued",
        grant_type: req.body.grant_type,
        client_id: req.client.clientId,
        account_id: user.accountId,
        family_id: user.familyId,
        scopes: issued.scope,
        refresh: !!issued.refreshToken,
      },
      "OAuth token issued",
    );
    return response.body as Record<string, unknown>;
  }

  #model(req: TokenRequest) {
    const { db, logger } = this.#o;
    const client = req.client;
    return {
      getClient: async (clientId: string) => (clientId === client.clientId ? libClient(client) : null),

      generateAccessToken: async () => newSecret("access"),
      generateRefreshToken: async () => newSecret("refresh"),

      getAuthorizationCode: async (code: string) => {
        const row = await db.selectFrom("oauth_codes").selectAll().where("code_hash", "=", hashSecret(code)).executeTakeFirst();
        if (!row || row.client_id !== client.clientId) return null;
        if (row.used_at) {
          // RFC 6749 4.1.2: a code used twice; the tokens issued from it are revoked.
          const n = await revokeFamily(db, row.family_id);
          logger.warn(
            { event: "oauth.code_reused", client_id: row.client_id, account_id: row.account_id, family_id: row.family_id, revoked: n },
            "authorization code used again: its tokens are revoked",
          );
          return null;
        }
        if (!row.code_challenge) return null; // never issued without PKCE; never redeemed without it either
        if (req.body.resource !== undefined && req.resource !== row.resource)
          throw new InvalidTargetError("resource differs from the one the code was issued for");
        const user: GrantUser = { accountId: row.account_id, apiKeyId: row.api_key_id, grantId: row.grant_id, familyId: row.family_id, resource: row.resource };
        return {
          authorizationCode: code,
          expiresAt: row.expires_at,
          redirectUri: row.redirect_uri,
          scope: row.scopes,
          client: libClient(client),
          user,
          codeChallenge: row.code_challenge,
          codeChallengeMethod: "S256",
        };
      },

      revokeAuthorizationCode: async (code: { authorizationCode: string }) => {
        const r = await db
          .updateTable("oauth_codes")
          .set({ used_at: new Date() })
          .where("code_hash", "=", hashSecret(code.authorizationCode))
          .where("used_at", "is", null)
          .executeTakeFirst();
        return Number(r.numUpdatedRows) === 1;
      },

      getRefreshToken: async (token: string) => {
        const live = await liveToken(db, "refresh", token);
        if (!live) {
          const row = await tokenRow(db, token);
          if (row && row.kind === "refresh" && row.rotated_at && row.client_id === client.clientId) {
            // A rotated refresh token used again: it leaked, or its holder raced a thief. The whole family goes.
            const n = await revokeFamily(db, row.family_id);
            logger.warn(
              { event: "oauth.refresh_reused", client_id: row.client_id, account_id: row.account_id, family_id: row.family_id, revoked: n },
              "rotated refresh token used again: its family is revoked",
            );
          }
          return null;
        }
        if (live.clientId !== client.clientId) return null;
        if (req.body.resource !== undefined && req.resource !== live.resource)
          throw new InvalidTargetError("resource differs from the one the refresh token was issued for");
        const user: GrantUser = { accountId: live.accountId, apiKeyId: live.apiKeyId, grantId: live.grantId, familyId: live.familyId, resource: live.resource };
        return { refreshToken: token, refreshTokenExpiresAt: live.expiresAt, scope: live.scopes, client: libClient(client), user };
      },

      revokeToken: async (token: { refreshToken: string }) => {
        // Rotation: the old refresh token is marked rotated (not just revoked), so its reuse is recognised.
        const r = await db
          .updateTable("oauth_tokens")
          .set({ rotated_at: new Date() })
          .where("token_hash", "=", hashSecret(token.refreshToken))
          .where("kind", "=", "refresh")
          .where("rotated_at", "is", null)
          .where("revoked_at", "is", null)
          .executeTakeFirst();
        return Number(r.numUpdatedRows) === 1;
      },

      getUserFromClient: async () => {
        const key = client.apiKeyId ? await liveKey(db, client.apiKeyId) : null;
        if (!key || !client.apiKeyId) return null;
        const user: GrantUser = { accountId: key.accountId, apiKeyId: client.apiKeyId, grantId: null, familyId: newId(), resource: req.resource };
        return user;
      },

      validateScope: async (user: GrantUser, _client: unknown, scope?: string[]) => {
        if (user.grantId !== null) return scope ?? []; // a code's scopes were decided at consent
        // client_credentials: what was asked (everything the client may have when nothing was) within the registering key's scopes.
        const key = await liveKey(db, user.apiKeyId);
        if (!key) return false;
        const allowed = key.scopes.filter((s) => !client.scopes || client.scopes.includes(s));
        if (scope === undefined) return allowed.length ? allowed : false;
        if (scope.some((s) => !allowed.includes(s as Scope))) return false;
        return onlyScopes(scope);
      },

      saveToken: async (
        token: { accessToken: string; accessTokenExpiresAt?: Date; refreshToken?: string; refreshTokenExpiresAt?: Date; scope?: string[] },
        _client: unknown,
        user: GrantUser,
      ) => {
        const scopes = onlyScopes(token.scope ?? []);
        const now = new Date();
        const base = {
          family_id: user.familyId,
          grant_id: user.grantId,
          client_id: client.clientId,
          account_id: user.accountId,
          api_key_id: user.apiKeyId,
          scopes,
          resource: user.resource,
          created_at: now,
        };
        // A refresh token only for clients that registered the refresh_token grant.
        const refresh = token.refreshToken && client.grantTypes.includes("refresh_token") ? token.refreshToken : undefined;
        await db
          .insertInto("oauth_tokens")
          .values([
            { id: newId(), kind: "access", token_hash: hashSecret(token.accessToken), expires_at: token.accessTokenExpiresAt!, ...base },
            ...(refresh ? [{ id: newId(), kind: "refresh" as const, token_hash: hashSecret(refresh), expires_at: token.refreshTokenExpiresAt!, ...base }] : []),
          ])
          .execute();
        return {
          accessToken: token.accessToken,
          accessTokenExpiresAt: token.accessTokenExpiresAt,
          ...(refresh && { refreshToken: refresh, refreshTokenExpiresAt: token.refreshTokenExpiresAt }),
          scope: scopes,
          client: libClient(client),
          user,
        };
      },

      // Required by the library's model interface; bearer tokens are checked by the authenticator, not here.
      getAccessToken: async () => null,
    };
  }
}

export { InvalidGrantError, OAuthError };
