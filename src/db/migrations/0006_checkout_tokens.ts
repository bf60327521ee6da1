import { sql, type Kysely } from "kysely";

// Checkout tokens: what a run or analysis pod presents to codeplane's git
// endpoint. Only a hash is kept; each token is bound to one workload, one
// repository and one commit, and expires with the workload's deadline. The
// workload's own row may not exist yet when the controller mints (the
// resource, not the row, is the source of truth), so there is no foreign key
// to runs or analyses; the repository's delete removes its tokens.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("checkout_tokens")
    .addColumn("token_hash", "text", (c) => c.primaryKey())
    .addColumn("workload_kind", "text", (c) => c.notNull().check(sql`workload_kind in ('run', 'analysis')`))
    .addColumn("workload_id", "uuid", (c) => c.notNull())
    .addColumn("account_id", "uuid", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("repository_id", "uuid", (c) => c.notNull().references("repositories.id").onDelete("cascade"))
    .addColumn("commit_hash", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .execute();
  await sql`create index checkout_tokens_workload_idx on checkout_tokens (workload_kind, workload_id)`.execute(db);
  await sql`create index checkout_tokens_expires_idx on checkout_tokens (expires_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("checkout_tokens").execute();
}
