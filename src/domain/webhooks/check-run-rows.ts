import { sql, type RawBuilder } from "kysely";
import type { Db } from "../../db/database.ts";
import { untyped } from "../../db/workload-tables.ts";
import type { CheckRunState } from "./check-run-body.ts";

// The check-run queues: one row per analysis a webhook started (migration
// 0008) and one per run of a repository with report_check_runs (0025), each
// with what GitHub was last told. Both have the same columns but their key, so
// one set of queries serves both, told apart by a CheckRunQueue.

export interface CheckRunQueue {
  /** The queue's table and the column naming its subject. */
  table: "github_check_runs" | "github_run_check_runs";
  key: "analysis_id" | "run_id";
  /** The subjects' table (id, account_id, status, deleted_at). */
  subjects: "analyses" | "runs";
  /** The state GitHub should show, over the subject's row `s`. */
  desired: RawBuilder<CheckRunState>;
}

/** GitHub's state for a subject: `queued` while pending, `in_progress` in the given statuses, else (ended or deleted) `completed`. */
const desired = (inProgress: string[]): RawBuilder<CheckRunState> =>
  sql`case when s.deleted_at is not null then 'completed'
           when s.status = 'pending' then 'queued'
           when s.status in (${sql.join(inProgress)}) then 'in_progress'
           else 'completed' end`;

export const ANALYSIS_QUEUE: CheckRunQueue = { table: "github_check_runs", key: "analysis_id", subjects: "analyses", desired: desired(["running"]) };

// preprocessing (checkout, install) is part of the run's time on GitHub, as a job's setup steps are.
export const RUN_QUEUE: CheckRunQueue = { table: "github_run_check_runs", key: "run_id", subjects: "runs", desired: desired(["preprocessing", "running"]) };

export interface TrackedCheckRun {
  analysisId: string;
  installationId: number;
  repositoryFullName: string;
  headSha: string;
}

/** Idempotent: a second trigger of the same analysis (a push, then a pull request on the same head) reports to the same check run. */
export async function trackCheckRun(db: Db, t: TrackedCheckRun): Promise<void> {
  await db
    .insertInto("github_check_runs")
    .values({
      analysis_id: t.analysisId,
      installation_id: t.installationId,
      repository_full_name: t.repositoryFullName,
      head_sha: t.headSha,
      updated_at: new Date(),
    })
    .onConflict((c) => c.column("analysis_id").doNothing())
    .execute();
}

export interface DueCheckRun {
  /** The analysis's or the run's id. */
  subject_id: string;
  account_id: string;
  installation_id: string;
  repository_full_name: string;
  head_sha: string;
  check_run_id: string | null;
  sent: CheckRunState | null;
  attempts: number;
  desired: CheckRunState;
}

/**
 * Claims one check run whose subject has moved on from what GitHub was last
 * told, for leaseSeconds. SKIP LOCKED and the lease keep replicas off each
 * other's; one whose state GitHub already has is not even looked at.
 */
export async function claimDueCheckRun(db: Db, q: CheckRunQueue, leaseSeconds: number): Promise<DueCheckRun | undefined> {
  const table = sql.table(q.table);
  const subjects = sql.table(q.subjects);
  const key = sql.ref(`c.${q.key}`);
  const r = await sql<DueCheckRun>`
    with due as (
      select ${key} as subject_id, d.desired
        from ${table} c
        join ${subjects} s on s.id = ${key}
        cross join lateral (select ${q.desired} as desired) d
       where not c.abandoned and c.available_at <= now() and (c.sent is null or c.sent <> 'completed') and c.sent is distinct from d.desired
       order by c.available_at
       limit 1
       for update of c skip locked)
    update ${table} c
       set available_at = now() + make_interval(secs => ${leaseSeconds})
      from due, ${subjects} s
     where ${key} = due.subject_id and s.id = ${key}
    returning ${key} as subject_id, s.account_id, c.installation_id::text as installation_id, c.repository_full_name, c.head_sha,
              c.check_run_id::text as check_run_id, c.sent, c.attempts, due.desired`.execute(db);
  return r.rows[0];
}

export async function recordSent(db: Db, q: CheckRunQueue, subjectId: string, sent: CheckRunState, checkRunId: string): Promise<void> {
  await untyped(db)
    .updateTable(q.table)
    .set({ sent, check_run_id: checkRunId, attempts: 0, last_error: null, available_at: sql<Date>`now()`, updated_at: new Date() })
    .where(q.key, "=", subjectId)
    .execute();
}

export async function recordFailure(db: Db, q: CheckRunQueue, subjectId: string, error: string, retryAfterSeconds: number | null): Promise<void> {
  await untyped(db)
    .updateTable(q.table)
    .set((eb) => ({
      attempts: eb("attempts", "+", 1),
      last_error: error.slice(0, 2000),
      abandoned: retryAfterSeconds === null,
      available_at: retryAfterSeconds === null ? sql<Date>`now()` : sql<Date>`now() + make_interval(secs => ${retryAfterSeconds})`,
      updated_at: new Date(),
    }))
    .where(q.key, "=", subjectId)
    .execute();
}

/**
 * The installation was deleted (or disconnected): GitHub has revoked its
 * tokens, so its open check runs, of analyses and of runs, can no longer be
 * updated. They are given up on with that reason instead of being retried for
 * nothing (one already given up on, refused by GitHub moments before, gets the
 * real reason).
 */
export async function abandonCheckRunsOfInstallation(db: Db, installationId: number, reason: string): Promise<number> {
  let n = 0;
  for (const q of [ANALYSIS_QUEUE, RUN_QUEUE]) {
    const r = await untyped(db)
      .updateTable(q.table)
      .set({ abandoned: true, last_error: reason, updated_at: new Date() })
      .where("installation_id", "=", String(installationId))
      .where((eb) => eb.or([eb("sent", "is", null), eb("sent", "<>", "completed")]))
      .executeTakeFirst();
    n += Number(r.numUpdatedRows);
  }
  return n;
}
