import type { Kysely } from "kysely";

// GET /v1/runs filtered by repository (and status) pages newest first by id.
// The older indexes have commit_hash, or no repository, before id, so at a
// million runs such a page scanned the account's runs in id order until it
// had 21 of that repository's: for a repository with few runs, nearly all of
// them (bench/explain-runs.ts shows the plans). Plain CREATE INDEX: migrations
// run in one transaction, where CONCURRENTLY is not allowed; it holds off
// writes to runs for the seconds the build takes.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex("runs_account_repository_id_idx").on("runs").columns(["account_id", "repository_id", "id"]).execute();
  await db.schema.createIndex("runs_account_repository_status_idx").on("runs").columns(["account_id", "repository_id", "status", "id"]).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("runs_account_repository_status_idx").ifExists().execute();
  await db.schema.dropIndex("runs_account_repository_id_idx").ifExists().execute();
}
