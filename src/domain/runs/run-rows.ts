import { sql } from "kysely";
import type { Db } from "../../db/database.ts";
import type { RunAttemptRow, RunConfig, RunEnvironment, RunRow } from "../../db/schema.ts";
import { RUN_TABLE } from "../../db/workload-tables.ts";
import type { RunSpec, RunStatus } from "../../resources/run.ts";
import { keysetPage } from "../shared/keyset.ts";
import type { PageRequest } from "../shared/pagination.ts";
import { isoOrNull, iso } from "../shared/time.ts";
import type { WorkloadRowKind } from "../workloads/workload-rows.ts";
import { runTimeline } from "./run-timeline.ts";
import type { Run, RunAttemptView } from "./runs.schemas.ts";

// Runs in Postgres: the mirror of Run resources (workload-rows.ts writes it)
// and every query the API makes on them.

/** The run_config the API shows, derived from the resource's spec. */
export const runConfigOf = (spec: RunSpec): RunConfig => ({
  command: spec.command,
  parameters: spec.parameters ?? {},
  timeout_seconds: spec.timeoutSeconds,
  retries: spec.retries ?? 0,
});

export const RUN_ROWS: WorkloadRowKind<RunSpec> = {
  table: RUN_TABLE,
  idOf: (spec) => spec.runId,
  insertOnly: (spec) => ({
    experiment_id: spec.experimentId ?? null,
    compute_type: spec.computeType,
    run_config: JSON.stringify(runConfigOf(spec)),
    environment: JSON.stringify(runEnvironmentOf(spec)),
    rerun_of: spec.rerunOf ?? null,
  }),
  fromStatus: (status) => {
    const { timeline, attempts } = (status as RunStatus | undefined) ?? {};
    return {
      timeline: timeline && Object.keys(timeline).length > 0 ? JSON.stringify(timeline) : null,
      attempts: attempts && attempts.length > 0 ? JSON.stringify(attempts) : null,
    };
  },
  replacedFromStatus: (status) => ({ queue_reason: (status as RunStatus).queue?.reason ?? null }),
};

/** What the run's row records of its environment, derived from the spec (cache is filled in when its Job is made). */
export function runEnvironmentOf(spec: RunSpec): RunEnvironment | null {
  if (spec.environment) return { key: spec.environment.key, image: spec.environment.image, warnings: spec.environment.warnings };
  return spec.image ? { key: null, image: spec.image, warnings: [] } : null;
}

/** An attempt as the API shows it. */
function toAttempt(a: RunAttemptRow): RunAttemptView {
  return {
    attempt: a.attempt,
    job_name: a.jobName,
    created_at: a.createdAt,
    started_at: a.startTime ?? null,
    ended_at: a.completionTime ?? null,
    reason: a.reason ?? null,
    error: a.reason && a.reason !== "Completed" ? (a.message ?? null) : null,
    // A later attempt's range starts with codeplane's marker line, at the offset itself.
    first_seq: Math.max(1, a.logSeqOffset),
  };
}

const FINISHED = ["completed", "failed", "cancelled"] as const;

/** Whether the row says the run waits for admission: a queue reason on a run that has not finished. */
const isQueued = (r: Pick<RunRow, "status" | "queue_reason">) => r.queue_reason !== null && !(FINISHED as readonly string[]).includes(r.status);

/** `positions`: the 1-based place of each of the account's queued runs among them (queuePositions). */
export function toRun(r: RunRow, positions?: ReadonlyMap<string, number>): Run {
  const start = r.start_time;
  const close = r.close_time;
  return {
    run_id: r.id,
    workflow_id: r.workflow_id,
    repository_id: r.repository_id,
    commit_hash: r.commit_hash,
    status: r.status,
    experiment_id: r.experiment_id,
    compute_type: r.compute_type,
    run_config: { ...r.run_config, retries: r.run_config.retries ?? 0 },
    attempts: (r.attempts ?? []).map(toAttempt),
    environment: r.environment
      ? { key: r.environment.key, image: r.environment.image, cache: r.environment.cache ?? null, warnings: r.environment.warnings }
      : null,
    parameters: r.run_config.parameters,
    final_metrics: r.final_metrics,
    rerun_of: r.rerun_of,
    exit_code: r.exit_code,
    error: r.error,
    stdout_url: `/v1/runs/${r.id}/logs/stdout`,
    stderr_url: `/v1/runs/${r.id}/logs/stderr`,
    duration_seconds: start && close ? Math.max(0, (close.getTime() - start.getTime()) / 1000) : null,
    start_time: isoOrNull(start),
    close_time: isoOrNull(close),
    created_at: iso(r.created_at),
    timeline: runTimeline({ ...r, cache: r.environment?.cache ?? null }),
    queue: isQueued(r) ? { reason: r.queue_reason!, position: positions?.get(r.id) ?? 1 } : null,
  };
}

/**
 * The queued ones among `ids`, with their 1-based position among the
 * account's queued runs in submission order (ids are time-ordered): derived
 * when read, so admitting a run rewrites no other.
 */
export async function queuePositions(db: Db, accountId: string, rows: readonly Pick<RunRow, "id" | "status" | "queue_reason">[]): Promise<Map<string, number>> {
  const ids = rows.filter(isQueued).map((r) => r.id);
  if (ids.length === 0) return new Map();
  // Any live phase: a run may wait after `pending` (with Kueue, a retry's next attempt, or a run whose environment was built).
  const queued = db
    .selectFrom("runs")
    .select(["id", sql<string>`row_number() over (order by id)`.as("position")])
    .where("account_id", "=", accountId)
    .where("deleted_at", "is", null)
    .where("queue_reason", "is not", null)
    .where("status", "not in", FINISHED)
    .as("q");
  const found = await db.selectFrom(queued).select(["q.id", "q.position"]).where("q.id", "in", ids).execute();
  return new Map(found.map((r) => [r.id, Number(r.position)]));
}

/** The account's run, unless it is gone or being deleted. */
export function findRun(db: Db, accountId: string, runId: string): Promise<RunRow | undefined> {
  return db.selectFrom("runs").selectAll().where("id", "=", runId).where("account_id", "=", accountId).where("deleted_at", "is", null).executeTakeFirst();
}

export interface RunFilter {
  status?: Run["status"] | undefined;
  repositoryId?: string | undefined;
  commitHash?: string | undefined;
  experimentId?: string | undefined;
}

export function listRuns(db: Db, accountId: string, filter: RunFilter, page: PageRequest): Promise<RunRow[]> {
  return listRunsQuery(db, accountId, filter, page).execute();
}

/** listRuns' query, unexecuted (bench/explain-runs.ts prints its plans). */
export function listRunsQuery(db: Db, accountId: string, filter: RunFilter, page: PageRequest) {
  let q = db.selectFrom("runs").selectAll().where("account_id", "=", accountId).where("deleted_at", "is", null);
  if (filter.status) q = q.where("status", "=", filter.status);
  if (filter.repositoryId) q = q.where("repository_id", "=", filter.repositoryId);
  if (filter.commitHash) q = q.where("commit_hash", "=", filter.commitHash);
  if (filter.experimentId) q = q.where("experiment_id", "=", filter.experimentId);
  return keysetPage(q, page);
}

/** One stream of a run's stored output, in order. By id: callers find the account's run first (findRun). */
export async function readRunLogLines(db: Db, runId: string, stream: "stdout" | "stderr"): Promise<string[]> {
  const rows = await db.selectFrom("run_log_lines").select("line").where("run_id", "=", runId).where("stream", "=", stream).orderBy("seq").execute();
  return rows.map((r) => r.line);
}

/** Whether the run's environment was restored from the cache or built while it waited (the controller's, once the Job is made). */
export async function recordRunEnvironmentCache(db: Db, runId: string, cache: "hit" | "built"): Promise<void> {
  await db
    .updateTable("runs")
    .set({ environment: sql`jsonb_set(environment, '{cache}', to_jsonb(${cache}::text))` })
    .where("id", "=", runId)
    .where("environment", "is not", null)
    .execute();
}
