import type { Kysely } from "kysely";

// A run's attempts (design.md, Results: `retries` on creation, `attempts` on the
// run): mirrored from the Run's status.attempts as one jsonb array, oldest
// first, each attempt's Job, start, end and how it ended. The retry policy
// itself is part of run_config (`retries`), like the timeout. Null: a run
// whose first Job is not made yet, or one older than retries.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("runs").addColumn("attempts", "jsonb").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("runs").dropColumn("attempts").execute();
}
