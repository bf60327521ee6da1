import type { Db } from "../../db/database.ts";
import { badRequest } from "../errors.ts";
import { createAccount } from "../accounts/accounts.ts";
import { displayPrefix, hashApiKey, isWellFormedApiKey } from "./api-key-token.ts";
import { createApiKey } from "./api-keys.ts";
import { SCOPES } from "./scopes.ts";
import { newId } from "../shared/ids.ts";

/**
 * Makes sure `key` works for `accountName`, creating both if needed. Lets an
 * operator (or the Helm chart, from a Secret) seed the first credential
 * without calling the API. Idempotent: safe on every start.
 */
export async function ensureSeededKey(db: Db, accountName: string, key: string): Promise<{ created: boolean }> {
  if (!isWellFormedApiKey(key)) throw badRequest("CODEPLANE_BOOTSTRAP_API_KEY is not a well-formed codeplane key (cp_...)");
  return db.transaction().execute(async (tx) => {
    let account = await tx.selectFrom("accounts").select("id").where("name", "=", accountName).executeTakeFirst();
    account ??= await createAccount(tx, accountName);
    const hash = hashApiKey(key);
    const existing = await tx.selectFrom("api_keys").select(["account_id", "revoked_at"]).where("key_hash", "=", hash).executeTakeFirst();
    if (existing) {
      if (existing.account_id !== account.id) throw badRequest("CODEPLANE_BOOTSTRAP_API_KEY belongs to another account");
      return { created: false };
    }
    await tx
      .insertInto("api_keys")
      .values({ id: newId(), account_id: account.id, name: "bootstrap", prefix: displayPrefix(key), key_hash: hash, scopes: [...SCOPES] })
      .execute();
    return { created: true };
  });
}

/** On an empty database, creates a first account and an all-scopes key for it. */
export async function createFirstKeyIfEmpty(db: Db, accountName: string): Promise<string | null> {
  return db.transaction().execute(async (tx) => {
    const any = await tx.selectFrom("accounts").select("id").limit(1).executeTakeFirst();
    if (any) return null;
    const account = await createAccount(tx, accountName);
    return (await createApiKey(tx, account.id, { name: "first key" })).key;
  });
}
