import type { V1Container, V1Job, V1SecurityContext, V1Volume } from "@kubernetes/client-node";
import type { ComputePreset } from "./compute-types.ts";
import { API_VERSION } from "./crds/common.ts";
import { RUN_KIND, type RunSpec } from "./crds/run.ts";
import { runLabels } from "./labels.ts";

// Pure: a Run in, the Job that executes it out. Everything about how a run
// is isolated lives here, where a table test can see it.

export const RUNNER_UID = 10001;
export const WORKSPACE = "/workspace";
export const SOURCE_DIR = `${WORKSPACE}/src`;
export const TOOLS_DIR = "/codeplane/bin";
/** Where the codeplane image keeps the entrypoint that frames stdout and stderr. */
export const ENTRYPOINT_IN_IMAGE = "/app/src/runner/entrypoint.ts";

/** The resource a Job is built for: the Job takes its name and namespace, and is owned by it. */
export interface JobOwner<Spec> {
  metadata: { name: string; namespace: string; uid: string };
  spec: Spec;
}

/** What every workload's Job builder is given. */
export interface WorkloadJobInput<Spec> {
  resource: JobOwner<Spec>;
  compute: ComputePreset;
  ttlSecondsAfterFinished: number;
}

export interface RunJobInput extends WorkloadJobInput<RunSpec> {
  images: { runner: string; codeplane: string; pullPolicy: "Always" | "IfNotPresent" | "Never" };
  /** The per-run Secret holding the run's environment variables, if it has any. */
  envSecretName: string | null;
}

// Checkout, then dependencies: together they are the run's "preprocessing".
// Fetching the exact commit first is cheap where the server allows it; a full
// fetch is the fallback for servers that don't serve unadvertised commits.
export const GIT_CHECKOUT_SCRIPT = `set -eu
git init -q "$CODEPLANE_SOURCE_DIR"
cd "$CODEPLANE_SOURCE_DIR"
git remote add origin "$CODEPLANE_REPOSITORY_URL"
if ! git fetch -q --depth 1 origin "$CODEPLANE_COMMIT" 2>/dev/null; then
  git fetch -q origin '+refs/heads/*:refs/remotes/origin/*' '+refs/tags/*:refs/tags/*'
fi
git -c advice.detachedHead=false checkout -q --detach "$CODEPLANE_COMMIT"
echo "checked out $CODEPLANE_COMMIT"
`;

export const CHECKOUT_SCRIPT = `${GIT_CHECKOUT_SCRIPT}if [ -f requirements.txt ]; then
  echo "installing Python dependencies (requirements.txt)"
  python3 -m pip install --user --no-input --disable-pip-version-check -r requirements.txt
fi
if [ -f package-lock.json ]; then
  echo "installing Node dependencies (npm ci)"
  npm ci --ignore-scripts --no-audit --no-fund
elif [ -f package.json ]; then
  echo "installing Node dependencies (npm install)"
  npm install --ignore-scripts --no-audit --no-fund
fi
`;

export const restricted: V1SecurityContext = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ["ALL"] },
  seccompProfile: { type: "RuntimeDefault" },
};

const mounts = [
  { name: "workspace", mountPath: WORKSPACE },
  { name: "tools", mountPath: TOOLS_DIR },
  { name: "tmp", mountPath: "/tmp" },
];

export const checkoutEnv = (repositoryUrl: string) => [
  { name: "CODEPLANE_REPOSITORY_URL", value: repositoryUrl },
  { name: "GIT_TERMINAL_PROMPT", value: "0" },
];

/** The pod-level isolation every codeplane workload gets: non-root, no service-account token, no service links. */
const restrictedPodSecurity = {
  restartPolicy: "Never",
  automountServiceAccountToken: false,
  enableServiceLinks: false,
  securityContext: {
    runAsNonRoot: true,
    runAsUser: RUNNER_UID,
    runAsGroup: RUNNER_UID,
    fsGroup: RUNNER_UID,
    seccompProfile: { type: "RuntimeDefault" },
  },
  terminationGracePeriodSeconds: 10,
} as const;

const baseEnv = (spec: RunSpec) => [
  { name: "HOME", value: `${WORKSPACE}/home` },
  { name: "CODEPLANE_RUN_ID", value: spec.runId },
  { name: "CODEPLANE_COMMIT", value: spec.commitHash },
  { name: "CODEPLANE_SOURCE_DIR", value: SOURCE_DIR },
  // User-level installs (pip --user) land in HOME; put their scripts on PATH.
  { name: "PATH", value: `${WORKSPACE}/home/.local/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin` },
];

export function buildRunJob(input: RunJobInput): V1Job {
  const { images, compute } = input;
  const { spec } = input.resource;
  const resources = { requests: { ...compute.requests }, limits: { ...compute.limits } };
  const envFrom = input.envSecretName ? [{ secretRef: { name: input.envSecretName, optional: false } }] : [];
  const tools = restrictedContainer({
    name: "tools",
    image: images.codeplane,
    imagePullPolicy: images.pullPolicy,
    command: ["node", "-e", `require("node:fs").copyFileSync(${JSON.stringify(ENTRYPOINT_IN_IMAGE)}, ${JSON.stringify(`${TOOLS_DIR}/entrypoint.ts`)})`],
    resources: { requests: { cpu: "10m", memory: "32Mi" }, limits: { cpu: "500m", memory: "128Mi" } },
    volumeMounts: [{ name: "tools", mountPath: TOOLS_DIR }],
  });
  const checkout = restrictedContainer({
    name: "checkout",
    image: images.runner,
    imagePullPolicy: images.pullPolicy,
    command: ["sh", "-c", CHECKOUT_SCRIPT],
    env: [...baseEnv(spec), ...checkoutEnv(spec.repositoryUrl)],
    resources,
    volumeMounts: mounts,
  });
  const main = restrictedContainer({
    name: "main",
    image: images.runner,
    imagePullPolicy: images.pullPolicy,
    command: ["node", `${TOOLS_DIR}/entrypoint.ts`, "--workdir", SOURCE_DIR, "--", ...spec.command],
    env: baseEnv(spec),
    envFrom,
    resources,
    volumeMounts: mounts,
  });
  return restrictedJob(RUN_KIND, input, runLabels(spec.accountId, spec.repositoryId, spec.runId), {
    initContainers: [tools, checkout],
    containers: [main],
    volumes: [
      { name: "workspace", emptyDir: {} },
      { name: "tools", emptyDir: { medium: "Memory", sizeLimit: "16Mi" } },
      { name: "tmp", emptyDir: {} },
    ],
  });
}

/** A container under the restricted security context, whose termination message falls back to its log's end. */
export function restrictedContainer(c: V1Container): V1Container {
  return { ...c, securityContext: restricted, terminationMessagePolicy: "FallbackToLogsOnError" };
}

/**
 * The Job around a workload's containers: named after and owned by its
 * resource (deleting that cleans up), one attempt, the workload's deadline, a
 * TTL, scheduled by its compute preset, restricted pod.
 */
export function restrictedJob(
  kind: string,
  input: WorkloadJobInput<{ timeoutSeconds: number }>,
  labels: Record<string, string>,
  pod: { initContainers: V1Container[]; containers: V1Container[]; volumes: V1Volume[] },
): V1Job {
  const { name, namespace, uid } = input.resource.metadata;
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: {
      name,
      namespace,
      labels,
      ownerReferences: [{ apiVersion: API_VERSION, kind, name, uid, controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: input.resource.spec.timeoutSeconds,
      ttlSecondsAfterFinished: input.ttlSecondsAfterFinished,
      template: {
        metadata: { labels },
        spec: {
          ...restrictedPodSecurity,
          securityContext: { ...restrictedPodSecurity.securityContext },
          nodeSelector: { ...input.compute.nodeSelector },
          tolerations: input.compute.tolerations.map((t) => ({ ...t })),
          ...pod,
        },
      },
    },
  };
}
