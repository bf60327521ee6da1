import { sql, type Kysely } from "kysely";

// Results of a run beyond its output (issue 31): the metric series a run
// reports (printed `::metric` lines and $CODEPLANE_METRICS_FILE records), its
// final values on the run's row for comparison lists, the run a rerun repeats,
// and the Idempotency-Key claims of run creation.
//
// A point is keyed by where it came from (the log frame's seq and the record's
// place in it), so a log read twice after a controller restart stores it once.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("runs")
    .addColumn("final_metrics", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("metrics_dropped", "integer", (c) => c.notNull().defaultTo(0))
    // The highest log frame seq whose metrics were taken (stored or refused): a log read again is not counted again.
    .addColumn("metrics_seq", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("rerun_of", "uuid")
    .execute();
  // One row per series: its point count (the per-series bound) and the point the final value is taken from.
  await db.schema
    .createTable("run_metric_series")
    .addColumn("run_id", "uuid", (c) => c.notNull().references("runs.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("points", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("last_step", "bigint", (c) => c.notNull())
    .addColumn("last_value", "double precision", (c) => c.notNull())
    .addPrimaryKeyConstraint("run_metric_series_pkey", ["run_id", "name"])
    .execute();
  await db.schema
    .createTable("run_metric_points")
    .addColumn("run_id", "uuid", (c) => c.notNull().references("runs.id").onDelete("cascade"))
    .addColumn("source", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("step", "bigint", (c) => c.notNull())
    .addColumn("value", "double precision", (c) => c.notNull())
    .addColumn("ts", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("run_metric_points_pkey", ["run_id", "source"])
    .execute();
  await sql`create index run_metric_points_series on run_metric_points (run_id, name, step)`.execute(db);
  await db.schema
    .createTable("run_idempotency_keys")
    .addColumn("account_id", "uuid", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("key", "text", (c) => c.notNull())
    .addColumn("fingerprint", "text", (c) => c.notNull())
    // Which request holds the claim: only it may fill run_id in or give the claim up.
    .addColumn("claim", "uuid", (c) => c.notNull())
    // null while the first request is still creating its run.
    .addColumn("run_id", "uuid")
    .addColumn("claimed_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("run_idempotency_keys_pkey", ["account_id", "key"])
    .execute();
  await sql`create index run_idempotency_keys_expires on run_idempotency_keys (expires_at)`.execute(db);
  // The comparison list: one experiment's runs, newest first.
  await sql`create index runs_account_experiment_id_idx on runs (account_id, experiment_id, id) where experiment_id is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists runs_account_experiment_id_idx`.execute(db);
  await db.schema.dropTable("run_idempotency_keys").ifExists().execute();
  await db.schema.dropTable("run_metric_points").ifExists().execute();
  await db.schema.dropTable("run_metric_series").ifExists().execute();
  await db.schema.alterTable("runs").dropColumn("rerun_of").dropColumn("metrics_seq").dropColumn("metrics_dropped").dropColumn("final_metrics").execute();
}
