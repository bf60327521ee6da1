import { sql, type Kysely } from "kysely";

// Environments: a commit's dependencies, installed once per account and key
// (the hash of the image and of what defines the install, never of a branch
// or commit) by a build Job, stored in the object store and restored into
// later runs. One live row per (account, key) is what makes concurrent runs of
// a new environment share one build. A failed build stays failed for its key,
// with its log, until it is deleted, so a broken lockfile does not rebuild on
// every run.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("environments")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("account_id", "uuid", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    // The repository and commit it was first built from (for its checkout); a deleted repository leaves the cache.
    .addColumn("repository_id", "uuid", (c) => c.references("repositories.id").onDelete("set null"))
    .addColumn("commit_hash", "text", (c) => c.notNull())
    .addColumn("key", "text", (c) => c.notNull().check(sql`key ~ '^[0-9a-f]{64}$'`))
    .addColumn("image", "text", (c) => c.notNull())
    // What the analysis resolved: toolchains, manifests, steps, cache paths, packages, notes.
    .addColumn("definition", "jsonb", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().check(sql`status in ('building','ready','failed')`))
    .addColumn("error", "text")
    // The install's output (its tail, bounded): the user's to read, failed or not.
    .addColumn("log", "text")
    .addColumn("size", "bigint")
    .addColumn("sha256", "text")
    .addColumn("upload_token_hash", "text")
    .addColumn("build_deadline", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("started_at", "timestamptz")
    .addColumn("completed_at", "timestamptz")
    .addColumn("last_used_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("deleted_at", "timestamptz")
    .execute();
  await sql`create unique index environments_account_key_live on environments (account_id, key) where deleted_at is null`.execute(db);
  await sql`create index environments_ready_lru on environments (last_used_at) where status = 'ready' and deleted_at is null`.execute(db);

  // The environment a run was given: {key, image, cache, warnings}; null for environment "none" and older runs.
  await db.schema.alterTable("runs").addColumn("environment", "jsonb").execute();

  // Build pods check out like runs and analyses do.
  await sql`alter table checkout_tokens drop constraint if exists checkout_tokens_workload_kind_check`.execute(db);
  await sql`alter table checkout_tokens add constraint checkout_tokens_workload_kind_check check (workload_kind in ('run', 'analysis', 'environment'))`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from checkout_tokens where workload_kind = 'environment'`.execute(db);
  await sql`alter table checkout_tokens drop constraint if exists checkout_tokens_workload_kind_check`.execute(db);
  await sql`alter table checkout_tokens add constraint checkout_tokens_workload_kind_check check (workload_kind in ('run', 'analysis'))`.execute(db);
  await db.schema.alterTable("runs").dropColumn("environment").execute();
  await db.schema.dropTable("environments").ifExists().execute();
}
