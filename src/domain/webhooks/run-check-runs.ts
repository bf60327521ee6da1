import type { Db } from "../../db/database.ts";
import { RUN_QUEUE } from "./check-run-rows.ts";
import type { CheckRunSource, CheckRunUpdate } from "./check-run-syncer.ts";
import { conclusionOf } from "./check-run-body.ts";
import { runCheckRunName, runCheckRunOutput, type RunCheckRunView } from "./run-check-run-body.ts";

// The check run of a run of a repository with report_check_runs: read from
// the run's row as it stands (a deleted run's too, which ends `cancelled`), so
// GitHub is told the run's latest state and the run itself is never written.

export function runCheckRuns(detailsUrl: (runId: string) => string): CheckRunSource {
  return {
    queue: RUN_QUEUE,
    async describe(db: Db, due) {
      const row = await db
        .selectFrom("runs")
        .select(["id", "status", "error", "exit_code", "deleted_at", "experiment_id", "run_config", "final_metrics", "start_time", "close_time", "attempts"])
        .where("id", "=", due.subject_id)
        .where("account_id", "=", due.account_id)
        .executeTakeFirst();
      if (!row) return null;
      const view: RunCheckRunView = {
        status: row.status,
        error: row.error,
        exit_code: row.exit_code,
        deleted: row.deleted_at !== null,
        experiment_id: row.experiment_id,
        command: row.run_config.command,
        parameters: row.run_config.parameters,
        final_metrics: row.final_metrics ?? {},
        duration_seconds: row.start_time && row.close_time ? Math.max(0, (row.close_time.getTime() - row.start_time.getTime()) / 1000) : null,
        attempts: row.attempts?.length ?? 0,
      };
      const state = due.desired;
      const body: CheckRunUpdate = { status: state, external_id: row.id, details_url: detailsUrl(row.id) };
      if (row.start_time && state !== "queued") body.started_at = row.start_time.toISOString();
      if (state === "completed") {
        body.conclusion = conclusionOf(view);
        body.completed_at = (row.close_time ?? new Date()).toISOString();
        body.output = runCheckRunOutput(view, body.details_url);
      }
      return { name: runCheckRunName(view), body };
    },
  };
}
