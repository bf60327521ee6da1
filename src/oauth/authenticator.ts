import type { Db } from "../db/database.ts";
import type { Principal } from "../domain/auth/scopes.ts";
import { isSecretOf } from "./secrets.ts";
import { liveToken } from "./store.ts";

/** What an authenticator knows of the request: the base URL it came in under (null when the Host is not usable). */
export interface BearerRequest {
  baseUrl: string | null;
}

/**
 * Resolves an OAuth access token to the principal it acts for: the token's
 * account, with its scopes (the grant's, within the API key behind it), as
 * long as the token, its grant, its client and that key all still work, and
 * only when its audience is the base URL the request came in under (RFC 8707:
 * a token issued for another codeplane, or under another host name, is not
 * accepted). Null for anything else, API keys included (the next
 * authenticator's).
 */
export function accessTokenAuthenticator(db: Db, publicUrl: string | null) {
  return async (token: string, request?: BearerRequest): Promise<Principal | null> => {
    if (!isSecretOf("access", token)) return null;
    const audience = request?.baseUrl ?? publicUrl;
    if (!audience) return null;
    const found = await liveToken(db, "access", token);
    if (!found || found.resource !== audience) return null;
    const expiresAt = found.keyExpiresAt && found.keyExpiresAt < found.expiresAt ? found.keyExpiresAt : found.expiresAt;
    return { accountId: found.accountId, scopes: new Set(found.scopes), credential: { kind: "oauth", id: found.id, expiresAt } };
  };
}
