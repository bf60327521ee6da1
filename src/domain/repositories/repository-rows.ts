import { CompiledQuery } from "kysely";
import type { Db } from "../../db/database.ts";
import { statementMarker } from "../../db/named-statements.ts";
import type { NewRepositoryRow, RepositoryRow, RepositoryUpdate } from "../../db/schema.ts";
import { notFound } from "../errors.ts";
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

/**
 * The columns a listed repository is written from (toRepository): reading the
 * others too (the account's id on every row, GitHub's id) cost 7% of the
 * service's CPU per page (bench, measured side by side).
 */
export const REPOSITORY_LIST_COLUMNS = [
  "id",
  "name",
  "url",
  "provider",
  "default_branch",
  "integration_id",
  "auto_analyze",
  "report_check_runs",
  "created_at",
  "updated_at",
] as const;
export type RepositoryListRow = Pick<RepositoryRow, (typeof REPOSITORY_LIST_COLUMNS)[number]>;

// The most requested query: written out and named, so each connection plans it
// once (src/db/named-statements.ts) and no request pays for building it. It is
// keysetPage()'s query; its generic plan reads only the page
// (test/db/named-statements.test.ts).
const pageSql = (name: string, after: string) =>
  `${statementMarker(name)}select ${REPOSITORY_LIST_COLUMNS.join(", ")} from repositories where account_id = $1${after} order by id desc limit $2`;
export const REPOSITORY_PAGE_SQL = { first: pageSql("repositories_page", ""), after: pageSql("repositories_page_after", " and id < $3") };

/** A page of the account's repositories, newest first, with one row more (see toPage). */
export async function listRepositories(db: Db, accountId: string, page: PageRequest): Promise<RepositoryListRow[]> {
  const query = page.cursor
    ? CompiledQuery.raw(REPOSITORY_PAGE_SQL.after, [accountId, page.limit + 1, page.cursor])
    : CompiledQuery.raw(REPOSITORY_PAGE_SQL.first, [accountId, page.limit + 1]);
  return (await db.executeQuery<RepositoryListRow>(query)).rows;
}
