import { randomBytes } from "node:crypto";
import type { V1Job, V1Pod } from "@kubernetes/client-node";
import type { Db } from "../db/database.ts";
import type { EnvironmentDefinitionJson, EnvironmentRow } from "../db/schema.ts";
import { analyzedEnvironmentOf, findLiveAnalysis } from "../domain/analyses/analysis-rows.ts";
import {
  claimBuild,
  describedEnvironment,
  findEnvironment,
  markFailed,
  pinForRun,
  reserveEnvironment,
  saveBuildLog,
  touchEnvironment,
} from "../domain/environments/environment-rows.ts";
import { resolveEnvironment, type ImagePolicy } from "../domain/environments/resolve.ts";
import type { ClusterActions } from "../k8s/cluster-actions.ts";
import { buildEnvironmentJob, environmentSecret } from "../k8s/environment-job.ts";
import type { ComputePreset } from "../resources/compute-types.ts";
import { ENVIRONMENT_LABEL, environmentLabels, environmentResourceName } from "../resources/labels.ts";
import type { RunEnvironmentSpec } from "../resources/run.ts";
import type { Logger } from "../logger.ts";
import { jobCondition } from "./run-rules.ts";
import type { CheckoutDeps } from "./workload-secret.ts";

// Environment builds, driven by the runs that wait for them: gather (the
// environment's row and its Job), decide (pure: decideBuild), act (start the
// Job, record a failure with its log, keep a finished build's log). Every
// waiting run of a key reconciles the same row, and the row's unique live
// (account, key) makes them share one build: whichever looks first starts
// it, the others find it started. The archive's upload (through the API)
// marks the row ready; a Job that ends without one marks it failed.

/** The install's output kept with the environment: its last 256 KiB. */
export const BUILD_LOG_MAX_BYTES = 256 * 1024;
/** Lines of the install's end the failure message quotes (the failing package is among them). */
const ERROR_TAIL_LINES = 15;
/** How long after a claim a missing Job is taken to be still on its way rather than lost. */
export const JOB_GRACE_MS = 60_000;
/** The token outlives the Job's deadline by this much (the Job starts a little after minting). */
const DEADLINE_SLACK_SECONDS = 120;

export type BuildDecision =
  | { do: "ready" }
  | { do: "failed" }
  | { do: "start" }
  | { do: "wait" }
  /** The build ended without an environment: record why (with the install's log when the pod has one). */
  | { do: "fail"; why: string };

type RowFacts = Pick<EnvironmentRow, "status" | "started_at" | "build_deadline" | "created_at">;

/** What to do about an environment, from its row and its Job (null: none). Pure. */
export function decideBuild(row: RowFacts, job: V1Job | null, now: Date, timeoutSeconds: number): BuildDecision {
  if (row.status === "ready") return { do: "ready" };
  if (row.status === "failed") return { do: "failed" };
  if (job === null) {
    if (!row.started_at) return { do: "start" };
    // Claimed a moment ago: its Job is on its way (the claim comes before the Job), so wait for it.
    if (now.getTime() - row.started_at.getTime() < JOB_GRACE_MS) return { do: "wait" };
    // Its Job is gone (deleted by hand, its creation failed, or its TTL passed while nobody waited): start
    // it again, unless its deadline has passed, which means it ran and nobody recorded the end, or it has
    // been tried for longer than two builds' budgets (a Job that cannot be created, or keeps vanishing).
    if (row.build_deadline && row.build_deadline.getTime() + DEADLINE_SLACK_SECONDS * 1000 < now.getTime()) {
      return { do: "fail", why: "the build's Job ended without storing the environment, and its log is gone" };
    }
    if (now.getTime() - row.created_at.getTime() > (2 * timeoutSeconds + DEADLINE_SLACK_SECONDS) * 1000) {
      return { do: "fail", why: `the build's Job could not be kept running for ${2 * timeoutSeconds}s (it was lost or could not be created)` };
    }
    return { do: "start" };
  }
  const failed = jobCondition(job, "Failed");
  if (failed) {
    if (failed.reason === "DeadlineExceeded")
      return { do: "fail", why: `the build took longer than ${timeoutSeconds}s (CODEPLANE_ENVIRONMENT_BUILD_TIMEOUT_SECONDS)` };
    return { do: "fail", why: "" };
  }
  if (jobCondition(job, "Complete")) return { do: "fail", why: "the build finished without storing the environment" };
  return { do: "wait" };
}

/** The install's failure as a user reads it: the failing step's line and the lines before it, where the package at fault is named. */
export function failureMessage(log: string | null, why: string): string {
  return failureText(log === null ? null : log.replaceAll("\u0000", "\uFFFD"), why.replaceAll("\u0000", "\uFFFD")).slice(0, 4000);
}

function failureText(log: string | null, why: string): string {
  if (why) return `environment build failed: ${why}`;
  if (!log) return "environment build failed (its log is gone)";
  const lines = log.split("\n").filter((l) => l.trim() !== "");
  const stepAt = lines.findLastIndex((l) => l.startsWith("environment build failed in step"));
  if (stepAt === -1) return `environment build failed:\n${lines.slice(-ERROR_TAIL_LINES).join("\n")}`;
  const before = lines.slice(Math.max(0, stepAt - ERROR_TAIL_LINES), stepAt).filter((l) => !l.startsWith("==> "));
  // What the script says after the step line is its hint (how an operator opens a package mirror).
  return [lines[stepAt], ...before, ...lines.slice(stepAt + 1)].join("\n");
}

/** What the build's pod says about its failure, for a failure that is not the install's own (pure). */
export function podFailure(pod: V1Pod, installLogged: boolean): string {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const c of statuses) {
    const waiting = c.state?.waiting;
    if (waiting?.reason && waiting.reason !== "PodInitializing" && waiting.reason !== "ContainerCreating") {
      return `the ${c.name} step could not start: ${waiting.reason}${waiting.message ? ` (${waiting.message})` : ""}`;
    }
    const t = c.state?.terminated;
    if (!t || t.exitCode === 0) continue;
    if (t.reason === "OOMKilled") return `the ${c.name} step ran out of memory (OOMKilled): use a compute type with more memory`;
    // The install's own lines say why better than its exit code; the others' termination message is their log's end.
    if (c.name === "install" && installLogged) return "";
    const said = (t.message ?? "").trim().split("\n").slice(-10).join("\n");
    const step = c.name === "main" ? "save" : c.name;
    return `the ${step} step failed (exit code ${t.exitCode})${said ? `: ${said}` : ""}`;
  }
  return "";
}

export const tail = (raw: string, max = BUILD_LOG_MAX_BYTES): string => {
  // Postgres text cannot hold NUL: a step that printed binary must not make the failure unrecordable.
  const text = raw.replaceAll("\u0000", "\uFFFD");
  const buf = Buffer.from(text, "utf8");
  return buf.length <= max ? text : `[...]\n${buf.subarray(buf.length - max).toString("utf8")}`;
};

export interface EnvironmentBuildsDeps {
  db: Db;
  namespace: string;
  images: { runner: string; codeplane: string; pullPolicy: "Always" | "IfNotPresent" | "Never"; pullSecrets?: readonly string[] };
  /** The build's time budget, apart from any run's timeout (CODEPLANE_ENVIRONMENT_BUILD_TIMEOUT_SECONDS). */
  buildTimeoutSeconds: number;
  jobTtlSeconds: number;
  checkout: CheckoutDeps;
  cluster: ClusterActions;
  /** The image catalog and allowed repository registries: a re-reservation resolves the run's analysis with them again. */
  imagePolicy: ImagePolicy;
  logger: Logger;
}

/** A run waiting for its environment, as the builds see it. */
export interface WaitingRun {
  runId: string;
  accountId: string;
  repositoryId: string;
  commitHash: string;
  computeType: string;
  environment: RunEnvironmentSpec;
  compute: ComputePreset;
}

/** What an environment row describes: its image and what the analysis resolved (toolchains, manifests, steps with why, ...). */
export interface EnvironmentDescription {
  image: string;
  definition: EnvironmentDefinitionJson;
}

/**
 * What a row reserved again for a waiting run says, from what was found (pure): the run's analysis
 * resolved again when it still gives the run's key (the description the run was planned with), else
 * the newest earlier row of the key (a catalog changed since), else what the run's spec holds (steps
 * and cache paths only).
 */
export function describeReservation(
  env: RunEnvironmentSpec,
  fromAnalysis: (EnvironmentDescription & { key: string | null }) | null,
  earlier: EnvironmentDescription | undefined,
): EnvironmentDescription {
  if (fromAnalysis && fromAnalysis.key === env.key) return { image: fromAnalysis.image, definition: fromAnalysis.definition };
  if (earlier) return earlier;
  return {
    image: env.image,
    definition: {
      toolchains: [],
      manifests: [],
      steps: env.steps.map((s) => ({ ...s, why: "", ecosystem: "" })),
      cache_paths: env.cachePaths,
      packages: [],
      notes: [],
      warnings: env.warnings,
    },
  };
}

export type BuildState = { state: "ready"; row: EnvironmentRow } | { state: "waiting" } | { state: "failed"; error: string };

export class EnvironmentBuilds {
  readonly #d: EnvironmentBuildsDeps;

  constructor(deps: EnvironmentBuildsDeps) {
    this.#d = deps;
  }

  /** Where the run's environment is: ready to restore, being built (started if nobody had), or failed. */
  async ensure(run: WaitingRun): Promise<BuildState> {
    const { db, cluster, namespace } = this.#d;
    const env = run.environment;
    // The row is reserved when the run is created; one deleted or evicted since is reserved again, described as the first was.
    const row = (await findEnvironment(db, run.accountId, env.key)) ?? (await this.#reserveAgain(run));
    const jobName = environmentResourceName(row.id);
    const job = row.status === "building" || (row.status === "ready" && row.log === null) ? await cluster.getJob(namespace, jobName) : null;
    const decision = decideBuild(row, job, new Date(), this.#d.buildTimeoutSeconds);
    switch (decision.do) {
      case "ready":
        // Promised to this run: its archive stays until the run has restored it, whatever eviction or a
        // DELETE do meanwhile. Dropped since it was read: the next look reserves it again and builds.
        if (!(await pinForRun(db, row.id, run.runId))) return { state: "waiting" };
        // In use from now: the least recently used go first, and a run about to restore it is using it.
        await touchEnvironment(db, row.id);
        if (row.log === null && job && jobCondition(job, "Complete")) await this.#keepLog(row);
        else await this.#cleanUp(row.id);
        return { state: "ready", row };
      case "failed":
        return { state: "failed", error: row.error ?? "environment build failed" };
      case "start":
        await this.#start(row, run);
        return { state: "waiting" };
      case "wait":
        return { state: "waiting" };
      case "fail": {
        const found = await this.#failure(row.id);
        const log = found.log;
        const error = failureMessage(log, decision.why || found.why);
        await markFailed(db, row.id, error, log === null ? null : tail(log));
        await this.#cleanUp(row.id);
        this.#d.logger.warn({ environment: row.key, account: row.account_id, error }, "environment build failed");
        // Another waiter may have recorded it first: report what the row says.
        const now = await findEnvironment(db, run.accountId, env.key);
        return now?.status === "ready" ? { state: "ready", row: now } : { state: "failed", error: now?.error ?? error };
      }
    }
  }

  /** A new live row for a run whose environment was deleted or evicted before its Job was made. */
  async #reserveAgain(run: WaitingRun): Promise<EnvironmentRow> {
    const { db } = this.#d;
    const { image, definition } = describeReservation(
      run.environment,
      await this.#fromAnalysis(run),
      await describedEnvironment(db, run.accountId, run.environment.key),
    );
    const reserved = await reserveEnvironment(db, {
      accountId: run.accountId,
      repositoryId: run.repositoryId,
      commitHash: run.commitHash,
      key: run.environment.key,
      image,
      definition,
    });
    return reserved.row;
  }

  /** The run's commit's analysis resolved again for its compute type, as planRun did when the run was made. */
  async #fromAnalysis(run: WaitingRun): Promise<(EnvironmentDescription & { key: string | null }) | null> {
    const analysis = await findLiveAnalysis(this.#d.db, run.repositoryId, run.commitHash);
    if (analysis?.account_id !== run.accountId || analysis.status !== "completed") return null;
    const analyzed = analyzedEnvironmentOf(analysis);
    if (!analyzed) return null;
    const resolved = resolveEnvironment(analyzed, this.#d.imagePolicy, run.computeType);
    return resolved.ok ? { key: resolved.key, image: resolved.image, definition: resolved.definition } : null;
  }

  async #start(row: EnvironmentRow, run: WaitingRun): Promise<void> {
    const { db, cluster, namespace, checkout } = this.#d;
    if (!checkout.internalUrl) throw new Error("CODEPLANE_INTERNAL_URL is not set, so environment builds cannot check out or store their archive");
    const name = environmentResourceName(row.id);
    const deadline = new Date(Date.now() + this.#d.buildTimeoutSeconds * 1000);
    const uploadToken = `cpu_${randomBytes(32).toString("base64url")}`;
    // Another waiting run may be starting it right now: one claim wins, the others wait for its Job.
    if (!(await claimBuild(db, row.id, row.started_at, uploadToken, new Date(deadline.getTime() + DEADLINE_SLACK_SECONDS * 1000)))) return;
    const checkoutToken = await checkout.mint({
      workloadKind: "environment",
      workloadId: row.id,
      accountId: run.accountId,
      repositoryId: run.repositoryId,
      commitHash: run.commitHash,
      expiresAt: new Date(deadline.getTime() + DEADLINE_SLACK_SECONDS * 1000),
    });
    // The Secret first (a retried start replaces one left by an attempt whose Job never came), then the Job that reads it.
    const labels = environmentLabels(run.accountId, run.repositoryId, row.id);
    await cluster.deleteSecret(namespace, name);
    await cluster.createSecret(namespace, environmentSecret({ name, namespace, labels }, { checkout: checkoutToken, upload: uploadToken }));
    const job = buildEnvironmentJob({
      environmentId: row.id,
      accountId: run.accountId,
      repositoryId: run.repositoryId,
      commitHash: run.commitHash,
      key: row.key,
      image: run.environment.image,
      steps: run.environment.steps,
      cachePaths: run.environment.cachePaths,
      namespace,
      compute: run.compute,
      timeoutSeconds: this.#d.buildTimeoutSeconds,
      ttlSecondsAfterFinished: this.#d.jobTtlSeconds,
      checkout: {
        gitUrl: `${checkout.internalUrl}/git/${run.repositoryId}.git`,
        secretName: name,
        egress: checkout.egress,
        preprocessEnv: checkout.preprocessEnv,
      },
      internalUrl: checkout.internalUrl,
      images: this.#d.images,
      imagePullSecrets: this.#d.images.pullSecrets,
    });
    await cluster.createJob(namespace, job);
    this.#d.logger.info({ environment: row.key, account: run.accountId, image: run.environment.image }, "environment build started");
  }

  /** The install container's log, its last 256 KiB at most; null when it cannot be read (the pod is gone, the container never ran). */
  async #installLog(id: string): Promise<string | null> {
    const { cluster, namespace } = this.#d;
    const pod = await cluster.newestPod(namespace, `${ENVIRONMENT_LABEL}=${id}`).catch(() => null);
    if (!pod?.metadata?.name) return null;
    return this.#readLog(pod.metadata.name, "install");
  }

  async #readLog(pod: string, container: string): Promise<string | null> {
    // The API server answers 400 for a container that never started: that is "no log", not an error to retry forever.
    return this.#d.cluster.readPodLog(this.#d.namespace, pod, container, { lines: 5000, maxBytes: BUILD_LOG_MAX_BYTES }).catch(() => null);
  }

  /**
   * Why the build's pod failed, from its status: the install's log when the install failed (its
   * lines name the package), and otherwise what the step that failed says (the checkout's message,
   * the save's refusal, an image that cannot be pulled, the OOM killer).
   */
  async #failure(id: string): Promise<{ log: string | null; why: string }> {
    const pod = await this.#d.cluster.newestPod(this.#d.namespace, `${ENVIRONMENT_LABEL}=${id}`).catch(() => null);
    if (!pod?.metadata?.name) return { log: null, why: "" };
    const install = await this.#readLog(pod.metadata.name, "install");
    return { log: install, why: podFailure(pod, install !== null) };
  }

  async #keepLog(row: EnvironmentRow): Promise<void> {
    const log = await this.#installLog(row.id);
    await saveBuildLog(this.#d.db, row.id, log === null ? "(the build's log was not kept: its pod is gone)" : tail(log));
    await this.#cleanUp(row.id);
  }

  /** The build's Secret and tokens are of no use once it has ended. */
  async #cleanUp(id: string): Promise<void> {
    await this.#d.cluster.deleteSecret(this.#d.namespace, environmentResourceName(id));
    await this.#d.checkout.revoke("environment", id);
  }
}
