import { sql } from "kysely";
import type { Db } from "../../db/database.ts";
import type { ApiKeyRow } from "../../db/schema.ts";
import { DomainError, DomainValidationError, notFound, type ValidationIssue } from "../errors.ts";
import { newId } from "../shared/ids.ts";
import { keysetPage } from "../shared/keyset.ts";
import { toPage, type Page, type PageRequest } from "../shared/pagination.ts";
import { iso, isoOrNull } from "../shared/time.ts";
import { generateApiKey, hashApiKey, isWellFormedApiKey } from "./api-key-token.ts";
import type { ApiKey, CreateApiKeyInput, CreatedApiKey } from "./api-keys.schemas.ts";
import { SCOPES, type Principal, type Scope } from "./scopes.ts";

// Writing last_used_at on every request would turn every read into a write;
// a minute's precision is what people look at it for.
const LAST_USED_PRECISION_MS = 60_000;

const toApiKey = (r: ApiKeyRow): ApiKey => ({
  id: r.id,
  name: r.name,
  prefix: r.prefix,
  scopes: r.scopes as Scope[],
  created_at: iso(r.created_at),
  expires_at: isoOrNull(r.expires_at),
  last_used_at: isoOrNull(r.last_used_at),
});

/**
 * Mints a key for an account. A key minted through another credential (the
 * `creator`; null for the CLI and the bootstrap) is never more powerful than
 * it: its scopes are a subset of the creator's, it expires no later than the
 * creator (a creator that expires cannot mint a key that never does: without
 * `expires_at` the new key gets the creator's expiry), and it remembers an API
 * key creator as its parent, so revoking the parent revokes it too.
 *
 * An OAuth access token cannot mint keys (403): a key is a long-lived bearer
 * secret of its own, and one minted by a client would keep working after the
 * person revoked the grant or the key they signed in with, the two things that
 * end everything the client holds. A client that needs a key asks the person.
 */
export async function createApiKey(
  db: Db,
  accountId: string,
  input: CreateApiKeyInput,
  creator: Principal | null = null,
  now = new Date(),
): Promise<CreatedApiKey> {
  if (creator?.credential.kind === "oauth") {
    throw new DomainError("forbidden", "An OAuth access token cannot create API keys: create keys with an API key or in the dashboard");
  }
  const grantable: ReadonlySet<Scope> = creator?.scopes ?? new Set(SCOPES);
  const scopes = input.scopes ?? SCOPES.filter((s) => grantable.has(s));
  const issues: ValidationIssue[] = [];
  const beyond = scopes.filter((s) => !grantable.has(s));
  if (beyond.length) {
    issues.push({ loc: ["body", "scopes"], msg: `Value error, cannot grant scopes the current credential lacks: ${beyond.join(", ")}`, type: "value_error" });
  }
  const creatorExpiry = creator?.credential.expiresAt ?? null;
  const asked = input.expires_at ? new Date(input.expires_at) : null;
  if (asked && asked <= now) {
    issues.push({ loc: ["body", "expires_at"], msg: "Value error, expires_at must be in the future", type: "value_error" });
  } else if (asked && creatorExpiry && asked > creatorExpiry) {
    issues.push({
      loc: ["body", "expires_at"],
      msg: `Value error, expires_at must not be later than the calling key's expiry (${creatorExpiry.toISOString()})`,
      type: "value_error",
    });
  }
  if (issues.length) throw new DomainValidationError(issues);
  const expiresAt = asked ?? creatorExpiry;
  const parentId = creator?.credential.kind === "api_key" ? creator.credential.id : null;
  const { key, prefix, hash } = generateApiKey();
  const insert = async (tx: Db) => {
    if (parentId) {
      // Holding the parent row (FOR SHARE) until the child is committed: a revocation of the
      // parent running meanwhile waits for us and then revokes the child too, and one that
      // committed first makes this refuse. So no child escapes its parent's revocation.
      const parent = await tx
        .selectFrom("api_keys")
        .select("id")
        .where("id", "=", parentId)
        .where("account_id", "=", accountId)
        .where("revoked_at", "is", null)
        .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", now)]))
        .forShare()
        .executeTakeFirst();
      if (!parent) throw new DomainError("forbidden", "The calling API key has been revoked or has expired");
    }
    return tx
      .insertInto("api_keys")
      .values({ id: newId(), account_id: accountId, name: input.name, prefix, key_hash: hash, scopes: [...scopes], expires_at: expiresAt, parent_id: parentId })
      .returningAll()
      .executeTakeFirstOrThrow();
  };
  const row = parentId && !db.isTransaction ? await db.transaction().execute(insert) : await insert(db);
  const { last_used_at: _unused, ...shown } = toApiKey(row);
  return { ...shown, key };
}

/** A `text[]` of the caller's scopes, for "the key's scopes are all among them" (`<@`). */
const scopeArray = (scopes: ReadonlySet<Scope>) => sql<string[]>`${[...scopes]}::text[]`;

/**
 * The account's live keys. With a `caller`, only the keys it could revoke:
 * those whose scopes are all among its own (a more powerful key is not shown).
 */
export async function listApiKeys(db: Db, accountId: string, page: PageRequest, caller: Principal | null = null): Promise<Page<ApiKey>> {
  let q = db.selectFrom("api_keys").selectAll().where("account_id", "=", accountId).where("revoked_at", "is", null);
  if (caller) q = q.where(sql<boolean>`scopes <@ ${scopeArray(caller.scopes)}`);
  return toPage(await keysetPage(q, page).execute(), page.limit, toApiKey);
}

/**
 * Revokes a key and, with it, every key minted through it (its children, theirs,
 * ...). Immediate: authentication reads the row on every request, or its
 * cache of it, which the row's change empties (api-key-cache.ts). A `caller`
 * cannot revoke a key more powerful than itself (scopes it lacks): 403.
 */
export async function revokeApiKey(db: Db, accountId: string, keyId: string, caller: Principal | null = null): Promise<void> {
  await db.transaction().execute(async (tx) => {
    const target = await tx
      .selectFrom("api_keys")
      .select(["id", "scopes"])
      .where("id", "=", keyId)
      .where("account_id", "=", accountId)
      .where("revoked_at", "is", null)
      .forUpdate()
      .executeTakeFirst();
    if (!target) throw notFound("API key");
    const beyond = caller ? (target.scopes as Scope[]).filter((s) => !caller.scopes.has(s)) : [];
    if (beyond.length) {
      throw new DomainError("forbidden", `Cannot revoke a key with scopes the current credential lacks: ${beyond.join(", ")}`);
    }
    const now = new Date();
    // Each pass sees what committed before it (READ COMMITTED): a child whose creation held
    // its parent while we waited is revoked by the next pass. Stops when a pass finds nothing.
    for (;;) {
      const revoked = await sql<{ id: string }>`
        with recursive tree(id) as (
          select id from api_keys where id = ${target.id}
          union all
          select k.id from api_keys k join tree t on k.parent_id = t.id
        )
        update api_keys set revoked_at = ${now}
        where id in (select id from tree) and revoked_at is null
        returning id`.execute(tx);
      if (revoked.rows.length === 0) break;
    }
  });
}

/** What authentication needs of a live key row; `lastUsedAt` is what was last written. */
export interface KeyGrant {
  id: string;
  principal: Principal;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
}

/** The key's row when it is not revoked (expiry is the caller's check: it changes with the clock, not the row). */
export async function findLiveKey(db: Db, keyHash: string): Promise<KeyGrant | null> {
  const row = await db
    .selectFrom("api_keys")
    .select(["id", "account_id", "scopes", "expires_at", "last_used_at"])
    .where("key_hash", "=", keyHash)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  if (!row) return null;
  return {
    id: row.id,
    expiresAt: row.expires_at,
    lastUsedAt: row.last_used_at,
    principal: { accountId: row.account_id, scopes: new Set(row.scopes as Scope[]), credential: { kind: "api_key", id: row.id, expiresAt: row.expires_at } },
  };
}

/** The grant's principal unless it has expired by `now`; records use at a minute's precision. */
export async function useKey(db: Db, grant: KeyGrant, now: Date): Promise<Principal | null> {
  if (grant.expiresAt && grant.expiresAt <= now) return null;
  if (!grant.lastUsedAt || now.getTime() - grant.lastUsedAt.getTime() > LAST_USED_PRECISION_MS) {
    grant.lastUsedAt = now;
    await db.updateTable("api_keys").set({ last_used_at: now }).where("id", "=", grant.id).execute();
  }
  return grant.principal;
}

export async function authenticateApiKey(db: Db, token: string, now = new Date()): Promise<Principal | null> {
  if (!isWellFormedApiKey(token)) return null;
  const grant = await findLiveKey(db, hashApiKey(token));
  return grant ? useKey(db, grant, now) : null;
}
