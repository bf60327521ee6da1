import { sql, type Kysely } from "kysely";

// Code-host integrations (GitHub App installations connected to an account)
// and what links a repository to one. An installation is connected to at most
// one account at a time: installation_id is unique among live rows (a
// disconnected or deleted one keeps its row, with deleted_at, for the record,
// and may be connected again later). GitHub's ids fit in a JavaScript number
// but not in int4, so they are int8.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("integrations")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("account_id", "uuid", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("provider", "text", (c) => c.notNull().check(sql`provider in ('github')`))
    .addColumn("installation_id", "int8", (c) => c.notNull())
    .addColumn("account_login", "text", (c) => c.notNull())
    .addColumn("account_type", "text", (c) => c.notNull())
    .addColumn("repository_selection", "text", (c) => c.notNull())
    .addColumn("suspended", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("deleted_at", "timestamptz")
    .execute();
  await sql`create unique index integrations_live_installation_key on integrations (provider, installation_id) where deleted_at is null`.execute(db);
  await sql`create index integrations_account_idx on integrations (account_id, id) where deleted_at is null`.execute(db);

  // The GitHub repository's own id: stable across renames and transfers, and what webhooks name.
  await sql`alter table repositories add column github_repository_id int8`.execute(db);
  await sql`alter table repositories add constraint repositories_integration_fk foreign key (integration_id) references integrations (id) on delete set null`.execute(
    db,
  );
  await sql`create index repositories_integration_idx on repositories (integration_id, github_repository_id) where integration_id is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists repositories_integration_idx`.execute(db);
  await sql`alter table repositories drop constraint if exists repositories_integration_fk`.execute(db);
  await sql`alter table repositories drop column if exists github_repository_id`.execute(db);
  await db.schema.dropTable("integrations").execute();
}
