import type { Catalog } from "../../resources/environment-catalog.ts";
import { analysisEnvironmentView } from "../environments/resolve.ts";
import type { AnalyzedEnvironment } from "../environments/resolve.ts";
import type { Db } from "../../db/database.ts";
import { ANALYSIS_TABLE } from "../../db/workload-tables.ts";
import { ANALYSIS_LIFECYCLE, type AnalysisSpec } from "../../resources/analysis.ts";
import { analysisResourceName } from "../../resources/labels.ts";
import type { Logger } from "../../logger.ts";
import type { Experiment } from "@codeplane/analyzer";
import { conflict, notFound, unavailable } from "../errors.ts";
import { classifyInfrastructureError } from "../infrastructure-errors.ts";
import type { GitSource } from "../repositories/git-port.ts";
import { configuredEnvNames } from "../env-vars/env-var-rows.ts";
import { requireRepository } from "../repositories/repository-rows.ts";
import { newId } from "../shared/ids.ts";
import { assertStorableText, rejectUnstorableText } from "../shared/storable-text.ts";
import { toPage, type Page, type PageRequest } from "../shared/pagination.ts";
import { hideWorkload, removeDetachedWorkload } from "../workloads/workload-rows.ts";
import {
  analyzedEnvironmentOf,
  deleteAnalysisRow,
  findAnalysis,
  findLiveAnalysis,
  insertPendingAnalysis,
  listAnalyses,
  experimentRequiredEnvVars,
  toAnalysis,
  type AnalysisTrigger,
} from "./analysis-rows.ts";
import type { Analysis, CreateAnalysisInput } from "./analyses.schemas.ts";

/** What the analysis service needs from Kubernetes (AnalysisResources in src/k8s/run-resources.ts). */
export interface AnalysisLauncher {
  readonly namespace: string;
  create(spec: AnalysisSpec): Promise<unknown>;
  requestCancel(name: string): Promise<boolean>;
  delete(name: string): Promise<void>;
}

export interface AnalysisServiceDeps {
  git: GitSource;
  /** null when this process has no reachable cluster: starting an analysis answers 503. */
  launcher: AnalysisLauncher | null;
  timeoutSeconds: number;
  /** The image catalog and the default compute type: an analysis shows the environment its runs get. */
  environments: {
    catalog: Catalog;
    defaultComputeType: string;
    /** Registries repositories may declare images from; absent: none. */ allowedRegistries?: readonly string[];
  };
  logger: Logger;
}

const NO_CLUSTER = "Kubernetes is not reachable, so analyses cannot be started now; the rest of the API works. See /readyz.";
const FULL_HASH = /^[0-9a-f]{40}$/;

export interface AnalysedExperiment {
  experiment: Experiment;
  /** Required variables the code reads that are not configured now. */
  missingEnvVars: string[];
}

export class AnalysisService {
  readonly #deps: AnalysisServiceDeps;

  constructor(deps: AnalysisServiceDeps) {
    this.#deps = deps;
  }

  /** One analysis per repository and commit: returns the existing one (created false) or starts one. */
  async create(
    db: Db,
    accountId: string,
    repositoryId: string,
    ref: string,
    input: CreateAnalysisInput,
    trigger?: AnalysisTrigger,
  ): Promise<{ analysis: Analysis; created: boolean }> {
    // Checked before anything is written (the row, then the resource): the path's ref can become the branch.
    rejectUnstorableText({ path: { commit_hash: ref }, body: input });
    const repo = await requireRepository(db, accountId, repositoryId);
    // A webhook names a commit that exists on the host now: fetch it, however recently the mirror was refreshed.
    const announced = trigger !== undefined && trigger.kind !== "api";
    const commitHash = announced ? await this.#deps.git.fetchCommit(repo, ref) : await this.#deps.git.resolveCommit(repo, ref, ["path", "commit_hash"]);
    // A branch name in the path is remembered as the branch, unless the body names one.
    const branch = input.branch ?? (commitHash.startsWith(ref.toLowerCase()) ? null : ref);
    const existing = await this.#live(db, repo.id, commitHash);
    if (existing) {
      // A row without its resource (the API died between the two) is healed by the repeat.
      if (existing.status === "pending" && this.#deps.launcher)
        await this.#deps.launcher.create(this.#spec(existing.id, accountId, repo, commitHash, existing.branch, existing.language));
      return { analysis: await this.#present(db, accountId, existing.id), created: false };
    }
    const launcher = this.#deps.launcher;
    if (!launcher) throw unavailable(NO_CLUSTER);

    const id = newId();
    const language = input.language ?? "en";
    const spec = this.#spec(id, accountId, repo, commitHash, branch, language);
    assertStorableText(spec, "the analysis's spec");
    // The row comes first here (unlike runs): the unique index on the live
    // (repository, commit) is what makes concurrent POSTs agree on one analysis.
    const inserted = await insertPendingAnalysis(db, {
      id,
      accountId,
      repositoryId: repo.id,
      commitHash,
      branch,
      language,
      workflowId: `${launcher.namespace}/${analysisResourceName(id)}`,
      trigger,
    });
    if (!inserted) {
      const winner = await this.#live(db, repo.id, commitHash);
      if (!winner) throw conflict("The analysis of this commit changed concurrently; try again");
      return { analysis: await this.#present(db, accountId, winner.id), created: false };
    }
    try {
      await launcher.create(spec);
    } catch (err) {
      await deleteAnalysisRow(db, id);
      this.#deps.logger.error({ err, analysis_id: id }, "could not create the Analysis resource");
      throw classifyInfrastructureError(err) ?? unavailable(NO_CLUSTER, err);
    }
    return { analysis: await this.#present(db, accountId, id), created: true };
  }

  async get(db: Db, accountId: string, repositoryId: string, ref: string): Promise<Analysis> {
    const row = await this.#find(db, accountId, repositoryId, ref);
    return this.#present(db, accountId, row.id);
  }

  /** The analysis's id (for its log stream), after the same checks as get. */
  async idOf(db: Db, accountId: string, repositoryId: string, ref: string): Promise<string> {
    return (await this.#find(db, accountId, repositoryId, ref)).id;
  }

  async list(db: Db, accountId: string, repositoryId: string, page: PageRequest): Promise<Page<Analysis>> {
    await requireRepository(db, accountId, repositoryId);
    const rows = await listAnalyses(db, accountId, repositoryId, page);
    const configured = await configuredEnvNames(db, accountId, repositoryId);
    return toPage(rows, page.limit, (r) => toAnalysis(r, configured, this.#environmentView));
  }

  async cancel(db: Db, accountId: string, repositoryId: string, ref: string): Promise<Analysis> {
    const row = await this.#find(db, accountId, repositoryId, ref);
    if (ANALYSIS_LIFECYCLE.isTerminal(row.status)) throw conflict(`Analysis already finished (${row.status})`);
    const launcher = this.#deps.launcher;
    if (!launcher) throw unavailable(NO_CLUSTER);
    await launcher.requestCancel(analysisResourceName(row.id));
    return this.#present(db, accountId, row.id);
  }

  /** Hides the analysis at once (so the commit can be analysed again) and removes its resource, Job, pods and logs. */
  async delete(db: Db, accountId: string, repositoryId: string, ref: string): Promise<void> {
    const row = await this.#find(db, accountId, repositoryId, ref);
    if (await removeDetachedWorkload(db, ANALYSIS_TABLE, accountId, row.id)) return;
    const launcher = this.#deps.launcher;
    if (!launcher) throw unavailable(NO_CLUSTER);
    await hideWorkload(db, ANALYSIS_TABLE, accountId, row.id);
    // The controller removes the row once the resource is gone; if it left the
    // cluster meanwhile, no controller will see it go.
    await launcher.delete(analysisResourceName(row.id));
    await removeDetachedWorkload(db, ANALYSIS_TABLE, accountId, row.id);
  }

  /** For runs: an experiment of the commit's completed analysis, or null when there is none with that id. */
  async experiment(db: Db, accountId: string, repositoryId: string, commitHash: string, experimentId: string): Promise<AnalysedExperiment | null> {
    const row = await this.#live(db, repositoryId, commitHash);
    if (!row || row.account_id !== accountId || row.status !== "completed" || !row.result) return null;
    const experiment = row.result.experiments.find((e) => e.id === experimentId);
    if (!experiment) return null;
    const configured = await configuredEnvNames(db, accountId, repositoryId);
    // Only this experiment's own variables: another entry point's needs never block it.
    return { experiment, missingEnvVars: experimentRequiredEnvVars(row, experiment).filter((n) => !configured.has(n)) };
  }

  /** The environment of a commit's completed analysis; null when it has none (not analysed, or analysed before environments). */
  async environmentOf(db: Db, accountId: string, repositoryId: string, commitHash: string): Promise<AnalyzedEnvironment | null> {
    const row = await this.#live(db, repositoryId, commitHash);
    if (!row || row.account_id !== accountId || row.status !== "completed" || !row.result) return null;
    return analyzedEnvironmentOf(row);
  }

  readonly #environmentView = (env: AnalyzedEnvironment) =>
    analysisEnvironmentView(
      env,
      { catalog: this.#deps.environments.catalog, allowedRegistries: this.#deps.environments.allowedRegistries ?? [] },
      this.#deps.environments.defaultComputeType,
    );

  async #find(db: Db, accountId: string, repositoryId: string, ref: string) {
    const repo = await requireRepository(db, accountId, repositoryId);
    // A full hash needs no trip to the mirror (and works for commits the mirror has not fetched).
    const commitHash = FULL_HASH.test(ref) ? ref : await this.#deps.git.resolveCommit(repo, ref, ["path", "commit_hash"]);
    const row = await this.#live(db, repo.id, commitHash);
    if (!row || row.account_id !== accountId) throw notFound("Analysis");
    return row;
  }

  /** The account's analysis by id, as the API shows it (a notification's body). */
  getById(db: Db, accountId: string, id: string): Promise<Analysis> {
    return this.#present(db, accountId, id);
  }

  async #present(db: Db, accountId: string, id: string): Promise<Analysis> {
    const row = await findAnalysis(db, accountId, id);
    if (!row) throw notFound("Analysis");
    return toAnalysis(row, await configuredEnvNames(db, accountId, row.repository_id), this.#environmentView);
  }

  #live(db: Db, repositoryId: string, commitHash: string) {
    return findLiveAnalysis(db, repositoryId, commitHash);
  }

  #spec(id: string, accountId: string, repo: { id: string; url: string }, commitHash: string, branch: string | null, language: "en" | "ja"): AnalysisSpec {
    return {
      analysisId: id,
      accountId,
      repositoryId: repo.id,
      repositoryUrl: repo.url,
      commitHash,
      ...(branch && { branch }),
      language,
      timeoutSeconds: this.#deps.timeoutSeconds,
    };
  }
}
