import type { V1Job, V1Secret } from "@kubernetes/client-node";
import type { ComputePreset } from "../resources/compute-types.ts";
import { MANAGED_BY } from "../resources/labels.ts";
import { POOL_LABEL, POOL_POD_LABEL } from "../resources/warm-pools.ts";
import { ENTRYPOINT_IN_IMAGE, OUTPUTS_IN_IMAGE, restrictedContainer, restrictedPodSpec, TOOLS_DIR } from "./run-job.ts";
import { ARCHIVER_IN_IMAGE, environmentVariables, WORKSPACE } from "./workspace.ts";

// Pure: a warm-pool pod's Job (issue 33). The pod is a run's pod in all that
// isolates it (restricted security context, the run's compute preset and
// runtime class, no service-account token, the labels the workload
// NetworkPolicy selects), but it starts with no run: its main container is the
// warm agent (packages/runner/src/warm.ts), which waits for an assignment
// with the only thing the pod holds, its pool credential, from a Secret of its own.

/** Where the codeplane image keeps the warm agent. */
export const WARM_AGENT_IN_IMAGE = "/app/packages/runner/src/warm.ts";
/** The key of a pool pod's Secret that holds its pool credential. */
export const POOL_CREDENTIAL_KEY = "codeplane-pool-credential";
/** How long past its idle lifetime an unclaimed pool Job ends by itself, should no controller retire it. */
export const POOL_DEADLINE_SLACK_SECONDS = 300;

export interface PoolJobInput {
  pool: string;
  poolPodId: string;
  jobName: string;
  namespace: string;
  /** The environment's image: the run's main container's. */
  image: string;
  images: { codeplane: string; pullPolicy: "Always" | "IfNotPresent" | "Never" };
  imagePullSecrets?: readonly string[];
  compute: ComputePreset;
  internalUrl: string;
  idleSeconds: number;
  ttlSecondsAfterFinished: number;
  /** Seconds a run's pod has to send its outputs once stopped (its termination grace period). */
  outputCollectSeconds?: number;
}

export const poolPodLabels = (pool: string, poolPodId: string): Record<string, string> => ({
  ...MANAGED_BY,
  // A run's component: the workload NetworkPolicy confines it from its first moment.
  "app.kubernetes.io/component": "run",
  [POOL_LABEL]: pool,
  [POOL_POD_LABEL]: poolPodId,
});

/** The pool pod's Secret: its credential only (created once its Job exists, and owned by it). */
export function buildPoolSecret(input: Pick<PoolJobInput, "pool" | "poolPodId" | "jobName" | "namespace">, jobUid: string, credential: string): V1Secret {
  return {
    metadata: {
      name: input.jobName,
      namespace: input.namespace,
      labels: poolPodLabels(input.pool, input.poolPodId),
      // Not blockOwnerDeletion: that would need jobs/finalizers on clusters that enforce owner references.
      ownerReferences: [{ apiVersion: "batch/v1", kind: "Job", name: input.jobName, uid: jobUid, controller: true, blockOwnerDeletion: false }],
    },
    type: "Opaque",
    immutable: true,
    stringData: { [POOL_CREDENTIAL_KEY]: credential },
  };
}

export function buildPoolJob(input: PoolJobInput): V1Job {
  const labels = poolPodLabels(input.pool, input.poolPodId);
  const resources = { requests: { ...input.compute.requests }, limits: { ...input.compute.limits } };
  const mounts = [
    { name: "workspace", mountPath: WORKSPACE },
    { name: "tools", mountPath: TOOLS_DIR },
    { name: "tmp", mountPath: "/tmp" },
  ];
  const copy = (from: string, name: string) => `fs.copyFileSync(${JSON.stringify(from)}, ${JSON.stringify(`${TOOLS_DIR}/${name}`)});`;
  const tools = restrictedContainer({
    name: "tools",
    image: input.images.codeplane,
    imagePullPolicy: input.images.pullPolicy,
    command: [
      "node",
      "-e",
      [
        `const fs = require("node:fs");`,
        copy(ENTRYPOINT_IN_IMAGE, "entrypoint.ts"),
        copy(OUTPUTS_IN_IMAGE, "outputs.ts"),
        copy(ARCHIVER_IN_IMAGE, "environment-archive.ts"),
        copy(WARM_AGENT_IN_IMAGE, "warm.ts"),
      ].join(" "),
    ],
    resources: { requests: { cpu: "10m", memory: "32Mi" }, limits: { cpu: "500m", memory: "128Mi" } },
    volumeMounts: [{ name: "tools", mountPath: TOOLS_DIR }],
  });
  const main = restrictedContainer({
    name: "main",
    image: input.image,
    imagePullPolicy: input.images.pullPolicy,
    command: ["node", `${TOOLS_DIR}/warm.ts`],
    env: [
      ...environmentVariables(),
      { name: "CODEPLANE_POOL_URL", value: input.internalUrl },
      { name: "CODEPLANE_POOL_CREDENTIAL", valueFrom: { secretKeyRef: { name: input.jobName, key: POOL_CREDENTIAL_KEY, optional: false } } },
    ],
    resources,
    volumeMounts: mounts,
  });
  const spec = restrictedPodSpec(input.compute, input.imagePullSecrets, {
    initContainers: [tools],
    containers: [main],
    volumes: [
      { name: "workspace", emptyDir: {} },
      { name: "tools", emptyDir: { medium: "Memory", sizeLimit: "16Mi" } },
      { name: "tmp", emptyDir: {} },
    ],
  });
  if (input.outputCollectSeconds !== undefined) spec.terminationGracePeriodSeconds = input.outputCollectSeconds;
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    // No owner until a run claims it: then the Run owns it, as it owns a cold run's Job.
    metadata: { name: input.jobName, namespace: input.namespace, labels },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: input.idleSeconds + POOL_DEADLINE_SLACK_SECONDS,
      ttlSecondsAfterFinished: input.ttlSecondsAfterFinished,
      template: { metadata: { labels }, spec },
    },
  };
}

/** A pool Job's name: the pool's and its row's (unique). */
export const poolJobName = (pool: string, poolPodId: string) => `warm-${pool}-${poolPodId.replace(/-/g, "").slice(-12)}`;
