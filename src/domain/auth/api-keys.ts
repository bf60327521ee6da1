import type { Db } from "../../db/database.ts";
import type { ApiKeyRow } from "../../db/schema.ts";
import { DomainValidationError, notFound } from "../errors.ts";
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
 * Mints a key for an account. `grantable` bounds its scopes: a caller can never
 * create a key more powerful than the credential it is using.
 */
export async function createApiKey(
  db: Db,
  accountId: string,
  input: CreateApiKeyInput,
  grantable: ReadonlySet<Scope> = new Set(SCOPES),
  now = new Date(),
): Promise<CreatedApiKey> {
  const scopes = input.scopes ?? SCOPES.filter((s) => grantable.has(s));
  const beyond = scopes.filter((s) => !grantable.has(s));
  if (beyond.length) {
    throw new DomainValidationError([
      { loc: ["body", "scopes"], msg: `Value error, cannot grant scopes the current credential lacks: ${beyond.join(", ")}`, type: "value_error" },
    ]);
  }
  const expiresAt = input.expires_at ? new Date(input.expires_at) : null;
  if (expiresAt && expiresAt <= now) {
    throw new DomainValidationError([{ loc: ["body", "expires_at"], msg: "Value error, expires_at must be in the future", type: "value_error" }]);
  }
  const { key, prefix, hash } = generateApiKey();
  const row = await db
    .insertInto("api_keys")
    .values({ id: newId(), account_id: accountId, name: input.name, prefix, key_hash: hash, scopes: [...scopes], expires_at: expiresAt })
    .returningAll()
    .executeTakeFirstOrThrow();
  const { last_used_at: _unused, ...shown } = toApiKey(row);
  return { ...shown, key };
}

export async function listApiKeys(db: Db, accountId: string, page: PageRequest): Promise<Page<ApiKey>> {
  const q = db.selectFrom("api_keys").selectAll().where("account_id", "=", accountId).where("revoked_at", "is", null);
  return toPage(await keysetPage(q, page).execute(), page.limit, toApiKey);
}

/** Revocation is immediate: authentication reads the row on every request. */
export async function revokeApiKey(db: Db, accountId: string, keyId: string): Promise<void> {
  const res = await db
    .updateTable("api_keys")
    .set({ revoked_at: new Date() })
    .where("id", "=", keyId)
    .where("account_id", "=", accountId)
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  if (res.numUpdatedRows === 0n) throw notFound("API key");
}

export async function authenticateApiKey(db: Db, token: string, now = new Date()): Promise<Principal | null> {
  if (!isWellFormedApiKey(token)) return null;
  const row = await db
    .selectFrom("api_keys")
    .select(["id", "account_id", "scopes", "expires_at", "last_used_at"])
    .where("key_hash", "=", hashApiKey(token))
    .where("revoked_at", "is", null)
    .executeTakeFirst();
  if (!row || (row.expires_at && row.expires_at <= now)) return null;
  if (!row.last_used_at || now.getTime() - row.last_used_at.getTime() > LAST_USED_PRECISION_MS) {
    await db.updateTable("api_keys").set({ last_used_at: now }).where("id", "=", row.id).execute();
  }
  return { accountId: row.account_id, scopes: new Set(row.scopes as Scope[]), credential: { kind: "api_key", id: row.id } };
}
