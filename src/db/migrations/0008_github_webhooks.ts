import { sql, type Kysely } from "kysely";

// GitHub webhook deliveries are a durable queue: a delivery is written here
// (verified, before the 202) and handled afterwards by whichever replica
// claims it. A claim is a lease (available_at in the future), so a replica
// killed mid-handling leaves the delivery to be claimed again once the lease
// runs out, and two replicas never hold one at the same time. The payload is
// dropped once the delivery is finished; the record stays for operators.
//
// Check runs are reported from a table of their own: one row per analysis a
// webhook started, with the state last sent to GitHub. A syncer compares it
// with the analysis's status and sends what changed, retrying with backoff,
// so GitHub being away never holds up the analysis.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("github_webhook_deliveries")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("event", "text", (c) => c.notNull())
    .addColumn("action", "text")
    .addColumn("installation_id", "bigint")
    .addColumn("repository_full_name", "text")
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('queued', 'processing', 'handled', 'skipped', 'failed')`))
    .addColumn("reason", "text")
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("payload", "jsonb")
    .addColumn("available_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("received_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("finished_at", "timestamptz")
    .execute();
  await sql`create index github_webhook_deliveries_pending_idx on github_webhook_deliveries (available_at) where status in ('queued', 'processing')`.execute(
    db,
  );
  await sql`create index github_webhook_deliveries_installation_idx on github_webhook_deliveries (installation_id, received_at desc)`.execute(db);

  // What started an analysis: the API, or a webhook delivery (kept with the analysis even once the delivery record is pruned).
  await db.schema
    .alterTable("analyses")
    .addColumn("trigger", "text", (c) =>
      c
        .notNull()
        .defaultTo("api")
        .check(sql`trigger in ('api', 'push', 'pull_request')`),
    )
    .execute();
  await db.schema.alterTable("analyses").addColumn("trigger_delivery_id", "text").execute();

  await db.schema
    .createTable("github_check_runs")
    .addColumn("analysis_id", "uuid", (c) => c.primaryKey().references("analyses.id").onDelete("cascade"))
    .addColumn("installation_id", "bigint", (c) => c.notNull())
    .addColumn("repository_full_name", "text", (c) => c.notNull())
    .addColumn("head_sha", "text", (c) => c.notNull())
    .addColumn("check_run_id", "bigint")
    .addColumn("sent", "text", (c) => c.check(sql`sent in ('queued', 'in_progress', 'completed')`))
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("available_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("last_error", "text")
    .addColumn("abandoned", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index github_check_runs_unsettled_idx on github_check_runs (available_at) where not abandoned and (sent is null or sent <> 'completed')`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("github_check_runs").execute();
  await db.schema.alterTable("analyses").dropColumn("trigger_delivery_id").execute();
  await db.schema.alterTable("analyses").dropColumn("trigger").execute();
  await db.schema.dropTable("github_webhook_deliveries").execute();
}
