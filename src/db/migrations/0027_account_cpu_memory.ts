import { sql, type Kysely } from "kysely";

// Per-account caps of CPU and memory requested at once (design.md, Limits and
// queueing; docs/operators/limits.md): the operator's per-account overrides of
// CODEPLANE_LIMIT_CPU_PER_ACCOUNT and CODEPLANE_LIMIT_MEMORY_PER_ACCOUNT, in
// millicores and bytes (null: the default; 0: no cap for that account).
// bigint for memory: a cap over 2 GiB does not fit an integer of bytes.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("account_limits")
    .addColumn("cpu_millis", "bigint", (c) => c.check(sql`cpu_millis >= 0`))
    .addColumn("memory_bytes", "bigint", (c) => c.check(sql`memory_bytes >= 0`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("account_limits").dropColumn("memory_bytes").dropColumn("cpu_millis").execute();
}
