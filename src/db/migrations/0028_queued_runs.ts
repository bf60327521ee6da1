import { sql, type Kysely } from "kysely";

// Queue positions of runs that wait in any phase (design.md, Limits and
// queueing). With Kueue admitting, a run may wait after it left `pending`: a
// retried run's next attempt goes through Kueue again while the run stays
// `running` (its status never goes back), and a run whose environment was
// built waits for its turn in `preprocessing`. The API derives a queued run's
// position from the account's rows with a queue reason, in id order; this
// index serves that read whatever their status (0019's covers only `pending`,
// for the waiting limit's count).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex("runs_queued_by_account")
    .on("runs")
    .columns(["account_id", "id"])
    .where(sql.ref("queue_reason"), "is not", null)
    .where(sql.ref("deleted_at"), "is", null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("runs_queued_by_account").execute();
}
