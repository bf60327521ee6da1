import { sql, type Kysely } from "kysely";

// Run outputs (issue 31): the files a run wrote to $CODEPLANE_OUTPUT_DIR,
// which its pod sends to codeplane's internal endpoint when its command ends.
// The bytes are in the object store under outputs/<run_id>/<n>; a row is
// written only once its object is stored whole, so a refused or broken upload
// lists nothing. A refused file is a row with `refused` set (and no object),
// so the run can say why. No foreign key to runs: when a run's row goes (by
// any path) its outputs' objects must go too, so the sweeper
// (src/domain/outputs) deletes the object, then the row, of every output
// whose run is gone or which is older than the retention.
//
// output_tokens: what a run's pod presents to upload its outputs. Unlike the
// checkout token (revoked when the command starts) it lives until the run's
// deadline, collection margin and slack, and opens one thing: uploads to its
// own run's outputs.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("run_outputs")
    .addColumn("run_id", "uuid", (c) => c.notNull())
    .addColumn("account_id", "uuid", (c) => c.notNull())
    .addColumn("path", "text", (c) => c.notNull())
    .addColumn("object_key", "text")
    .addColumn("size", "bigint", (c) => c.notNull())
    .addColumn("sha256", "text")
    .addColumn("content_type", "text")
    .addColumn("refused", "text")
    .addColumn("stored_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("run_outputs_pkey", ["run_id", "path"])
    .execute();
  await sql`create index run_outputs_account on run_outputs (account_id) where refused is null`.execute(db);
  await sql`create index run_outputs_stored_at on run_outputs (stored_at)`.execute(db);
  await db.schema
    .createTable("output_tokens")
    .addColumn("token_hash", "text", (c) => c.primaryKey())
    .addColumn("run_id", "uuid", (c) => c.notNull())
    .addColumn("account_id", "uuid", (c) => c.notNull())
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .execute();
  await sql`create index output_tokens_run on output_tokens (run_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("output_tokens").ifExists().execute();
  await db.schema.dropTable("run_outputs").ifExists().execute();
}
