import type { ClusterActions } from "../k8s/cluster-actions.ts";
import type { ComputeTypes } from "../k8s/compute-types.ts";
import { API_VERSION } from "../k8s/crds/common.ts";
import { RUN_KIND, RUN_WORKLOAD, runSpecSchema, type RunSpec, type RunStatus } from "../k8s/crds/run.ts";
import { runLabels, runSecretName } from "../k8s/labels.ts";
import { buildRunJob } from "../k8s/run-job.ts";
import { observeRun, type RunObservation } from "./run-observation.ts";
import { presetFor, type Workload, type WorkloadResource } from "./workload.ts";

// Runs as a workload: the user's command in a checkout, with the account's
// and repository's environment variables in a Secret the Run owns.

export interface RunWorkloadDeps {
  /** The variables a run of this repository gets, decrypted (only called when the Job is about to be created). */
  resolveEnv(accountId: string, repositoryId: string): Promise<Record<string, string>>;
  images: { runner: string; codeplane: string; pullPolicy: "Always" | "IfNotPresent" | "Never" };
  computeTypes: ComputeTypes;
  jobTtlSeconds: number;
}

export function runWorkload(deps: RunWorkloadDeps): Workload<RunSpec, RunStatus, RunObservation> {
  return {
    ...RUN_WORKLOAD,
    started: { reason: "ContainerStarted", message: "the run's command started" },
    specSchema: runSpecSchema,
    idOf: (spec) => spec.runId,
    async job(run, cluster) {
      return buildRunJob({
        resource: run,
        images: deps.images,
        compute: presetFor(deps.computeTypes, run.spec.computeType),
        envSecretName: await ensureEnvSecret(run, cluster, deps),
        ttlSecondsAfterFinished: deps.jobTtlSeconds,
      });
    },
    observe: async ({ resource, job, pod, now }) => observeRun(resource.spec, resource.status, job, pod, now),
    release: (run, cluster) => cluster.deleteSecret(run.metadata.namespace, runSecretName(run.spec.runId)),
    eventNote: (status) => status.error ?? `run is ${status.phase}`,
  };
}

/** The run's variables as an immutable Secret the Run owns (so it goes with it); null when it has none. */
async function ensureEnvSecret(run: WorkloadResource<RunSpec, RunStatus>, cluster: ClusterActions, deps: RunWorkloadDeps): Promise<string | null> {
  const env = await deps.resolveEnv(run.spec.accountId, run.spec.repositoryId);
  if (Object.keys(env).length === 0) return null;
  const name = runSecretName(run.spec.runId);
  await cluster.createSecret(run.metadata.namespace, {
    metadata: {
      name,
      namespace: run.metadata.namespace,
      labels: runLabels(run.spec.accountId, run.spec.repositoryId, run.spec.runId),
      ownerReferences: [{ apiVersion: API_VERSION, kind: RUN_KIND, name: run.metadata.name, uid: run.metadata.uid, controller: true, blockOwnerDeletion: true }],
    },
    type: "Opaque",
    immutable: true,
    stringData: env,
  });
  return name;
}
