import { sql } from "kysely";
import type { Db } from "../../db/database.ts";
import type { RunConfig, RunRow } from "../../db/schema.ts";
import type { RunPhase, RunSpec, RunStatus } from "../../k8s/crds/run.ts";
import { isoOrNull, iso } from "../shared/time.ts";
import type { Run } from "./runs.schemas.ts";

// The Postgres mirror of Run resources. Writes are ordered by a rank so that
// an old or reordered observation can never move a run backwards.

const RANK: Record<RunPhase, number> = { pending: 0, preprocessing: 1, running: 2, completed: 3, failed: 3, cancelled: 3 };
export const isTerminal = (s: RunPhase) => RANK[s] === 3;

export function toRun(r: RunRow): Run {
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
    run_config: r.run_config,
    exit_code: r.exit_code,
    error: r.error,
    stdout_url: `/v1/runs/${r.id}/logs/stdout`,
    stderr_url: `/v1/runs/${r.id}/logs/stderr`,
    duration_seconds: start && close ? Math.max(0, (close.getTime() - start.getTime()) / 1000) : null,
    start_time: isoOrNull(start),
    close_time: isoOrNull(close),
    created_at: iso(r.created_at),
  };
}

/** The run_config the API shows, derived from the resource's spec. */
export const runConfigOf = (spec: RunSpec): RunConfig => ({ command: spec.command, parameters: spec.parameters ?? {}, timeout_seconds: spec.timeoutSeconds });

export interface RunMirror {
  namespace: string;
  name: string;
  createdAt: Date;
  spec: RunSpec;
  config: RunConfig;
  status: RunStatus | undefined;
}

/**
 * Inserts the row if it is missing (the API may have died between creating
 * the resource and the row) and applies the resource's status unless the row
 * already holds a later one.
 */
export async function mirrorRun(db: Db, m: RunMirror): Promise<void> {
  const phase = m.status?.phase ?? "pending";
  const values = {
    id: m.spec.runId,
    account_id: m.spec.accountId,
    repository_id: m.spec.repositoryId,
    commit_hash: m.spec.commitHash,
    workflow_id: `${m.namespace}/${m.name}`,
    status: phase,
    status_rank: RANK[phase],
    experiment_id: m.spec.experimentId ?? null,
    compute_type: m.spec.computeType,
    run_config: JSON.stringify(m.config),
    exit_code: m.status?.exitCode ?? null,
    error: m.status?.error ?? null,
    start_time: m.status?.startTime ? new Date(m.status.startTime) : null,
    close_time: m.status?.completionTime ? new Date(m.status.completionTime) : null,
    created_at: m.createdAt,
    updated_at: new Date(),
  };
  await db
    .insertInto("runs")
    .values(values)
    .onConflict((oc) =>
      oc.column("id").doUpdateSet((eb) => ({
        status: eb.ref("excluded.status"),
        status_rank: eb.ref("excluded.status_rank"),
        exit_code: eb.ref("excluded.exit_code"),
        error: eb.ref("excluded.error"),
        start_time: sql`coalesce(excluded.start_time, runs.start_time)`,
        close_time: eb.ref("excluded.close_time"),
        updated_at: eb.ref("excluded.updated_at"),
      })).where(sql<boolean>`runs.deleted_at is null and (runs.status_rank < excluded.status_rank or (runs.status_rank = excluded.status_rank and runs.status_rank < 3))`),
    )
    .execute();
}
