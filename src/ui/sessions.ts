import { createHmac } from "node:crypto";
import type { Db } from "../db/database.ts";
import { authenticateApiKey } from "../domain/auth/api-keys.ts";
import type { Principal } from "../domain/auth/scopes.ts";
import type { Logger } from "../logger.ts";
import { createSession, findSession, revokeSession, sessionCookieName, type SessionInfo } from "../oauth/index.ts";

export interface DashboardSessionOptions {
  db: Db;
  /** CODEPLANE_SESSION_SECONDS: how long a sign-in lasts. */
  sessionSeconds: number;
  /** The current encryption key: the CSRF key is derived from it. */
  encryptionKey: Buffer;
  logger: Logger;
}

/** A working session with what /v1 and the dashboard need of it. */
export interface DashboardSession {
  session: SessionInfo;
  principal: Principal;
  csrfToken: string;
}

/** `name=value` pairs of a Cookie header. */
export function readCookie(header: string, name: string): string | undefined {
  for (const part of header.split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/**
 * The dashboard's sessions: the OAuth server's sign-in sessions (hashed in
 * oauth_sessions, cookie `codeplane_session`), which the dashboard creates by
 * API-key sign-in as the authorization page does, plus a CSRF token bound to
 * each: HMAC-SHA256 of the session id under a key derived from the encryption
 * key, so nothing is stored and it is worthless without the HttpOnly cookie.
 */
export class DashboardSessions {
  readonly #o: DashboardSessionOptions;
  readonly #csrfKey: Buffer;
  readonly #audit: Logger;

  constructor(o: DashboardSessionOptions) {
    this.#o = o;
    this.#csrfKey = createHmac("sha256", o.encryptionKey).update("codeplane dashboard csrf").digest();
    this.#audit = o.logger.child({ component: "ui" });
  }

  get sessionSeconds(): number {
    return this.#o.sessionSeconds;
  }

  csrfToken(sessionId: string): string {
    return createHmac("sha256", this.#csrfKey).update(sessionId).digest("base64url");
  }

  /** The session a Cookie header carries under the base URL's cookie name, if it works now. */
  async resolve(cookieHeader: string, baseUrl: string | null): Promise<DashboardSession | null> {
    const names = baseUrl ? [sessionCookieName(baseUrl)] : ["codeplane_session", "__Host-codeplane_session"];
    const token = names.map((n) => readCookie(cookieHeader, n)).find((v) => v !== undefined);
    if (!token || !/^cps_[A-Za-z0-9_-]{43}$/.test(token)) return null;
    const session = await findSession(this.#o.db, token);
    if (!session) return null;
    // The session acts as the API key it was signed in with: keys it mints are that key's children and expire with it.
    const key = await this.#o.db.selectFrom("api_keys").select("expires_at").where("id", "=", session.apiKeyId).executeTakeFirst();
    const principal: Principal = {
      accountId: session.accountId,
      scopes: new Set(session.scopes),
      credential: { kind: "api_key", id: session.apiKeyId, expiresAt: key?.expires_at ?? null },
    };
    return { session, principal, csrfToken: this.csrfToken(session.id) };
  }

  /** The account's name, which the dashboard's header shows. */
  async accountName(accountId: string): Promise<string | null> {
    const row = await this.#o.db.selectFrom("accounts").select("name").where("id", "=", accountId).executeTakeFirst();
    return row?.name ?? null;
  }

  /** Signs in with an API key: a new session and its cookie value, or null for a key that does not work. */
  async signIn(apiKey: string): Promise<{ token: string; session: SessionInfo } | null> {
    const principal = await authenticateApiKey(this.#o.db, apiKey.trim());
    if (!principal || principal.credential.kind !== "api_key") {
      this.#audit.info({ event: "ui.sign_in_failed" }, "dashboard sign-in refused: not a valid API key");
      return null;
    }
    const created = await createSession(this.#o.db, principal.accountId, principal.credential.id, this.#o.sessionSeconds);
    this.#audit.info(
      { event: "ui.sign_in", account_id: principal.accountId, api_key_id: principal.credential.id, session_id: created.session.id },
      "signed in to the dashboard",
    );
    return created;
  }

  async signOut(session: SessionInfo): Promise<void> {
    await revokeSession(this.#o.db, session.id);
    this.#audit.info({ event: "ui.sign_out", account_id: session.accountId, session_id: session.id }, "signed out of the dashboard");
  }
}
