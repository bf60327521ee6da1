import { sql, type Kysely } from "kysely";

// Notifications (issue 31): an account's webhook endpoints and the durable
// queue of deliveries to them. A delivery row is written in the same
// transaction that records a run's or analysis's terminal transition
// (workload-rows.ts recordTransitions), one per enabled endpoint subscribed to
// the event, so an event is never lost to a crash between the status and the
// queue, and never queued twice (transitions are recorded once). Delivery
// workers on every replica claim due rows with FOR UPDATE SKIP LOCKED and a
// lease (available_at in the future while `sending`), as the GitHub intake's
// queue does (0008). The body is rendered on the first attempt and kept, so
// every retry and redelivery sends the same bytes under the same webhook-id.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("notification_endpoints")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("account_id", "uuid", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("events", sql`text[]`, (c) => c.notNull())
    .addColumn("enabled", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("secret_ciphertext", "bytea", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index notification_endpoints_account_idx on notification_endpoints (account_id, id desc)`.execute(db);

  await db.schema
    .createTable("notification_deliveries")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("endpoint_id", "uuid", (c) => c.notNull().references("notification_endpoints.id").onDelete("cascade"))
    .addColumn("account_id", "uuid", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("event", "text", (c) => c.notNull())
    .addColumn("subject_kind", "text", (c) => c.notNull().check(sql`subject_kind in ('run', 'analysis')`))
    .addColumn("subject_id", "uuid", (c) => c.notNull())
    .addColumn("occurred_at", "timestamptz", (c) => c.notNull())
    .addColumn("payload", "text")
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('queued', 'sending', 'delivered', 'failed')`))
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("available_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("retry_until", "timestamptz")
    .addColumn("last_attempt_at", "timestamptz")
    .addColumn("response_status", "integer")
    .addColumn("last_error", "text")
    .addColumn("delivered_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index notification_deliveries_due_idx on notification_deliveries (available_at) where status in ('queued', 'sending')`.execute(db);
  await sql`create index notification_deliveries_endpoint_idx on notification_deliveries (endpoint_id, id desc)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("notification_deliveries").ifExists().execute();
  await db.schema.dropTable("notification_endpoints").ifExists().execute();
}
