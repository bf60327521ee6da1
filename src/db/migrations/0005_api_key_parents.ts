import { sql, type Kysely } from "kysely";

// A key minted through another key (POST /v1/auth/keys) remembers that parent,
// so revoking a key revokes every key created through it. Keys made by the CLI,
// the bootstrap, or before this migration have no parent.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("api_keys")
    .addColumn("parent_id", "uuid", (c) => c.references("api_keys.id").onDelete("cascade"))
    .execute();
  await sql`create index api_keys_parent_id_idx on api_keys (parent_id) where parent_id is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("api_keys").dropColumn("parent_id").execute();
}
