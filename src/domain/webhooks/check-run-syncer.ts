import type { Logger } from "../../logger.ts";
import type { Db } from "../../db/database.ts";
import { DrainLoop } from "../shared/drain-loop.ts";
import type { CheckRunState, Conclusion } from "./check-run-body.ts";
import { claimDueCheckRun, recordFailure, recordSent, type CheckRunQueue, type DueCheckRun } from "./check-run-rows.ts";

// Tells GitHub what became of each analysis a webhook started and each run of
// a repository that reports check runs: created `queued`, then `in_progress`,
// then always completed. It compares the subject's status with what GitHub was
// last told, so a missed step (a restart, GitHub away) is caught up with the
// current state rather than replayed; failures are retried with backoff and
// never touch the analysis or the run. Each kind of subject is a source: its
// queue (check-run-rows.ts) and what its check run says.

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
export type CheckRunUpdate = Omit<CheckRunRequest, "name" | "head_sha">;

/** GitHub's check-runs API, for one installation's repository (the adapter is github-check-runs.ts). */
export interface CheckRunsApi {
  create(installationId: number, repositoryFullName: string, body: CheckRunRequest): Promise<string>;
  update(installationId: number, repositoryFullName: string, checkRunId: string, body: CheckRunUpdate): Promise<void>;
}

/** One kind of subject that reports check runs. */
export interface CheckRunSource {
  queue: CheckRunQueue;
  /** What to send for a claimed row in its desired state; null when the subject is gone (the cascade removes the row too). */
  describe(db: Db, due: DueCheckRun): Promise<{ name: string; body: CheckRunUpdate } | null>;
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
  sources: CheckRunSource[];
  leaseSeconds?: number;
  pollMs?: number;
  /** Attempts before a check run is given up on (its last error kept). */
  maxAttempts?: number;
  count?(outcome: "sent" | "retried" | "abandoned"): void;
}

export const checkRunRetrySeconds = (attempt: number) => Math.min(900, 5 * 2 ** attempt);

export class CheckRunSyncer extends DrainLoop {
  readonly #o: CheckRunSyncerOptions;
  /** Where the next look starts, so a busy source does not keep the other waiting. */
  #turn = 0;

  constructor(o: CheckRunSyncerOptions) {
    super({ name: "check runs", logger: o.logger, pollMs: o.pollMs ?? 2000, next: () => this.#next() });
    this.#o = o;
  }

  async #next(): Promise<boolean> {
    const { sources } = this.#o;
    for (let i = 0; i < sources.length; i++) {
      const source = sources[(this.#turn + i) % sources.length]!;
      const due = await claimDueCheckRun(this.#o.db, source.queue, this.#o.leaseSeconds ?? 60);
      if (!due) continue;
      this.#turn = (this.#turn + i + 1) % sources.length;
      await this.#send(source, due);
      return true;
    }
    return false;
  }

  async #send(source: CheckRunSource, due: DueCheckRun): Promise<void> {
    const { db, api, logger } = this.#o;
    const q = source.queue;
    const log = logger.child({ [q.key]: due.subject_id, repository: due.repository_full_name, check_run: due.check_run_id });
    const described = await source.describe(db, due);
    if (!described) return;
    const { name, body } = described;
    const installation = Number(due.installation_id);
    try {
      let id = due.check_run_id;
      if (id === null) id = await api.create(installation, due.repository_full_name, { name, head_sha: due.head_sha, ...body });
      else await api.update(installation, due.repository_full_name, id, body);
      await recordSent(db, q, due.subject_id, body.status, id);
      this.#o.count?.("sent");
      log.info({ state: body.status, conclusion: body.conclusion, check_run: id }, "check run updated on GitHub");
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const giveUp = isPermanent(err) || due.attempts + 1 >= (this.#o.maxAttempts ?? 12);
      await recordFailure(db, q, due.subject_id, message, giveUp ? null : checkRunRetrySeconds(due.attempts));
      this.#o.count?.(giveUp ? "abandoned" : "retried");
      const unaffected = q.subjects === "runs" ? "the run is unaffected" : "the analysis is unaffected";
      if (giveUp) log.warn({ err: message, state: body.status }, `could not update the check run on GitHub; giving up on it (${unaffected})`);
      else log.warn({ err: message, state: body.status, attempt: due.attempts + 1 }, `could not update the check run on GitHub; trying again later`);
    }
  }
}
