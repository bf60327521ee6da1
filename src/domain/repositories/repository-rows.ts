import type { Db } from "../../db/database.ts";
import type { NewRepositoryRow, RepositoryRow, RepositoryUpdate } from "../../db/schema.ts";
import { notFound } from "../errors.ts";
import { keysetPage } from "../shared/keyset.ts";
import type { PageRequest } from "../shared/pagination.ts";

// Every query on repositories. Each takes the account: another account's
// repository is simply not found.

export function findRepository(db: Db, accountId: string, id: string): Promise<RepositoryRow | undefined> {
  return db.selectFrom("repositories").selectAll().where("id", "=", id).where("account_id", "=", accountId).executeTakeFirst();
}

/** The account's repository, or the 404 every endpoint under a repository answers. */
export async function requireRepository(db: Db, accountId: string, id: string): Promise<RepositoryRow> {
  const row = await findRepository(db, accountId, id);
  if (!row) throw notFound("Repository");
  return row;
}

/** A repository of the account with this URL or this name, if any. */
export function findRepositoryByUrlOrName(db: Db, accountId: string, url: string, name: string): Promise<Pick<RepositoryRow, "url" | "name"> | undefined> {
  return db
    .selectFrom("repositories")
    .select(["url", "name"])
    .where("account_id", "=", accountId)
    .where((eb) => eb.or([eb("url", "=", url), eb("name", "=", name)]))
    .executeTakeFirst();
}

export function insertRepository(db: Db, row: NewRepositoryRow): Promise<RepositoryRow> {
  return db.insertInto("repositories").values(row).returningAll().executeTakeFirstOrThrow();
}

/** The updated row; a 404 when the repository is gone (deleted since the caller read it). */
export async function updateRepository(db: Db, accountId: string, id: string, changes: RepositoryUpdate): Promise<RepositoryRow> {
  const row = await db.updateTable("repositories").set(changes).where("id", "=", id).where("account_id", "=", accountId).returningAll().executeTakeFirst();
  if (!row) throw notFound("Repository");
  return row;
}

/** False when the account has no such repository. */
export async function deleteRepository(db: Db, accountId: string, id: string): Promise<boolean> {
  const res = await db.deleteFrom("repositories").where("id", "=", id).where("account_id", "=", accountId).executeTakeFirst();
  return res.numDeletedRows > 0n;
}

export function listRepositories(db: Db, accountId: string, page: PageRequest): Promise<RepositoryRow[]> {
  return keysetPage(db.selectFrom("repositories").selectAll().where("account_id", "=", accountId), page).execute();
}
