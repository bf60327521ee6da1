import { sql, type Kysely } from "kysely";

// Migrations take Kysely<any>: they must keep working after the TypeScript
// schema has moved on.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("accounts")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull().unique())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable("api_keys")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("account_id", "uuid", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("prefix", "text", (c) => c.notNull())
    .addColumn("key_hash", "text", (c) => c.notNull().unique())
    .addColumn("scopes", sql`text[]`, (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz")
    .addColumn("last_used_at", "timestamptz")
    .addColumn("revoked_at", "timestamptz")
    .execute();
  await db.schema.createIndex("api_keys_account_id_idx").on("api_keys").columns(["account_id", "id"]).execute();

  await db.schema
    .createTable("repositories")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("account_id", "uuid", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("provider", "text", (c) => c.notNull().check(sql`provider in ('git', 'github')`))
    .addColumn("default_branch", "text")
    .addColumn("integration_id", "uuid")
    .addColumn("auto_analyze", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint("repositories_account_url_key", ["account_id", "url"])
    .addUniqueConstraint("repositories_account_name_key", ["account_id", "name"])
    .execute();
  await db.schema.createIndex("repositories_account_id_idx").on("repositories").columns(["account_id", "id"]).execute();

  await db.schema
    .createTable("environment_variables")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("account_id", "uuid", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("repository_id", "uuid", (c) => c.references("repositories.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("secret", "boolean", (c) => c.notNull())
    .addColumn("key_id", "text", (c) => c.notNull())
    .addColumn("value_ciphertext", "bytea", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // One value per name and scope; NULL repository_id (account scope) needs its own index.
  await sql`create unique index environment_variables_account_scope_key on environment_variables (account_id, name) where repository_id is null`.execute(db);
  await sql`create unique index environment_variables_repository_scope_key on environment_variables (account_id, repository_id, name) where repository_id is not null`.execute(
    db,
  );
  await db.schema.createIndex("environment_variables_account_id_idx").on("environment_variables").columns(["account_id", "id"]).execute();
  await db.schema.createIndex("environment_variables_key_id_idx").on("environment_variables").column("key_id").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of ["environment_variables", "repositories", "api_keys", "accounts"]) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
