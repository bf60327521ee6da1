import { sql, type Kysely } from "kysely";

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("analyses")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("account_id", "uuid", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("repository_id", "uuid", (c) => c.notNull().references("repositories.id").onDelete("cascade"))
    .addColumn("commit_hash", "text", (c) => c.notNull())
    .addColumn("branch", "text")
    .addColumn("language", "text", (c) => c.notNull().check(sql`language in ('en','ja')`))
    .addColumn("workflow_id", "text", (c) => c.notNull().unique())
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('pending','running','completed','failed','cancelled')`))
    .addColumn("status_rank", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("exit_code", "integer")
    .addColumn("error", "text")
    // The analyzer's validated output (@codeplane/analyzer, packages/analyzer/src/model.ts), written before the status turns completed.
    .addColumn("result", "jsonb")
    .addColumn("logs_complete", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("stdout_bytes", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("stderr_bytes", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("stdout_truncated", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("stderr_truncated", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("deleted_at", "timestamptz")
    .addColumn("started_at", "timestamptz")
    .addColumn("completed_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // One live analysis per repository and commit: concurrent POSTs race on this
  // index, and the loser returns the winner's analysis. A deleted one no longer counts.
  await sql`create unique index analyses_repository_commit_live on analyses (repository_id, commit_hash) where deleted_at is null`.execute(db);
  await db.schema.createIndex("analyses_account_repository_idx").on("analyses").columns(["account_id", "repository_id", "id"]).execute();

  await db.schema
    .createTable("analysis_log_lines")
    .addColumn("analysis_id", "uuid", (c) => c.notNull().references("analyses.id").onDelete("cascade"))
    .addColumn("seq", "bigint", (c) => c.notNull())
    .addColumn("stream", "text", (c) => c.notNull().check(sql`stream in ('stdout','stderr')`))
    .addColumn("ts", "timestamptz", (c) => c.notNull())
    .addColumn("line", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("analysis_log_lines_pkey", ["analysis_id", "seq"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("analysis_log_lines").ifExists().execute();
  await db.schema.dropTable("analyses").ifExists().execute();
}
