import type { Db } from "../../db/database.ts";
import type { AnalysisRow } from "../../db/schema.ts";
import { ANALYSIS_TABLE } from "../../db/workload-tables.ts";
import type { AnalyzerResult, Experiment } from "@codeplane/analyzer";
import { ANALYSIS_LIFECYCLE, type AnalysisSpec } from "../../resources/analysis.ts";
import { keysetPage } from "../shared/keyset.ts";
import type { PageRequest } from "../shared/pagination.ts";
import { iso, isoOrNull } from "../shared/time.ts";
import { isDataException } from "../shared/db-errors.ts";
import { Unreconcilable } from "../workloads/unreconcilable.ts";
import type { WorkloadRowKind } from "../workloads/workload-rows.ts";
import type { Analysis } from "./analyses.schemas.ts";
import type { AnalysisEnvironment } from "../environments/environments.schemas.ts";
import type { AnalyzedEnvironment } from "../environments/resolve.ts";

// Analyses in Postgres: the mirror of Analysis resources (workload-rows.ts
// writes it), their results, and every query the API makes on them.

export const ANALYSIS_ROWS: WorkloadRowKind<AnalysisSpec> = {
  table: ANALYSIS_TABLE,
  idOf: (spec) => spec.analysisId,
  insertOnly: (spec) => ({ branch: spec.branch ?? null, language: spec.language }),
};

/** The environment variable report at read time: required by the code, minus what is configured now. */
export function envVarsReport(required: readonly string[], configured: ReadonlySet<string>): NonNullable<Analysis["env_vars"]> {
  const missing = required.filter((n) => !configured.has(n));
  return { valid: missing.length === 0, required_env_vars: [...required], missing_env_vars: missing };
}

/** The repository-wide summary: the union of the experiments' required variables. */
export function requiredEnvVars(row: AnalysisRow): string[] {
  return (row.result?.env_vars ?? []).filter((e) => e.required).map((e) => e.name);
}

/**
 * What one experiment cannot start without. Results stored before variables
 * were attributed to experiments have none of their own: every experiment
 * then needs the repository-wide list, as runs were checked then.
 */
export function experimentRequiredEnvVars(row: AnalysisRow, experiment: Experiment): string[] {
  return experiment.required_env_vars ?? requiredEnvVars(row);
}

/** The environment the analyzer found for a commit; null for analyses made before environments. */
export function analyzedEnvironmentOf(row: AnalysisRow): AnalyzedEnvironment | null {
  return row.result?.environment ?? null;
}

/**
 * The API's view of an analysis. `environmentView` resolves the analyzer's
 * environment against the image catalog; without it (or for analyses made
 * before environments) `environment` is null.
 */
export function toAnalysis(row: AnalysisRow, configured: ReadonlySet<string>, environmentView?: (env: AnalyzedEnvironment) => AnalysisEnvironment): Analysis {
  const result = row.result;
  const analyzed = analyzedEnvironmentOf(row);
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
    experiments: (result?.experiments ?? []).map((e) => (e.required_env_vars ? e : { ...e, required_env_vars: experimentRequiredEnvVars(row, e) })),
    primary_ids: result?.primary_ids ?? [],
    env_vars: result ? envVarsReport(requiredEnvVars(row), configured) : null,
    environment: analyzed && environmentView ? environmentView(analyzed) : null,
    error: row.error,
    trigger: { kind: row.trigger, delivery_id: row.trigger_delivery_id },
    logs_url: `/v1/repositories/${row.repository_id}/analysis/${row.commit_hash}/logs/stream`,
  };
}

/**
 * The live (not deleted) analysis of a repository's commit. Not scoped to an
 * account (the unique index is per repository): callers have checked the
 * repository is the caller's, or compare account_id themselves.
 */
export function findLiveAnalysis(db: Db, repositoryId: string, commitHash: string): Promise<AnalysisRow | undefined> {
  return db
    .selectFrom("analyses")
    .selectAll()
    .where("repository_id", "=", repositoryId)
    .where("commit_hash", "=", commitHash)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
}

export function findAnalysis(db: Db, accountId: string, id: string): Promise<AnalysisRow | undefined> {
  return db.selectFrom("analyses").selectAll().where("id", "=", id).where("account_id", "=", accountId).executeTakeFirst();
}

export function listAnalyses(db: Db, accountId: string, repositoryId: string, page: PageRequest): Promise<AnalysisRow[]> {
  return keysetPage(
    db.selectFrom("analyses").selectAll().where("account_id", "=", accountId).where("repository_id", "=", repositoryId).where("deleted_at", "is", null),
    page,
  ).execute();
}

export interface NewAnalysis {
  id: string;
  accountId: string;
  repositoryId: string;
  commitHash: string;
  branch: string | null;
  language: "en" | "ja";
  workflowId: string;
  trigger?: AnalysisTrigger | undefined;
}

/** What started an analysis: the API (the default), or a GitHub webhook delivery. */
export interface AnalysisTrigger {
  kind: "api" | "push" | "pull_request";
  deliveryId: string | null;
}

/**
 * Inserts a pending analysis unless the commit already has a live one; false
 * then. The unique index on the live (repository, commit) is what makes
 * concurrent requests agree on one analysis.
 */
export async function insertPendingAnalysis(db: Db, a: NewAnalysis): Promise<boolean> {
  const inserted = await db
    .insertInto("analyses")
    .values({
      id: a.id,
      account_id: a.accountId,
      repository_id: a.repositoryId,
      commit_hash: a.commitHash,
      branch: a.branch,
      language: a.language,
      workflow_id: a.workflowId,
      trigger: a.trigger?.kind ?? "api",
      trigger_delivery_id: a.trigger?.deliveryId ?? null,
      status: ANALYSIS_LIFECYCLE.initial,
      status_rank: ANALYSIS_LIFECYCLE.rank(ANALYSIS_LIFECYCLE.initial),
      updated_at: new Date(),
    })
    .onConflict((oc) => oc.columns(["repository_id", "commit_hash"]).where("deleted_at", "is", null).doNothing())
    .returning("id")
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Removes a row whose resource was never created (right after inserting it). */
export async function deleteAnalysisRow(db: Db, id: string): Promise<void> {
  await db.deleteFrom("analyses").where("id", "=", id).execute();
}

/** Stores the analyzer's validated result once; a result already stored is never replaced. The controller's, by id. */
export async function saveAnalysisResult(db: Db, id: string, result: AnalyzerResult): Promise<void> {
  try {
    await db
      .updateTable("analyses")
      .set({ result: JSON.stringify(result) })
      .where("id", "=", id)
      .where("result", "is", null)
      .execute();
  } catch (err) {
    // The analyzer read someone else's files; text Postgres cannot store (a NUL) fails the analysis, not the controller.
    if (isDataException(err))
      throw new Unreconcilable("Unstorable", `the analyzer's result cannot be stored: ${err instanceof Error ? err.message : String(err)}`);
    throw err;
  }
}
