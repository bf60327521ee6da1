import { sql } from "kysely";
import type { Db } from "../../db/database.ts";
import type { CheckRunState } from "./check-run-body.ts";

// Which analyses report to a check run, and what GitHub was last told (migration 0008).

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
  analysis_id: string;
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
 * Claims one check run whose analysis has moved on from what GitHub was last
 * told, for leaseSeconds. SKIP LOCKED and the lease keep replicas off each
 * other's; one whose state GitHub already has is not even looked at.
 */
export async function claimDueCheckRun(db: Db, leaseSeconds: number): Promise<DueCheckRun | undefined> {
  const r = await sql<DueCheckRun>`
    with due as (
      select c.analysis_id, d.desired
        from github_check_runs c
        join analyses a on a.id = c.analysis_id
        cross join lateral (select case when a.deleted_at is not null then 'completed'
                                        when a.status = 'pending' then 'queued'
                                        when a.status = 'running' then 'in_progress'
                                        else 'completed' end as desired) d
       where not c.abandoned and c.available_at <= now() and (c.sent is null or c.sent <> 'completed') and c.sent is distinct from d.desired
       order by c.available_at
       limit 1
       for update of c skip locked)
    update github_check_runs c
       set available_at = now() + make_interval(secs => ${leaseSeconds})
      from due, analyses a
     where c.analysis_id = due.analysis_id and a.id = c.analysis_id
    returning c.analysis_id, a.account_id, c.installation_id::text as installation_id, c.repository_full_name, c.head_sha,
              c.check_run_id::text as check_run_id, c.sent, c.attempts, due.desired`.execute(db);
  return r.rows[0];
}

export async function recordSent(db: Db, analysisId: string, sent: CheckRunState, checkRunId: string): Promise<void> {
  await db
    .updateTable("github_check_runs")
    .set({ sent, check_run_id: checkRunId, attempts: 0, last_error: null, available_at: sql<Date>`now()`, updated_at: new Date() })
    .where("analysis_id", "=", analysisId)
    .execute();
}

export async function recordFailure(db: Db, analysisId: string, error: string, retryAfterSeconds: number | null): Promise<void> {
  await db
    .updateTable("github_check_runs")
    .set((eb) => ({
      attempts: eb("attempts", "+", 1),
      last_error: error.slice(0, 2000),
      abandoned: retryAfterSeconds === null,
      available_at: retryAfterSeconds === null ? sql<Date>`now()` : sql<Date>`now() + make_interval(secs => ${retryAfterSeconds})`,
      updated_at: new Date(),
    }))
    .where("analysis_id", "=", analysisId)
    .execute();
}

/** Check runs whose analysis changed since they were last looked at: due now (the syncer also polls, this only makes it prompt). */
export async function nudgeCheckRun(db: Db, analysisId: string): Promise<void> {
  await db
    .updateTable("github_check_runs")
    .set({ available_at: sql<Date>`now()` })
    .where("analysis_id", "=", analysisId)
    .where("abandoned", "=", false)
    .execute();
}

/**
 * The installation was deleted (or disconnected): GitHub has revoked its
 * tokens, so its open check runs can no longer be updated. They are given up
 * on with that reason instead of being retried for nothing (one already
 * given up on, refused by GitHub moments before, gets the real reason).
 */
export async function abandonCheckRunsOfInstallation(db: Db, installationId: number, reason: string): Promise<number> {
  const r = await db
    .updateTable("github_check_runs")
    .set({ abandoned: true, last_error: reason, updated_at: new Date() })
    .where("installation_id", "=", String(installationId))
    .where((eb) => eb.or([eb("sent", "is", null), eb("sent", "<>", "completed")]))
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}
