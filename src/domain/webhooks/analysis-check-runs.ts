import type { Db } from "../../db/database.ts";
import { findAnalysis, toAnalysis } from "../analyses/analysis-rows.ts";
import { configuredEnvNames } from "../env-vars/env-var-rows.ts";
import { CHECK_RUN_NAME, checkRunOutput, conclusionOf } from "./check-run-body.ts";
import { ANALYSIS_QUEUE } from "./check-run-rows.ts";
import type { CheckRunSource, CheckRunUpdate } from "./check-run-syncer.ts";

// The check run of an analysis a webhook started (codeplane/analysis): its
// experiments, missing variables and a link to the analysis.

export function analysisCheckRuns(detailsUrl: (a: { repository_id: string; commit_hash: string }) => string): CheckRunSource {
  return {
    queue: ANALYSIS_QUEUE,
    async describe(db: Db, due) {
      const row = await findAnalysis(db, due.account_id, due.subject_id);
      if (!row) return null;
      const analysis = toAnalysis(row, await configuredEnvNames(db, row.account_id, row.repository_id));
      const deleted = row.deleted_at !== null;
      const state = due.desired;
      const body: CheckRunUpdate = { status: state, external_id: row.id, details_url: detailsUrl(row) };
      if (row.started_at && state !== "queued") body.started_at = row.started_at.toISOString();
      if (state === "completed") {
        body.conclusion = conclusionOf({ status: row.status, error: row.error, deleted });
        body.completed_at = (row.completed_at ?? new Date()).toISOString();
        body.output = checkRunOutput(analysis, deleted, body.details_url);
      }
      return { name: CHECK_RUN_NAME, body };
    },
  };
}
