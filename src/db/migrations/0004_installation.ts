import { sql, type Kysely } from "kysely";

// An installation identity, made once with the database: the controller acts
// only on resources labelled with it, and its Lease is named after it, so two
// installations in one namespace (or one pointed at the wrong database)
// cannot act on each other's work. And rows remember when their resource left
// the cluster other than through the API (kubectl delete, retention), so their
// history stays readable.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("installation")
    .addColumn("singleton", "boolean", (c) =>
      c
        .primaryKey()
        .defaultTo(true)
        .check(sql`singleton`),
    )
    .addColumn("id", "uuid", (c) => c.notNull().defaultTo(sql`gen_random_uuid()`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`insert into installation (singleton) values (true) on conflict do nothing`.execute(db);
  for (const table of ["runs", "analyses"]) {
    await db.schema.alterTable(table).addColumn("resource_deleted_at", "timestamptz").execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ["runs", "analyses"]) await db.schema.alterTable(table).dropColumn("resource_deleted_at").execute();
  await db.schema.dropTable("installation").execute();
}
