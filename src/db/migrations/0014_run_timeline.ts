import type { Kysely } from "kysely";

// The run's `timeline` (design.md, Environments): the start-up steps the
// cluster recorded (admitted, scheduled, image ready, checked out, environment
// ready), mirrored from the Run's status as one jsonb value, and when the first
// line of output was stored, written by the log archiver (for analyses too,
// whose archive is the same code). Creation, start and end are columns already.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("runs").addColumn("timeline", "jsonb").execute();
  for (const table of ["runs", "analyses"]) {
    await db.schema.alterTable(table).addColumn("first_output_at", "timestamptz").execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ["runs", "analyses"]) {
    await db.schema.alterTable(table).dropColumn("first_output_at").execute();
  }
  await db.schema.alterTable("runs").dropColumn("timeline").execute();
}
