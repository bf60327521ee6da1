import { sql, type Kysely } from "kysely";

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("runs")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("account_id", "uuid", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("repository_id", "uuid", (c) => c.notNull().references("repositories.id").onDelete("cascade"))
    .addColumn("commit_hash", "text", (c) => c.notNull())
    .addColumn("workflow_id", "text", (c) => c.notNull().unique())
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('pending','preprocessing','running','completed','failed','cancelled')`))
    // Orders status writes: a mirror update carrying an older rank never overwrites a newer one.
    .addColumn("status_rank", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("experiment_id", "text")
    .addColumn("compute_type", "text", (c) => c.notNull())
    .addColumn("run_config", "jsonb", (c) => c.notNull())
    .addColumn("exit_code", "integer")
    .addColumn("error", "text")
    // Set by the controller once every line the run wrote is in run_log_lines.
    .addColumn("logs_complete", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("stdout_bytes", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("stderr_bytes", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("stdout_truncated", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("stderr_truncated", "boolean", (c) => c.notNull().defaultTo(false))
    // Set by DELETE: the row is hidden at once and removed by the controller
    // once the Run resource is gone, so a reconcile in flight can't resurrect it.
    .addColumn("deleted_at", "timestamptz")
    .addColumn("start_time", "timestamptz")
    .addColumn("close_time", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex("runs_account_id_idx").on("runs").columns(["account_id", "id"]).execute();
  await db.schema.createIndex("runs_account_repository_commit_idx").on("runs").columns(["account_id", "repository_id", "commit_hash", "id"]).execute();
  await db.schema.createIndex("runs_account_status_idx").on("runs").columns(["account_id", "status", "id"]).execute();

  await db.schema
    .createTable("run_log_lines")
    .addColumn("run_id", "uuid", (c) => c.notNull().references("runs.id").onDelete("cascade"))
    .addColumn("seq", "bigint", (c) => c.notNull())
    .addColumn("stream", "text", (c) => c.notNull().check(sql`stream in ('stdout','stderr')`))
    .addColumn("ts", "timestamptz", (c) => c.notNull())
    .addColumn("line", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("run_log_lines_pkey", ["run_id", "seq"])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("run_log_lines").ifExists().execute();
  await db.schema.dropTable("runs").ifExists().execute();
}
