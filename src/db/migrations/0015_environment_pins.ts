import { sql, type Kysely } from "kysely";

// Which stored environment each run was promised when its Job was made. The
// run's restore container fetches the archive later (after its checkout, on a
// busy node much later); until the run is past that (running or ended), the
// archive it was promised stays in the store, even if the environment is
// evicted or deleted meanwhile: eviction passes such rows by, and a deleted
// row's archive is purged only once no unfinished run holds a pin on it. A
// pin goes with its run or its environment row.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("environment_pins")
    .addColumn("environment_id", "uuid", (c) => c.notNull().references("environments.id").onDelete("cascade"))
    .addColumn("run_id", "uuid", (c) => c.notNull().references("runs.id").onDelete("cascade"))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("environment_pins_pkey", ["environment_id", "run_id"])
    .execute();
  await sql`create index environment_pins_run on environment_pins (run_id)`.execute(db);
  // The purge's work list: hidden rows whose archive (and row) are still to go.
  await sql`create index environments_deleted on environments (deleted_at) where deleted_at is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists environments_deleted`.execute(db);
  await db.schema.dropTable("environment_pins").ifExists().execute();
}
