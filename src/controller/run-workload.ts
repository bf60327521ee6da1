import type { ComputeTypes } from "../resources/compute-types.ts";
import type { V1Job, V1Pod } from "@kubernetes/client-node";
import type { LogLine } from "@codeplane/frames";
import { ATTEMPT_ANNOTATION, LOG_SEQ_OFFSET_ANNOTATION, RUN_LIFECYCLE, RUN_WORKLOAD, runSpecSchema, type RunSpec, type RunStatus } from "../resources/run.ts";
import { attemptJobName, attemptNumber, attemptSeqOffset, currentAttempt, decideRetry, mayRetry, retriedStatus, trackAttempts } from "./run-retry.ts";
import { runLabels } from "../resources/labels.ts";
import { buildRunJob, OUTPUT_TOKEN_KEY } from "../k8s/run-job.ts";
import { observeRun, observeWarmRun, type RunObservation } from "./run-observation.ts";
import { adopted, notReady, presetFor, type Workload } from "./workload.ts";
import type { WarmPools } from "./warm-pools.ts";
import { POOL_LABEL } from "../resources/warm-pools.ts";
import { API_VERSION } from "../resources/common.ts";
import { RUN_KIND } from "../resources/run.ts";
import { Unreconcilable } from "../domain/workloads/unreconcilable.ts";
import type { EnvironmentBuilds } from "./environment-builds.ts";

/** How often a run waiting for its environment's build looks again. */
export const ENVIRONMENT_POLL_MS = 2000;
import { ensureWorkloadSecret, releaseWorkloadSecret, type CheckoutDeps } from "./workload-secret.ts";
import type { RunMetrics } from "./run-metrics.ts";

// Runs as a workload: the user's command in a checkout, with the account's
// and repository's environment variables in the Secret the Run owns.

export interface RunWorkloadDeps {
  /** The timeline's histograms, observed when a run finishes (absent: none). */
  metrics?: RunMetrics;
  /** Environment builds: a run with an environment waits for its build (null: runs are given none). */
  environments: Pick<EnvironmentBuilds, "ensure"> | null;
  /** Records on the run's row whether its environment was restored from the cache or built for it. */
  recordEnvironmentCache(runId: string, cache: "hit" | "built"): Promise<void>;
  /** The variables a run of this repository gets, decrypted (only called when the Job is about to be created). */
  resolveEnv(accountId: string, repositoryId: string): Promise<Record<string, string>>;
  images: { runner: string; codeplane: string; pullPolicy: "Always" | "IfNotPresent" | "Never"; pullSecrets?: readonly string[] };
  computeTypes: ComputeTypes;
  jobTtlSeconds: number;
  checkout: CheckoutDeps;
  /** Seconds a run may wait for admission after its Job is made (Kueue): its tokens are valid this much longer. */
  queueAllowanceSeconds?: number;
  /**
   * Output collection (issue 31): each run's pod gets a token to send its outputs with (minted here,
   * valid until expiresAt) and collectSeconds past its timeout to send them. Absent: no collection.
   */
  outputs?: { collectSeconds: number; mint(runId: string, accountId: string, expiresAt: Date): Promise<string> };
  /**
   * Before a retried run's next attempt is recorded (run-retry.ts): stores its marker line and drops
   * what the lost attempt left that the next one writes again (its outputs, its metrics). Idempotent.
   */
  beginAttempt?(runId: string, attempt: number, marker: LogLine): Promise<void>;
  /** Warm pools (issue 33): a run of a pooled environment and compute type claims a waiting pod when there is one. */
  warm?: Pick<WarmPools, "claim" | "progress">;
}

/**
 * The run's current Job: a later attempt's (a retry, run-retry.ts), else the one its status
 * recorded (a warm pool's Job it adopted), else the Run's own name.
 */
export function runJobName(run: { metadata: { name: string }; status?: RunStatus }): string {
  const attempt = currentAttempt(run.status);
  return attempt && attempt.attempt > 1 ? attempt.jobName : (run.status?.jobName ?? run.metadata.name);
}

/** How often a warm run whose command has not started yet is looked at: its agent reports to codeplane, not to its pod. */
export const WARM_STARTING_POLL_MS = 500;
/** The same slack a cold run's checkout token has past its deadline (workload-secret.ts). */
const CHECKOUT_TOKEN_SLACK_SECONDS = 120;

/** Seconds an output token outlives the run's deadline and collection margin: the deadline counts from the Job's start, a little after minting. */
const OUTPUT_TOKEN_SLACK_SECONDS = 300;

export function runWorkload(deps: RunWorkloadDeps): Workload<RunSpec, RunStatus, RunObservation> {
  return {
    ...RUN_WORKLOAD,
    started: { reason: "ContainerStarted", message: "the run's command started" },
    specSchema: runSpecSchema,
    idOf: (spec) => spec.runId,
    async job(run, cluster) {
      const { spec } = run;
      const compute = presetFor(deps.computeTypes, spec.computeType);
      if (spec.environment) {
        if (!deps.environments) throw new Unreconcilable("NoEnvironments", "this controller cannot build environments");
        const built = await deps.environments.ensure({ ...spec, environment: spec.environment, compute });
        if (built.state === "waiting") return notReady("preprocessing", "EnvironmentBuilding", ENVIRONMENT_POLL_MS);
        if (built.state === "failed") {
          throw new Unreconcilable("EnvironmentFailed", `${built.error}\n(the build's log: GET /v1/environments/${spec.environment.key})`, { expected: true });
        }
        // Ready before the run existed: a cache hit; after: this run waited for its build.
        const created = new Date(run.metadata.creationTimestamp ?? Date.now()).getTime();
        await deps.recordEnvironmentCache(spec.runId, (built.row.completed_at?.getTime() ?? 0) > created ? "built" : "hit");
      }
      const labels = runLabels(spec.accountId, spec.repositoryId, spec.runId);
      const outputs = deps.outputs;
      const internalUrl = deps.checkout.internalUrl;
      // Only a first attempt takes a waiting pod: a retry follows a lost one, and a claim is once per run.
      if (deps.warm && internalUrl && attemptNumber(run.status) === 1) {
        const claim = await deps.warm.claim({
          runId: spec.runId,
          environmentKey: spec.environment?.key,
          computeType: spec.computeType,
          timeoutSeconds: spec.timeoutSeconds,
          owner: { apiVersion: API_VERSION, kind: RUN_KIND, name: run.metadata.name, uid: run.metadata.uid },
          labels,
          // What a cold run's pod gets from its spec and Secret, handed over by the internal endpoint instead.
          assignment: async () => {
            const deadline = new Date(Date.now() + (spec.timeoutSeconds + CHECKOUT_TOKEN_SLACK_SECONDS) * 1000);
            const checkoutToken = await deps.checkout.mint({
              workloadKind: "run",
              workloadId: spec.runId,
              accountId: spec.accountId,
              repositoryId: spec.repositoryId,
              commitHash: spec.commitHash,
              expiresAt: deadline,
            });
            const outputToken = outputs
              ? await outputs.mint(
                  spec.runId,
                  spec.accountId,
                  new Date(Date.now() + (spec.timeoutSeconds + outputs.collectSeconds + OUTPUT_TOKEN_SLACK_SECONDS) * 1000),
                )
              : null;
            return {
              run_id: spec.runId,
              commit: spec.commitHash,
              git_url: `${internalUrl}/git/${spec.repositoryId}.git`,
              checkout_token: checkoutToken,
              command: [...spec.command],
              env: await deps.resolveEnv(spec.accountId, spec.repositoryId),
              environment: spec.environment
                ? { archive_url: `${internalUrl}/internal/environments/${spec.environment.key}/archive`, warnings: [...spec.environment.warnings] }
                : null,
              outputs:
                outputs && outputToken
                  ? {
                      url: `${internalUrl}/internal/runs/${spec.runId}/outputs`,
                      token: outputToken,
                      paths: [...(spec.outputPaths ?? [])],
                      collect_seconds: outputs.collectSeconds,
                    }
                  : null,
              timeout_seconds: spec.timeoutSeconds,
            };
          },
        });
        if (claim) return adopted(claim.jobName);
      }
      const env = await deps.resolveEnv(spec.accountId, spec.repositoryId);
      const secretValues = outputs
        ? {
            ...env,
            [OUTPUT_TOKEN_KEY]: await outputs.mint(
              spec.runId,
              spec.accountId,
              new Date(Date.now() + (spec.timeoutSeconds + outputs.collectSeconds + OUTPUT_TOKEN_SLACK_SECONDS + (deps.queueAllowanceSeconds ?? 0)) * 1000),
            ),
          }
        : env;
      const attempt = attemptNumber(run.status);
      const checkout = await ensureWorkloadSecret(
        RUN_WORKLOAD,
        spec.runId,
        run,
        cluster,
        deps.checkout,
        labels,
        secretValues,
        attempt > 1 ? attemptSecretName(run.metadata.name, attempt) : undefined,
        deps.queueAllowanceSeconds,
      );
      const job = buildRunJob({
        resource: run,
        images: deps.images,
        imagePullSecrets: deps.images.pullSecrets,
        compute,
        checkout,
        envNames: Object.keys(env),
        internalUrl: deps.checkout.internalUrl,
        ...(outputs && { outputCollectSeconds: outputs.collectSeconds }),
        ttlSecondsAfterFinished: deps.jobTtlSeconds,
      });
      return (spec.retries ?? 0) > 0 ? asAttempt(job, run.metadata.name, attemptNumber(run.status)) : job;
    },
    jobName: runJobName,
    observe: async ({ resource, job, pod, now }) => {
      // A warm pool's Job (issue 33): its pod is older than the run, so the claim's progress says when it started.
      if (deps.warm && job?.metadata?.labels?.[POOL_LABEL]) {
        const progress = await deps.warm.progress(resource.spec.runId);
        if (progress) {
          const obs = observeWarmRun(resource.spec, resource.status, job, pod, now, progress);
          return acrossAttempts(
            resource.spec,
            resource.status,
            obs.phase === "preprocessing" && pod ? { ...obs, requeueAfterMs: WARM_STARTING_POLL_MS } : obs,
            pod,
          );
        }
      }
      return acrossAttempts(resource.spec, resource.status, observeRun(resource.spec, resource.status, job, pod, now), pod);
    },
    retry: (run, obs, now) => {
      const d = decideRetry({
        runName: run.metadata.name,
        retries: run.spec.retries,
        cancelRequested: run.spec.cancelRequested,
        status: run.status,
        outcome: obs,
        now,
      });
      if (d.kind !== "retry") return null;
      const previous = run.status ?? { phase: "pending" as const };
      return { status: retriedStatus(previous, d, now, run.metadata.name), reason: "Retrying", note: d.note, attempt: d.next.attempt, marker: d.marker };
    },
    beginAttempt: async (run, plan) => {
      await deps.beginAttempt?.(run.spec.runId, plan.attempt, plan.marker);
    },
    attemptStarted: (previous, next) => {
      const now = currentAttempt(next);
      const before = currentAttempt(previous);
      // The first attempt's start is the run's own (the reconciler releases then); a later one's is new.
      return !!now && now.attempt > 1 && !!now.startTime && !(before?.attempt === now.attempt && before.startTime);
    },
    mayContinue: (run) => mayRetry(run.spec.retries, run.status, run.spec.cancelRequested),
    extraStatus: (obs, previous, ctx) => {
      const timeline = obs.timeline ?? previous?.timeline;
      const terminal = RUN_LIFECYCLE.isTerminal(obs.phase);
      // A run with retries records its first attempt once its Job exists; any other only once it ended (one attempt, as it always had).
      const attempts = trackAttempts(previous?.attempts, {
        runName: ctx.resource.metadata.name,
        jobExists: ctx.job && (ctx.resource.spec.retries ?? 0) > 0,
        firstCreatedAt: previous?.timeline?.admitted ?? obs.timeline?.admitted ?? ctx.resource.metadata.creationTimestamp,
        now: ctx.now,
        // The first attempt's start is the run's own (known even once its pod is gone).
        attemptStart: obs.attemptStartTime ?? (attemptNumber(previous) === 1 ? obs.startTime : undefined),
        ended: terminal ? { at: obs.completionTime ?? ctx.now.toISOString(), reason: obs.reason, message: obs.error } : null,
      });
      return { ...(timeline && Object.keys(timeline).length > 0 && { timeline }), ...(attempts && { attempts }) };
    },
    release: (run, cluster) => {
      const later = Array.from({ length: attemptNumber(run.status) - 1 }, (_, i) => attemptSecretName(run.metadata.name, i + 2));
      return releaseWorkloadSecret(RUN_WORKLOAD, run.spec.runId, run.metadata.namespace, cluster, deps.checkout, later);
    },
    finished: (run, status) =>
      deps.metrics?.finished({
        createdAt: run.metadata.creationTimestamp ? new Date(run.metadata.creationTimestamp).toISOString() : undefined,
        computeType: run.spec.computeType,
        phase: status.phase ?? "failed",
        timeline: status.timeline,
        startTime: status.startTime,
        completionTime: status.completionTime,
      }),
    eventNote: (status) => status.error ?? `run is ${status.phase}`,
  };
}

/**
 * A later attempt's Secret (its checkout token, variables and output token): a name of its own,
 * since the kubelet may go on serving a deleted immutable Secret's old content under the same name.
 */
export const attemptSecretName = (runName: string, attempt: number): string => attemptJobName(runName, attempt);

/**
 * The Job of one attempt of a run with retries: its own name (the first keeps the Run's), and pods
 * annotated with the attempt and the offset its lines are numbered from, which the log archiver
 * and the API's live follow read (src/k8s/pod-log.ts podLogNumbering).
 */
export function asAttempt(job: V1Job, runName: string, attempt: number): V1Job {
  const template = job.spec!.template;
  const annotations = {
    ...template.metadata?.annotations,
    [ATTEMPT_ANNOTATION]: String(attempt),
    [LOG_SEQ_OFFSET_ANNOTATION]: String(attemptSeqOffset(attempt)),
  };
  return {
    ...job,
    metadata: { ...job.metadata, name: attemptJobName(runName, attempt) },
    spec: { ...job.spec!, template: { ...template, metadata: { ...template.metadata, annotations } } },
  };
}

/**
 * An observation of the current attempt, as the run's: a later attempt never moves the run's phase
 * back (its pod starts over, the run went on) nor its start (the run started with its first
 * attempt); the attempt's own start is kept aside for its record. A failure the retry policy does not
 * retry says why (run-retry.ts decideRetry).
 */
export function acrossAttempts(spec: RunSpec, previous: RunStatus | undefined, obs: RunObservation, pod: V1Pod | null): RunObservation {
  const main = pod?.status?.containerStatuses?.find((c) => c.name === "main")?.state;
  const started = main?.running?.startedAt ?? main?.terminated?.startedAt;
  let out: RunObservation = { ...obs, ...(started && { attemptStartTime: new Date(started).toISOString() }) };
  if (attemptNumber(previous) > 1) {
    const live = !RUN_LIFECYCLE.isTerminal(out.phase);
    if (live && previous?.phase && !RUN_LIFECYCLE.isTerminal(previous.phase) && RUN_LIFECYCLE.rank(previous.phase) > RUN_LIFECYCLE.rank(out.phase)) {
      out = { ...out, phase: previous.phase };
    }
    if (previous?.startTime) out = { ...out, startTime: previous.startTime };
  }
  if (!RUN_LIFECYCLE.isTerminal(previous?.phase)) {
    const d = decideRetry({
      runName: "",
      retries: spec.retries,
      cancelRequested: spec.cancelRequested,
      status: previous,
      outcome: out,
      now: new Date(0),
    });
    if (d.kind === "exhausted") out = { ...out, error: d.error };
  }
  return out;
}
