import { sql } from "kysely";
import type { Db } from "../../db/database.ts";
import type { LogLine } from "../../logs/contracts.ts";

// A retried run's next attempt, in Postgres (src/controller/run-retry.ts): done
// by the controller after the lost attempt's pod has stopped and before the
// attempt is recorded in the Run's status, and again, harmlessly, if the
// controller restarts in between.
//
// - The marker line (codeplane's own, on stderr) goes into the run's log at the
//   first seq of the attempt's range, so readers of the stored log and of the
//   live stream see it between the two attempts' lines.
// - What the lost attempt reported is dropped rather than mixed with what the
//   next one reports again: its metric series (the points, the final values)
//   and, through `discardOutputs`, its output files. Its lines stay: they are
//   what happened.

export interface BeginAttemptDeps {
  /** Removes the run's stored output files and revokes its output tokens (OutputService.deleteForRun). */
  discardOutputs(db: Db, runId: string): Promise<unknown>;
}

export async function beginRunAttempt(db: Db, deps: BeginAttemptDeps, runId: string, marker: LogLine): Promise<void> {
  await db.transaction().execute(async (tx) => {
    // The row first, as the log archiver locks it (its counters), so the two take their locks in one order.
    const run = await tx.selectFrom("runs").select(["id"]).where("id", "=", runId).forNoKeyUpdate().executeTakeFirst();
    if (!run) return;
    const inserted = await tx
      .insertInto("run_log_lines")
      .values({ run_id: runId, seq: marker.seq, stream: marker.stream, ts: new Date(marker.ts), line: marker.line })
      .onConflict((oc) => oc.columns(["run_id", "seq"]).doNothing())
      .returning("seq")
      .execute();
    const added = inserted.length > 0;
    await tx.deleteFrom("run_metric_points").where("run_id", "=", runId).execute();
    await tx.deleteFrom("run_metric_series").where("run_id", "=", runId).execute();
    await tx
      .updateTable("runs")
      .set({
        final_metrics: sql`'{}'::jsonb`,
        metrics_dropped: 0,
        // Frames of the lost attempt that arrive late are below the new attempt's range: never counted.
        metrics_seq: sql`greatest(metrics_seq, ${marker.seq})`,
        ...(added && marker.stream === "stderr" && { stderr_bytes: sql`stderr_bytes + ${Buffer.byteLength(marker.line) + 1}` }),
        ...(added && marker.stream === "stdout" && { stdout_bytes: sql`stdout_bytes + ${Buffer.byteLength(marker.line) + 1}` }),
      })
      .where("id", "=", runId)
      .execute();
  });
  await deps.discardOutputs(db, runId);
}

/**
 * Without an object store in this process (a controller-only replica, CODEPLANE_COMPONENTS=controller):
 * the rows and tokens go, so nothing of the lost attempt is listed or sent any more; a file the next
 * attempt sends again replaces its object, one it does not is left in the store.
 */
export async function discardOutputRows(db: Db, runId: string): Promise<void> {
  await db.deleteFrom("run_outputs").where("run_id", "=", runId).execute();
  await db.deleteFrom("output_tokens").where("run_id", "=", runId).execute();
}
