import { sql, type Kysely } from "kysely";

// Every phase a workload went through, in order, not only the latest: the log
// stream's status events are read from here, so a run that went pending ->
// preprocessing -> running -> completed between two reads of its row still
// shows each phase once (issue 28). Rows are written in the same transaction
// as the status they record (src/domain/workloads/transitions.ts). A phase is
// recorded at most once per workload (phases only move forward), `seq` orders
// them, `at` is when the phase began as far as the cluster said (a container's
// startedAt, a completion time) or when codeplane saw it, and `inferred` marks
// a phase codeplane never saw itself but that must have happened (a run seen
// finished whose command had started was running). The run's `timeline`
// (design.md, Environments) can grow from these rows.

export async function up(db: Kysely<any>): Promise<void> {
  for (const [table, owner, key] of [
    ["run_transitions", "runs", "run_id"],
    ["analysis_transitions", "analyses", "analysis_id"],
  ] as const) {
    await db.schema
      .createTable(table)
      .addColumn(key, "uuid", (c) => c.notNull().references(`${owner}.id`).onDelete("cascade"))
      .addColumn("seq", "integer", (c) => c.notNull())
      .addColumn("phase", "text", (c) => c.notNull())
      .addColumn("at", "timestamptz", (c) => c.notNull())
      .addColumn("inferred", "boolean", (c) => c.notNull().defaultTo(false))
      .addPrimaryKeyConstraint(`${table}_pkey`, [key, "seq"])
      .addUniqueConstraint(`${table}_phase_key`, [key, "phase"])
      .execute();
    // What is there already: its current phase, the only one known.
    await sql`insert into ${sql.table(table)} (${sql.ref(key)}, seq, phase, at, inferred) select id, 1, status, updated_at, true from ${sql.table(owner)}`.execute(
      db,
    );
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("analysis_transitions").ifExists().execute();
  await db.schema.dropTable("run_transitions").ifExists().execute();
}
