import type { Kysely } from "kysely";

// Warm pools (issue 33): what a pool pod's agent measured between its
// assignment and its command's start (each sub-step's milliseconds, and what
// the environment restore said), so that the time a warm run spends before its
// first line can be split up without reading the pod's log, which is the run's
// own output. Written once by the pod over the internal endpoint; null until then.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("pool_pods").addColumn("diagnostics", "jsonb").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("pool_pods").dropColumn("diagnostics").execute();
}
