import type { Db } from "../db/database.ts";
import { SCOPES, type Scope } from "../domain/auth/scopes.ts";
import { newId } from "../domain/shared/ids.ts";
import { hashSecret, newSecret } from "./secrets.ts";

// The rows behind grants, codes, tokens and sessions. Every secret is stored
// as its SHA-256 only; what a credential may do is always read together with
// the API key it derives from (a revoked or expired key ends it at once).

export const onlyScopes = (values: readonly string[]): Scope[] => SCOPES.filter((s) => values.includes(s));

/** The live API key behind a credential: its account and scopes; null when revoked or expired. */
export async function liveKey(db: Db, apiKeyId: string, now = new Date()): Promise<{ accountId: string; scopes: Scope[]; expiresAt: Date | null } | null> {
  const row = await db
    .selectFrom("api_keys")
    .select(["account_id", "scopes", "expires_at"])
    .where("id", "=", apiKeyId)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  if (!row || (row.expires_at && row.expires_at <= now)) return null;
  return { accountId: row.account_id, scopes: onlyScopes(row.scopes), expiresAt: row.expires_at };
}

// ------------------------------------------------------------------ grants

export interface GrantRow {
  id: string;
  accountId: string;
  clientId: string;
  apiKeyId: string;
  scopes: Scope[];
}

/** The account's live grant to a client, if it covers `scopes` and its key still works. */
export async function rememberedGrant(db: Db, accountId: string, clientId: string, scopes: readonly Scope[]): Promise<GrantRow | null> {
  const row = await db
    .selectFrom("oauth_grants as g")
    .innerJoin("api_keys as k", "k.id", "g.api_key_id")
    .select(["g.id", "g.account_id", "g.client_id", "g.api_key_id", "g.scopes"])
    .where("g.account_id", "=", accountId)
    .where("g.client_id", "=", clientId)
    .where("g.revoked_at", "is", null)
    .where("k.revoked_at", "is", null)
    .where((eb) => eb.or([eb("k.expires_at", "is", null), eb("k.expires_at", ">", new Date())]))
    .executeTakeFirst();
  if (!row || !scopes.every((s) => row.scopes.includes(s))) return null;
  return { id: row.id, accountId: row.account_id, clientId: row.client_id, apiKeyId: row.api_key_id, scopes: onlyScopes(row.scopes) };
}

/** Records consent: the live grant gains the scopes (and follows the key signed in with now), or a new grant is made. */
export async function recordConsent(db: Db, accountId: string, clientId: string, apiKeyId: string, scopes: readonly Scope[]): Promise<GrantRow> {
  return db.transaction().execute(async (tx) => {
    const now = new Date();
    const live = await tx
      .selectFrom("oauth_grants")
      .select(["id", "scopes"])
      .where("account_id", "=", accountId)
      .where("client_id", "=", clientId)
      .where("revoked_at", "is", null)
      .forUpdate()
      .executeTakeFirst();
    if (live) {
      const merged = onlyScopes([...live.scopes, ...scopes]);
      await tx.updateTable("oauth_grants").set({ scopes: merged, api_key_id: apiKeyId, updated_at: now }).where("id", "=", live.id).execute();
      return { id: live.id, accountId, clientId, apiKeyId, scopes: merged };
    }
    const id = newId();
    await tx
      .insertInto("oauth_grants")
      .values({ id, account_id: accountId, client_id: clientId, api_key_id: apiKeyId, scopes: [...scopes], created_at: now, updated_at: now })
      .execute();
    return { id, accountId, clientId, apiKeyId, scopes: [...scopes] };
  });
}

// ------------------------------------------------------------------- codes

export const CODE_SECONDS = 60;

export async function issueCode(
  db: Db,
  c: { grant: GrantRow; redirectUri: string; scopes: readonly Scope[]; resource: string; codeChallenge: string },
  now = new Date(),
): Promise<string> {
  const code = newSecret("code");
  await db
    .insertInto("oauth_codes")
    .values({
      code_hash: hashSecret(code),
      grant_id: c.grant.id,
      client_id: c.grant.clientId,
      account_id: c.grant.accountId,
      api_key_id: c.grant.apiKeyId,
      redirect_uri: c.redirectUri,
      scopes: [...c.scopes],
      resource: c.resource,
      code_challenge: c.codeChallenge,
      family_id: newId(),
      created_at: now,
      expires_at: new Date(now.getTime() + CODE_SECONDS * 1000),
    })
    .execute();
  return code;
}

// ------------------------------------------------------------------ tokens

/** Revokes every token of a family (a refresh chain, with the access tokens issued along it). Returns how many. */
export async function revokeFamily(db: Db, familyId: string, now = new Date()): Promise<number> {
  const r = await db.updateTable("oauth_tokens").set({ revoked_at: now }).where("family_id", "=", familyId).where("revoked_at", "is", null).executeTakeFirst();
  return Number(r.numUpdatedRows);
}

export interface AccessTokenInfo {
  id: string;
  accountId: string;
  clientId: string;
  scopes: Scope[];
  resource: string;
  expiresAt: Date;
  createdAt: Date;
  keyExpiresAt: Date | null;
}

/**
 * A token that works now: not revoked or rotated, not expired, its grant (if
 * any) live, its client not deleted, its API key live.
 */
export async function liveToken(
  db: Db,
  kind: "access" | "refresh",
  token: string,
  now = new Date(),
): Promise<(AccessTokenInfo & { familyId: string; grantId: string | null; apiKeyId: string }) | null> {
  const row = await db
    .selectFrom("oauth_tokens as t")
    .innerJoin("api_keys as k", "k.id", "t.api_key_id")
    .innerJoin("oauth_clients as c", "c.client_id", "t.client_id")
    .leftJoin("oauth_grants as g", "g.id", "t.grant_id")
    .select([
      "t.id",
      "t.account_id",
      "t.client_id",
      "t.scopes",
      "t.resource",
      "t.expires_at",
      "t.created_at",
      "t.family_id",
      "t.grant_id",
      "t.api_key_id",
      "k.scopes as key_scopes",
      "k.expires_at as key_expires_at",
    ])
    .where("t.token_hash", "=", hashSecret(token))
    .where("t.kind", "=", kind)
    .where("t.revoked_at", "is", null)
    .where("t.rotated_at", "is", null)
    .where("t.expires_at", ">", now)
    .where("k.revoked_at", "is", null)
    .where((eb) => eb.or([eb("k.expires_at", "is", null), eb("k.expires_at", ">", now)]))
    .where("c.deleted_at", "is", null)
    .where((eb) => eb.or([eb("t.grant_id", "is", null), eb("g.revoked_at", "is", null)]))
    .executeTakeFirst();
  if (!row) return null;
  return {
    id: row.id,
    accountId: row.account_id,
    clientId: row.client_id,
    scopes: onlyScopes(row.scopes.filter((s) => row.key_scopes.includes(s))),
    resource: row.resource,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    keyExpiresAt: row.key_expires_at,
    familyId: row.family_id,
    grantId: row.grant_id,
    apiKeyId: row.api_key_id,
  };
}

/** Any token row by its value (live or not), for revocation and reuse detection. */
export async function tokenRow(db: Db, token: string) {
  return db.selectFrom("oauth_tokens").selectAll().where("token_hash", "=", hashSecret(token)).executeTakeFirst();
}

// ---------------------------------------------------------------- sessions

export interface SessionInfo {
  id: string;
  accountId: string;
  apiKeyId: string;
  /** The scopes of the API key signed in with. */
  scopes: Scope[];
  expiresAt: Date;
}

export async function createSession(
  db: Db,
  accountId: string,
  apiKeyId: string,
  seconds: number,
  now = new Date(),
): Promise<{ token: string; session: SessionInfo }> {
  const token = newSecret("session");
  const id = newId();
  const expiresAt = new Date(now.getTime() + seconds * 1000);
  await db
    .insertInto("oauth_sessions")
    .values({ id, token_hash: hashSecret(token), account_id: accountId, api_key_id: apiKeyId, created_at: now, expires_at: expiresAt })
    .execute();
  const key = await liveKey(db, apiKeyId, now);
  return { token, session: { id, accountId, apiKeyId, scopes: key?.scopes ?? [], expiresAt } };
}

/** The session a cookie names, if it works now (not revoked, not expired, its API key live). */
export async function findSession(db: Db, token: string, now = new Date()): Promise<SessionInfo | null> {
  const row = await db
    .selectFrom("oauth_sessions as s")
    .innerJoin("api_keys as k", "k.id", "s.api_key_id")
    .select(["s.id", "s.account_id", "s.api_key_id", "s.expires_at", "k.scopes"])
    .where("s.token_hash", "=", hashSecret(token))
    .where("s.revoked_at", "is", null)
    .where("s.expires_at", ">", now)
    .where("k.revoked_at", "is", null)
    .where((eb) => eb.or([eb("k.expires_at", "is", null), eb("k.expires_at", ">", now)]))
    .executeTakeFirst();
  if (!row) return null;
  return { id: row.id, accountId: row.account_id, apiKeyId: row.api_key_id, scopes: onlyScopes(row.scopes), expiresAt: row.expires_at };
}

export async function revokeSession(db: Db, id: string): Promise<void> {
  await db.updateTable("oauth_sessions").set({ revoked_at: new Date() }).where("id", "=", id).where("revoked_at", "is", null).execute();
}

/** Deletes what can never work again (expired codes, tokens and sessions), a day after they stopped working. */
export async function pruneExpired(db: Db, now = new Date()): Promise<void> {
  const before = new Date(now.getTime() - 86_400_000);
  await db.deleteFrom("oauth_codes").where("expires_at", "<", before).execute();
  await db.deleteFrom("oauth_tokens").where("expires_at", "<", before).execute();
  await db.deleteFrom("oauth_sessions").where("expires_at", "<", before).execute();
}
