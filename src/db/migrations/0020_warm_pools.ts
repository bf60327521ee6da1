import { sql, type Kysely } from "kysely";

// Warm pools (issue 33; design.md, Limits and queueing): one row per pool pod
// the controller started. The row is the claim protocol's single source of
// truth (docs/developers/warm-pools.md): a pod moves waiting -> claimed (one
// run, set once) -> assigned (its assignment handed out, once) and never
// back; retired and lost are ends. `run_id` is unique, so a run has at most
// one pod, and only a waiting row can take a run, so a pod has at most one.
// The pod proves who it is with a credential stored only as a SHA-256; the
// assignment (checkout token, command, the run's variables) is sealed with
// the installation's encryption key and erased when it is handed out.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("pool_pods")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("pool", "text", (c) => c.notNull())
    .addColumn("namespace", "text", (c) => c.notNull())
    .addColumn("job_name", "text", (c) => c.notNull())
    .addColumn("credential_hash", "text", (c) => c.notNull().unique())
    .addColumn("state", "text", (c) =>
      c
        .notNull()
        .defaultTo("waiting")
        .check(sql`state in ('waiting', 'claimed', 'assigned', 'retired', 'lost')`),
    )
    .addColumn("run_id", "uuid", (c) => c.unique())
    .addColumn("assignment_key_id", "text")
    .addColumn("assignment_ciphertext", "bytea")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("ready_at", "timestamptz")
    .addColumn("claimed_at", "timestamptz")
    .addColumn("assigned_at", "timestamptz")
    .addColumn("checked_out_at", "timestamptz")
    .addColumn("environment_ready_at", "timestamptz")
    .addColumn("started_at", "timestamptz")
    .addColumn("ended_at", "timestamptz")
    .addUniqueConstraint("pool_pods_job", ["namespace", "job_name"])
    .execute();
  // A claim takes the oldest ready waiting pod of its pool.
  await db.schema.createIndex("pool_pods_waiting").on("pool_pods").columns(["pool", "created_at"]).where(sql.ref("state"), "=", "waiting").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("pool_pods").execute();
}
