import type { Db } from "../../db/database.ts";
import type { Logger } from "../../logger.ts";
import { findAnalysis, toAnalysis } from "../analyses/analysis-rows.ts";
import { configuredEnvNames } from "../env-vars/env-var-rows.ts";
import { DrainLoop } from "../shared/drain-loop.ts";
import { CHECK_RUN_NAME, checkRunOutput, conclusionOf, type CheckRunState, type Conclusion } from "./check-run-body.ts";
import { claimDueCheckRun, recordFailure, recordSent, type DueCheckRun } from "./check-run-rows.ts";

// Tells GitHub what became of each analysis a webhook started: created
// `queued`, then `in_progress`, then always completed. It compares the
// analysis's status with what GitHub was last told, so a missed step (a
// restart, GitHub away) is caught up with the current state rather than
// replayed; failures are retried with backoff and never touch the analysis.

/** The body of a create or update, in GitHub's REST shape. */
export interface CheckRunRequest {
  name: string;
  head_sha: string;
  status: CheckRunState;
  external_id: string;
  details_url: string;
  started_at?: string;
  conclusion?: Conclusion;
  completed_at?: string;
  output?: { title: string; summary: string };
}

/** GitHub's check-runs API, for one installation's repository (the adapter is src/integrations/github). */
export interface CheckRunsApi {
  create(installationId: number, repositoryFullName: string, body: CheckRunRequest): Promise<string>;
  update(installationId: number, repositoryFullName: string, checkRunId: string, body: Omit<CheckRunRequest, "name" | "head_sha">): Promise<void>;
}

/** Thrown (or any error with `permanent: true`) when asking again cannot work: the installation or repository is gone. */
export interface PermanentFailure {
  permanent: true;
}
const isPermanent = (err: unknown) => typeof err === "object" && err !== null && (err as { permanent?: unknown }).permanent === true;

export interface CheckRunSyncerOptions {
  db: Db;
  logger: Logger;
  api: CheckRunsApi;
  /** Where the check run's "Details" link points: the analysis in the dashboard. */
  detailsUrl(analysis: { repository_id: string; commit_hash: string }): string;
  leaseSeconds?: number;
  pollMs?: number;
  /** Attempts before a check run is given up on (its last error kept). */
  maxAttempts?: number;
  count?(outcome: "sent" | "retried" | "abandoned"): void;
}

export const checkRunRetrySeconds = (attempt: number) => Math.min(900, 5 * 2 ** attempt);

export class CheckRunSyncer extends DrainLoop {
  readonly #o: CheckRunSyncerOptions;

  constructor(o: CheckRunSyncerOptions) {
    super({ name: "check runs", logger: o.logger, pollMs: o.pollMs ?? 2000, next: () => this.#next() });
    this.#o = o;
  }

  async #next(): Promise<boolean> {
    const due = await claimDueCheckRun(this.#o.db, this.#o.leaseSeconds ?? 60);
    if (!due) return false;
    await this.#send(due);
    return true;
  }

  async #send(due: DueCheckRun): Promise<void> {
    const { db, api, logger } = this.#o;
    const log = logger.child({ analysis_id: due.analysis_id, repository: due.repository_full_name, check_run: due.check_run_id });
    const row = await findAnalysis(db, due.account_id, due.analysis_id);
    if (!row) return; // removed with its repository: the cascade removes this row too
    const analysis = toAnalysis(row, await configuredEnvNames(db, row.account_id, row.repository_id));
    const deleted = row.deleted_at !== null;
    const state = due.desired;
    const body: Omit<CheckRunRequest, "name" | "head_sha"> = { status: state, external_id: row.id, details_url: this.#o.detailsUrl(row) };
    if (row.started_at && state !== "queued") body.started_at = row.started_at.toISOString();
    if (state === "completed") {
      body.conclusion = conclusionOf({ status: row.status, error: row.error, deleted });
      body.completed_at = (row.completed_at ?? new Date()).toISOString();
      body.output = checkRunOutput(analysis, deleted, body.details_url);
    }
    const installation = Number(due.installation_id);
    try {
      let id = due.check_run_id;
      if (id === null) id = await api.create(installation, due.repository_full_name, { name: CHECK_RUN_NAME, head_sha: due.head_sha, ...body });
      else await api.update(installation, due.repository_full_name, id, body);
      await recordSent(db, row.id, state, id);
      this.#o.count?.("sent");
      log.info({ state, conclusion: body.conclusion, check_run: id }, "check run updated on GitHub");
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const giveUp = isPermanent(err) || due.attempts + 1 >= (this.#o.maxAttempts ?? 12);
      await recordFailure(db, row.id, message, giveUp ? null : checkRunRetrySeconds(due.attempts));
      this.#o.count?.(giveUp ? "abandoned" : "retried");
      if (giveUp) log.warn({ err: message, state }, "could not update the check run on GitHub; giving up on it (the analysis is unaffected)");
      else log.warn({ err: message, state, attempt: due.attempts + 1 }, "could not update the check run on GitHub; trying again later");
    }
  }
}
