import type { ComputeTypes } from "../resources/compute-types.ts";
import { RUN_WORKLOAD, runSpecSchema, type RunSpec, type RunStatus } from "../resources/run.ts";
import { runLabels } from "../resources/labels.ts";
import { buildRunJob, OUTPUT_TOKEN_KEY } from "../k8s/run-job.ts";
import { observeRun, type RunObservation } from "./run-observation.ts";
import { notReady, presetFor, type Workload } from "./workload.ts";
import { Unreconcilable } from "../domain/workloads/unreconcilable.ts";
import type { EnvironmentBuilds } from "./environment-builds.ts";

/** How often a run waiting for its environment's build looks again. */
export const ENVIRONMENT_POLL_MS = 2000;
import { ensureWorkloadSecret, releaseWorkloadSecret, type CheckoutDeps } from "./workload-secret.ts";

// Runs as a workload: the user's command in a checkout, with the account's
// and repository's environment variables in the Secret the Run owns.

export interface RunWorkloadDeps {
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
}

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
      const env = await deps.resolveEnv(spec.accountId, spec.repositoryId);
      const labels = runLabels(spec.accountId, spec.repositoryId, spec.runId);
      const outputs = deps.outputs;
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
      const checkout = await ensureWorkloadSecret(RUN_WORKLOAD, spec.runId, run, cluster, deps.checkout, labels, secretValues, deps.queueAllowanceSeconds);
      return buildRunJob({
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
    },
    observe: async ({ resource, job, pod, now }) => observeRun(resource.spec, resource.status, job, pod, now),
    extraStatus: (obs, previous) => {
      const timeline = obs.timeline ?? previous?.timeline;
      return timeline && Object.keys(timeline).length > 0 ? { timeline } : {};
    },
    release: (run, cluster) => releaseWorkloadSecret(RUN_WORKLOAD, run.spec.runId, run.metadata.namespace, cluster, deps.checkout),
    eventNote: (status) => status.error ?? `run is ${status.phase}`,
  };
}
