import { sql } from "kysely";
import type { Db } from "../../db/database.ts";
import { badRequest } from "../errors.ts";
import { accountNameSchema } from "../accounts/accounts.ts";
import { displayPrefix, hashApiKey, isWellFormedApiKey } from "./api-key-token.ts";
import { createApiKey } from "./api-keys.ts";
import { SCOPES } from "./scopes.ts";
import { newId } from "../shared/ids.ts";

// Every replica runs these on start, so on a fresh install they run at the same
// moment against the same empty database. Each holds a transaction-scoped
// advisory lock, so they run one after another and the later one sees what the
// earlier one created; the inserts also tolerate a row created by anything
// else meanwhile (ON CONFLICT), e.g. `codeplane accounts create` by hand.
const BOOTSTRAP_LOCK = sql`select pg_advisory_xact_lock(hashtext('codeplane:bootstrap'))`;

/** The account's id, creating the account when it does not exist (idempotent under concurrency). */
async function ensureAccount(tx: Db, accountName: string): Promise<string> {
  const name = accountNameSchema.parse(accountName);
  await tx
    .insertInto("accounts")
    .values({ id: newId(), name })
    .onConflict((oc) => oc.column("name").doNothing())
    .execute();
  return (await tx.selectFrom("accounts").select("id").where("name", "=", name).executeTakeFirstOrThrow()).id;
}

/**
 * Makes sure `key` works for `accountName`, creating both if needed. Lets an
 * operator (or the Helm chart, from a Secret) seed the first credential
 * without calling the API. Idempotent: safe on every start, from every replica at once.
 */
export async function ensureSeededKey(db: Db, accountName: string, key: string): Promise<{ created: boolean }> {
  if (!isWellFormedApiKey(key)) throw badRequest("CODEPLANE_BOOTSTRAP_API_KEY is not a well-formed codeplane key (cp_...)");
  return db.transaction().execute(async (tx) => {
    await BOOTSTRAP_LOCK.execute(tx);
    const accountId = await ensureAccount(tx, accountName);
    const hash = hashApiKey(key);
    const inserted = await tx
      .insertInto("api_keys")
      .values({ id: newId(), account_id: accountId, name: "bootstrap", prefix: displayPrefix(key), key_hash: hash, scopes: [...SCOPES] })
      .onConflict((oc) => oc.column("key_hash").doNothing())
      .returning("id")
      .executeTakeFirst();
    if (inserted) return { created: true };
    const existing = await tx.selectFrom("api_keys").select("account_id").where("key_hash", "=", hash).executeTakeFirstOrThrow();
    if (existing.account_id !== accountId) throw badRequest("CODEPLANE_BOOTSTRAP_API_KEY belongs to another account");
    return { created: false };
  });
}

/** On an empty database, creates a first account and an all-scopes key for it; null when there already is an account. */
export async function createFirstKeyIfEmpty(db: Db, accountName: string): Promise<string | null> {
  return db.transaction().execute(async (tx) => {
    await BOOTSTRAP_LOCK.execute(tx);
    const any = await tx.selectFrom("accounts").select("id").limit(1).executeTakeFirst();
    if (any) return null;
    const accountId = await ensureAccount(tx, accountName);
    return (await createApiKey(tx, accountId, { name: "first key" })).key;
  });
}
