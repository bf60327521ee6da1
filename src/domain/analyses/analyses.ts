import type { Db } from "../../db/database.ts";
import type { AnalysisSpec } from "../../k8s/crds/analysis.ts";
import { analysisResourceName } from "../../k8s/labels.ts";
import type { Logger } from "../../logger.ts";
import type { Experiment } from "../../analyzer/model.ts";
import { conflict, notFound, unavailable } from "../errors.ts";
import type { GitSource } from "../repositories/git-port.ts";
import { newId } from "../shared/ids.ts";
import { keysetPage } from "../shared/keyset.ts";
import { toPage, type Page, type PageRequest } from "../shared/pagination.ts";
import { isAnalysisTerminal, requiredEnvVars, toAnalysis } from "./analysis-rows.ts";
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
  async create(db: Db, accountId: string, repositoryId: string, ref: string, input: CreateAnalysisInput): Promise<{ analysis: Analysis; created: boolean }> {
    const repo = await this.#repository(db, accountId, repositoryId);
    const commitHash = await this.#deps.git.resolveCommit(repo.id, repo.url, ref, ["path", "commit_hash"]);
    // A branch name in the path is remembered as the branch, unless the body names one.
    const branch = input.branch ?? (commitHash.startsWith(ref.toLowerCase()) ? null : ref);
    const existing = await this.#live(db, repo.id, commitHash);
    if (existing) {
      // A row without its resource (the API died between the two) is healed by the repeat.
      if (existing.status === "pending" && this.#deps.launcher) await this.#deps.launcher.create(this.#spec(existing.id, accountId, repo, commitHash, existing.branch, existing.language));
      return { analysis: await this.#present(db, accountId, existing.id), created: false };
    }
    const launcher = this.#deps.launcher;
    if (!launcher) throw unavailable(NO_CLUSTER);

    const id = newId();
    const language = input.language ?? "en";
    const spec = this.#spec(id, accountId, repo, commitHash, branch, language);
    // The row comes first here (unlike runs): the unique index on the live
    // (repository, commit) is what makes concurrent POSTs agree on one analysis.
    const inserted = await db
      .insertInto("analyses")
      .values({
        id,
        account_id: accountId,
        repository_id: repo.id,
        commit_hash: commitHash,
        branch,
        language,
        workflow_id: `${launcher.namespace}/${analysisResourceName(id)}`,
        status: "pending",
        status_rank: 0,
        updated_at: new Date(),
      })
      .onConflict((oc) => oc.columns(["repository_id", "commit_hash"]).where("deleted_at", "is", null).doNothing())
      .returning("id")
      .executeTakeFirst();
    if (!inserted) {
      const winner = await this.#live(db, repo.id, commitHash);
      if (!winner) throw conflict("The analysis of this commit changed concurrently; try again");
      return { analysis: await this.#present(db, accountId, winner.id), created: false };
    }
    try {
      await launcher.create(spec);
    } catch (err) {
      await db.deleteFrom("analyses").where("id", "=", id).execute();
      this.#deps.logger.error({ err, analysis_id: id }, "could not create the Analysis resource");
      throw unavailable(NO_CLUSTER, err);
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
    await this.#repository(db, accountId, repositoryId);
    const rows = await keysetPage(
      db.selectFrom("analyses").selectAll().where("account_id", "=", accountId).where("repository_id", "=", repositoryId).where("deleted_at", "is", null),
      page,
    ).execute();
    const configured = await configuredEnvNames(db, accountId, repositoryId);
    return toPage(rows, page.limit, (r) => toAnalysis(r, configured));
  }

  async cancel(db: Db, accountId: string, repositoryId: string, ref: string): Promise<Analysis> {
    const row = await this.#find(db, accountId, repositoryId, ref);
    if (isAnalysisTerminal(row.status)) throw conflict(`Analysis already finished (${row.status})`);
    const launcher = this.#deps.launcher;
    if (!launcher) throw unavailable(NO_CLUSTER);
    await launcher.requestCancel(analysisResourceName(row.id));
    return this.#present(db, accountId, row.id);
  }

  /** Hides the analysis at once (so the commit can be analysed again) and removes its resource, Job, pods and logs. */
  async delete(db: Db, accountId: string, repositoryId: string, ref: string): Promise<void> {
    const row = await this.#find(db, accountId, repositoryId, ref);
    const launcher = this.#deps.launcher;
    if (!launcher) throw unavailable(NO_CLUSTER);
    await db.updateTable("analyses").set({ deleted_at: new Date() }).where("id", "=", row.id).execute();
    // The controller removes the row once the resource is gone.
    await launcher.delete(analysisResourceName(row.id));
  }

  /** For runs: an experiment of the commit's completed analysis, or null when there is none with that id. */
  async experiment(db: Db, accountId: string, repositoryId: string, commitHash: string, experimentId: string): Promise<AnalysedExperiment | null> {
    const row = await this.#live(db, repositoryId, commitHash);
    if (!row || row.account_id !== accountId || row.status !== "completed" || !row.result) return null;
    const experiment = row.result.experiments.find((e) => e.id === experimentId);
    if (!experiment) return null;
    const configured = await configuredEnvNames(db, accountId, repositoryId);
    return { experiment, missingEnvVars: requiredEnvVars(row).filter((n) => !configured.has(n)) };
  }

  async #find(db: Db, accountId: string, repositoryId: string, ref: string) {
    const repo = await this.#repository(db, accountId, repositoryId);
    // A full hash needs no trip to the mirror (and works for commits the mirror has not fetched).
    const commitHash = FULL_HASH.test(ref) ? ref : await this.#deps.git.resolveCommit(repo.id, repo.url, ref, ["path", "commit_hash"]);
    const row = await this.#live(db, repo.id, commitHash);
    if (!row || row.account_id !== accountId) throw notFound("Analysis");
    return row;
  }

  async #present(db: Db, accountId: string, id: string): Promise<Analysis> {
    const row = await db.selectFrom("analyses").selectAll().where("id", "=", id).where("account_id", "=", accountId).executeTakeFirst();
    if (!row) throw notFound("Analysis");
    return toAnalysis(row, await configuredEnvNames(db, accountId, row.repository_id));
  }

  #live(db: Db, repositoryId: string, commitHash: string) {
    return db
      .selectFrom("analyses")
      .selectAll()
      .where("repository_id", "=", repositoryId)
      .where("commit_hash", "=", commitHash)
      .where("deleted_at", "is", null)
      .executeTakeFirst();
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

  async #repository(db: Db, accountId: string, repositoryId: string): Promise<{ id: string; url: string }> {
    const repo = await db.selectFrom("repositories").select(["id", "url"]).where("id", "=", repositoryId).where("account_id", "=", accountId).executeTakeFirst();
    if (!repo) throw notFound("Repository");
    return repo;
  }
}

/** Names of the variables a run of this repository would get (account-wide and repository-scoped). */
export async function configuredEnvNames(db: Db, accountId: string, repositoryId: string): Promise<Set<string>> {
  const rows = await db
    .selectFrom("environment_variables")
    .select("name")
    .where("account_id", "=", accountId)
    .where((eb) => eb.or([eb("repository_id", "is", null), eb("repository_id", "=", repositoryId)]))
    .execute();
  return new Set(rows.map((r) => r.name));
}
