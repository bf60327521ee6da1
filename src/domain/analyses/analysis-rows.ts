import { sql } from "kysely";
import type { Db } from "../../db/database.ts";
import type { AnalysisRow } from "../../db/schema.ts";
import type { AnalysisPhase, AnalysisSpec, AnalysisStatus } from "../../k8s/crds/analysis.ts";
import { iso, isoOrNull } from "../shared/time.ts";
import type { Analysis } from "./analyses.schemas.ts";

// The Postgres mirror of Analysis resources, ordered by rank like runs so an
// old observation never moves an analysis backwards.

const RANK: Record<AnalysisPhase, number> = { pending: 0, running: 1, completed: 2, failed: 2, cancelled: 2 };
export const isAnalysisTerminal = (s: AnalysisPhase) => RANK[s] === 2;

/** The environment variable report at read time: required by the code, minus what is configured now. */
export function envVarsReport(required: readonly string[], configured: ReadonlySet<string>): NonNullable<Analysis["env_vars"]> {
  const missing = required.filter((n) => !configured.has(n));
  return { valid: missing.length === 0, required_env_vars: [...required], missing_env_vars: missing };
}

export function requiredEnvVars(row: AnalysisRow): string[] {
  return (row.result?.env_vars ?? []).filter((e) => e.required).map((e) => e.name);
}

export function toAnalysis(row: AnalysisRow, configured: ReadonlySet<string>): Analysis {
  const result = row.result;
  return {
    id: row.id,
    repository_id: row.repository_id,
    commit_hash: row.commit_hash,
    branch: row.branch,
    language: row.language,
    status: row.status,
    workflow_id: row.workflow_id,
    created_at: iso(row.created_at),
    started_at: isoOrNull(row.started_at),
    completed_at: isoOrNull(row.completed_at),
    repo_summary: result?.repo_summary ?? null,
    experiments: result?.experiments ?? [],
    primary_ids: result?.primary_ids ?? [],
    env_vars: result ? envVarsReport(requiredEnvVars(row), configured) : null,
    error: row.error,
    logs_url: `/v1/repositories/${row.repository_id}/analysis/${row.commit_hash}/logs/stream`,
  };
}

export interface AnalysisMirror {
  namespace: string;
  name: string;
  createdAt: Date;
  spec: AnalysisSpec;
  status: AnalysisStatus | undefined;
}

/** Inserts the row if it is missing and applies the status unless the row already holds a later one. */
export async function mirrorAnalysis(db: Db, m: AnalysisMirror): Promise<void> {
  const phase = m.status?.phase ?? "pending";
  await db
    .insertInto("analyses")
    .values({
      id: m.spec.analysisId,
      account_id: m.spec.accountId,
      repository_id: m.spec.repositoryId,
      commit_hash: m.spec.commitHash,
      branch: m.spec.branch ?? null,
      language: m.spec.language,
      workflow_id: `${m.namespace}/${m.name}`,
      status: phase,
      status_rank: RANK[phase],
      exit_code: m.status?.exitCode ?? null,
      error: m.status?.error ?? null,
      started_at: m.status?.startTime ? new Date(m.status.startTime) : null,
      completed_at: m.status?.completionTime ? new Date(m.status.completionTime) : null,
      created_at: m.createdAt,
      updated_at: new Date(),
    })
    .onConflict((oc) =>
      oc.column("id").doUpdateSet((eb) => ({
        status: eb.ref("excluded.status"),
        status_rank: eb.ref("excluded.status_rank"),
        exit_code: eb.ref("excluded.exit_code"),
        error: eb.ref("excluded.error"),
        started_at: sql`coalesce(excluded.started_at, analyses.started_at)`,
        completed_at: eb.ref("excluded.completed_at"),
        updated_at: eb.ref("excluded.updated_at"),
      })).where(sql<boolean>`analyses.deleted_at is null and (analyses.status_rank < excluded.status_rank or (analyses.status_rank = excluded.status_rank and analyses.status_rank < 2))`),
    )
    .execute();
}
