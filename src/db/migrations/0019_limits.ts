import { sql, type Kysely } from "kysely";

// Per-account limits and queueing (design.md, Limits and queueing): the
// operator's per-account overrides of the default limits (null: the default),
// and, on a run's row, why it is queued (mirrored from the Run's status.queue;
// null: not queued). A queued run's position is derived at read time from the
// account's queued rows in id order (ids are time-ordered), so admitting one
// run never rewrites the others.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("account_limits")
    .addColumn("account_id", "uuid", (c) => c.primaryKey().references("accounts.id").onDelete("cascade"))
    .addColumn("executing", "integer", (c) => c.check(sql`executing >= 0`))
    .addColumn("waiting", "integer", (c) => c.check(sql`waiting >= 0`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.alterTable("runs").addColumn("queue_reason", "text").execute();
  // The waiting limit's count and the queue positions read only an account's pending runs.
  await db.schema
    .createIndex("runs_pending_by_account")
    .on("runs")
    .columns(["account_id", "id"])
    .where(sql.ref("status"), "=", "pending")
    .where(sql.ref("deleted_at"), "is", null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("runs_pending_by_account").execute();
  await db.schema.alterTable("runs").dropColumn("queue_reason").execute();
  await db.schema.dropTable("account_limits").execute();
}
