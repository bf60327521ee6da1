import { presetRequests } from "../../resources/quantity.ts";
import type { Db } from "../../db/database.ts";
import type { ComputeTypes } from "../../resources/compute-types.ts";
import { RUN_TABLE } from "../../db/workload-tables.ts";
import { RUN_LIFECYCLE, type RunSpec } from "../../resources/run.ts";
import { runResourceName } from "../../resources/labels.ts";
import type { Logger } from "../../logger.ts";
import { conflict, DomainValidationError, notFound, unavailable, type ValidationIssue } from "../errors.ts";
import { classifyInfrastructureError } from "../infrastructure-errors.ts";
import type { GitSource } from "../repositories/git-port.ts";
import { requireRepository } from "../repositories/repository-rows.ts";
import { newId } from "../shared/ids.ts";
import { assertStorableText, rejectUnstorableText } from "../shared/storable-text.ts";
import type { Page, PageRequest } from "../shared/pagination.ts";
import { toPage } from "../shared/pagination.ts";
import { NO_LIMITS, withinWaitingLimit, type Limits } from "../limits/limits.ts";
import { hideWorkload, mirrorWorkload, removeDetachedWorkload } from "../workloads/workload-rows.ts";
import { findRun, listRuns, queuePositions, RUN_ROWS, toRun, type RunFilter } from "./run-rows.ts";
import type { CreateRunInput, Run } from "./runs.schemas.ts";
import type { AnalysedExperiment } from "../analyses/analyses.ts";
import { buildExperimentCommand } from "../analyses/experiment-command.ts";
import { collectableOutputPaths } from "../outputs/output-paths.ts";
import type { EnvironmentService } from "../environments/environments.ts";
import type { AnalyzedEnvironment } from "../environments/resolve.ts";

export type { RunFilter };

/** What the run service needs from Kubernetes (src/k8s/run-resources.ts). */
export interface RunLauncher {
  readonly namespace: string;
  create(spec: RunSpec): Promise<{ metadata: { name: string; namespace: string; creationTimestamp?: Date | string } }>;
  requestCancel(name: string): Promise<boolean>;
  delete(name: string): Promise<void>;
}

/** Where runs of analysed experiments look their experiment up (the AnalysisService). */
export interface ExperimentCatalog {
  experiment(db: Db, accountId: string, repositoryId: string, commitHash: string, experimentId: string): Promise<AnalysedExperiment | null>;
  /** The environment a commit's completed analysis found; null when there is none. */
  environmentOf(db: Db, accountId: string, repositoryId: string, commitHash: string): Promise<AnalyzedEnvironment | null>;
}

export interface RunServiceDeps {
  git: GitSource;
  experiments: ExperimentCatalog;
  /** null when this process has no reachable cluster: run creation answers 503. */
  launcher: RunLauncher | null;
  /** The image and installed environment a run gets (the catalog's choice for its commit and compute type). */
  environments: Pick<EnvironmentService, "planRun">;
  /** The image runs without an analysed environment get (CODEPLANE_RUNNER_IMAGE). */
  runnerImage: string;
  computeTypes: ComputeTypes;
  defaultComputeType: string;
  defaultTimeoutSeconds: number;
  maxTimeoutSeconds: number;
  /** The operator's limits: the waiting limit is checked here (per-account overrides from account_limits); absent: none. */
  limits?: Limits;
  /** Whether the limits' CPU and memory caps apply (the built-in limiter admits runs; not where Kueue is configured). */
  capsApply?: boolean;
  logger: Logger;
}

const NO_CLUSTER = "Kubernetes is not reachable, so runs cannot be started now; the rest of the API works. See /readyz.";

export class RunService {
  readonly #deps: RunServiceDeps;

  constructor(deps: RunServiceDeps) {
    this.#deps = deps;
  }

  /** `origin.rerunOf`: the run this one repeats (rerun.ts). */
  async create(db: Db, accountId: string, repositoryId: string, ref: string, input: CreateRunInput, origin: { rerunOf?: string } = {}): Promise<Run> {
    // Everything given is checked before anything is written: the resource
    // comes before its row, so text the row cannot hold must never reach it.
    rejectUnstorableText({ path: { commit_hash: ref }, body: input });
    const repo = await requireRepository(db, accountId, repositoryId);
    const computeType = input.compute_type ?? this.#deps.defaultComputeType;
    const issues: ValidationIssue[] = [];
    // Own keys only: "constructor" or "toString" is no preset.
    if (!Object.hasOwn(this.#deps.computeTypes, computeType)) {
      const known = Object.keys(this.#deps.computeTypes).map((k) => `'${k}'`);
      issues.push({ loc: ["body", "compute_type"], msg: `Input should be ${known.join(", ")}`, type: "enum" });
    }
    const timeout = input.timeout_seconds ?? this.#deps.defaultTimeoutSeconds;
    if (timeout > this.#deps.maxTimeoutSeconds) {
      issues.push({ loc: ["body", "timeout_seconds"], msg: `Input should be less than or equal to ${this.#deps.maxTimeoutSeconds}`, type: "less_than_equal" });
    }
    if (issues.length) throw new DomainValidationError(issues);
    const commitHash = await this.#deps.git.resolveCommit(repo, ref, ["path", "commit_hash"]);
    let command = input.command;
    let experimentId: string | undefined;
    let parameters: RunSpec["parameters"];
    let outputPaths: string[] = [];
    if (input.analyzed_experiment !== undefined) {
      const built = await this.#experimentCommand(db, accountId, repo.id, commitHash, input.analyzed_experiment, input.parameters ?? {});
      ({ command, parameters, outputPaths } = built);
      experimentId = input.analyzed_experiment;
    }
    // Over the account's waiting limit: 429, before anything is created (domain/limits).
    // A run bigger than a CPU or memory cap by itself: 422, it could never start (the built-in limiter's caps only).
    const caps = this.#deps.capsApply ? { requests: presetRequests(this.#deps.computeTypes[computeType]!.requests), computeType } : undefined;
    const runId = await withinWaitingLimit(
      db,
      accountId,
      this.#deps.limits ?? NO_LIMITS,
      (db) => this.#launch(db, accountId, repo, commitHash, computeType, timeout, command!, experimentId, parameters, outputPaths, input, origin),
      caps,
    );
    return this.get(db, accountId, runId);
  }

  /** Plans the run's environment, creates its resource, then its row; the run's id. */
  async #launch(
    db: Db,
    accountId: string,
    repo: { id: string; url: string },
    commitHash: string,
    computeType: string,
    timeout: number,
    command: string[],
    experimentId: string | undefined,
    parameters: RunSpec["parameters"],
    outputPaths: string[],
    input: CreateRunInput,
    origin: { rerunOf?: string },
  ): Promise<string> {
    const launcher = this.#deps.launcher;
    if (!launcher) throw unavailable(NO_CLUSTER);
    // "auto": the environment the commit's analysis found (installed once per key and restored); "none": the runner image as it is.
    const analyzed = input.environment === "none" ? null : await this.#deps.experiments.environmentOf(db, accountId, repo.id, commitHash);
    const plan = await this.#deps.environments.planRun(db, { accountId, repositoryId: repo.id, commitHash, computeType }, analyzed, this.#deps.runnerImage);

    const runId = newId();
    const spec: RunSpec = {
      runId,
      accountId,
      repositoryId: repo.id,
      repositoryUrl: repo.url,
      commitHash,
      command,
      ...(experimentId !== undefined && { experimentId, parameters }),
      computeType,
      ...(analyzed && { image: plan.image }),
      ...(plan.environment && { environment: plan.environment }),
      timeoutSeconds: timeout,
      ...(input.retries !== undefined && input.retries > 0 && { retries: input.retries }),
      ...(origin.rerunOf !== undefined && { rerunOf: origin.rerunOf }),
      ...(outputPaths.length > 0 && { outputPaths }),
    };
    // The resource is the source of truth and is written first; if this
    // process dies before the row, the controller writes the row from it.
    assertStorableText(spec, "the run's spec");
    let resource;
    try {
      resource = await launcher.create(spec);
    } catch (err) {
      this.#deps.logger.error({ err, run_id: runId }, "could not create the Run resource");
      // A throttling, failing or conflicting API server says so (with Retry-After); anything else is "not reachable".
      throw classifyInfrastructureError(err) ?? unavailable(NO_CLUSTER, err);
    }
    await mirrorWorkload(db, RUN_ROWS, {
      namespace: resource.metadata.namespace,
      name: resource.metadata.name,
      createdAt: resource.metadata.creationTimestamp ? new Date(resource.metadata.creationTimestamp) : new Date(),
      spec,
      status: undefined,
    });
    return runId;
  }

  async get(db: Db, accountId: string, runId: string): Promise<Run> {
    const row = await findRun(db, accountId, runId);
    if (!row) throw notFound("Run");
    return toRun(row, await queuePositions(db, accountId, [row]));
  }

  async list(db: Db, accountId: string, filter: RunFilter, page: PageRequest): Promise<Page<Run>> {
    const rows = await listRuns(db, accountId, filter, page);
    const positions = await queuePositions(db, accountId, rows);
    return toPage(rows, page.limit, (r) => toRun(r, positions));
  }

  /** Asks the controller to stop the run; the status turns `cancelled` once its pod is gone. */
  async cancel(db: Db, accountId: string, runId: string): Promise<Run> {
    const run = await this.get(db, accountId, runId);
    if (RUN_LIFECYCLE.isTerminal(run.status)) throw conflict(`Run already finished (${run.status})`);
    const launcher = this.#deps.launcher;
    if (!launcher) throw unavailable(NO_CLUSTER);
    await launcher.requestCancel(runResourceName(runId));
    return run;
  }

  /** Stops the run if needed and removes the resource, its Job, pods, Secret, row and logs. */
  async delete(db: Db, accountId: string, runId: string): Promise<void> {
    await this.get(db, accountId, runId);
    if (await removeDetachedWorkload(db, RUN_TABLE, accountId, runId)) return;
    const launcher = this.#deps.launcher;
    if (!launcher) throw unavailable(NO_CLUSTER);
    await hideWorkload(db, RUN_TABLE, accountId, runId);
    // The controller removes the row (and its logs) once the resource is gone;
    // if it left the cluster meanwhile, no controller will see it go.
    await launcher.delete(runResourceName(runId));
    await removeDetachedWorkload(db, RUN_TABLE, accountId, runId);
  }

  async resolveCommit(db: Db, accountId: string, repositoryId: string, ref: string): Promise<string> {
    const repo = await requireRepository(db, accountId, repositoryId);
    return this.#deps.git.resolveCommit(repo, ref, ["path", "commit_hash"]);
  }

  async #experimentCommand(
    db: Db,
    accountId: string,
    repositoryId: string,
    commitHash: string,
    experimentId: string,
    overrides: NonNullable<CreateRunInput["parameters"]>,
  ) {
    const found = await this.#deps.experiments.experiment(db, accountId, repositoryId, commitHash, experimentId);
    if (!found) {
      throw new DomainValidationError([
        { loc: ["body", "analyzed_experiment"], msg: "Value error, this commit has no completed analysis with that experiment", type: "value_error" },
      ]);
    }
    const built = buildExperimentCommand(found.experiment, overrides);
    if (Array.isArray(built)) throw new DomainValidationError(built);
    if (found.missingEnvVars.length) {
      throw new DomainValidationError([
        {
          loc: ["body", "analyzed_experiment"],
          msg: `Value error, missing environment variables: ${found.missingEnvVars.join(", ")} (set them with POST /v1/environment-variables)`,
          type: "value_error",
        },
      ]);
    }
    // The experiment's analysed outputs inside the checkout are collected with $CODEPLANE_OUTPUT_DIR.
    return { ...built, outputPaths: collectableOutputPaths(found.experiment.outputs) };
  }
}
