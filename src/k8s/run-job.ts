import type { V1Container, V1EnvVar, V1Job, V1PodSpec, V1SecurityContext, V1Volume } from "@kubernetes/client-node";
import type { ComputePreset } from "../resources/compute-types.ts";
import type { EgressMode } from "../resources/egress.ts";
import { API_VERSION } from "../resources/common.ts";
import { RUN_KIND, type RunSpec } from "../resources/run.ts";
import { runLabels } from "../resources/labels.ts";
import { ARCHIVER_IN_IMAGE, environmentVariables, NODE_IN_IMAGE, SOURCE_DIR, trustedVariables, WORKSPACE } from "./workspace.ts";

// Pure: a Run in, the Job that executes it out. Everything about how a run
// is isolated lives here, where a table test can see it.

export const RUNNER_UID = 10001;
export { SOURCE_DIR, WORKSPACE };
export const TOOLS_DIR = "/codeplane/bin";
/** Where the codeplane image keeps the entrypoint that frames stdout and stderr (the @codeplane/runner package). */
export const ENTRYPOINT_IN_IMAGE = "/app/packages/runner/src/entrypoint.ts";
/** The output collector the entrypoint loads when a run has an output directory (packages/runner/src/outputs.ts). */
export const OUTPUTS_IN_IMAGE = "/app/packages/runner/src/outputs.ts";

/** The resource a Job is built for: the Job takes its name and namespace, and is owned by it. */
export interface JobOwner<Spec> {
  metadata: { name: string; namespace: string; uid: string };
  spec: Spec;
}

/** How a workload's pod checks its commit out: from codeplane's git endpoint, never from the code host. */
export interface CheckoutInput {
  /** The repository on codeplane's git endpoint (`<CODEPLANE_INTERNAL_URL>/git/<repository id>.git`). */
  gitUrl: string;
  /** The workload's Secret: its checkout token (and, for runs, its environment values). */
  secretName: string;
  /** Run pods' egress mode, so a failed environment install can say why. */
  egress: EgressMode;
  /** Operator-set variables for checkout and environment install (a package mirror's address). */
  preprocessEnv: Readonly<Record<string, string>>;
}

/** What every workload's Job builder is given. */
export interface WorkloadJobInput<Spec> {
  resource: JobOwner<Spec>;
  compute: ComputePreset;
  ttlSecondsAfterFinished: number;
  checkout: CheckoutInput;
  /** Secrets in the workload's namespace that its images are pulled with. */
  imagePullSecrets?: readonly string[];
}

export interface RunJobInput extends WorkloadJobInput<RunSpec> {
  images: { runner: string; codeplane: string; pullPolicy: "Always" | "IfNotPresent" | "Never" };
  /** Names of the run's environment variables, whose values are keys of the workload's Secret. */
  envNames: readonly string[];
  /** codeplane's internal base URL, where the environment is restored from and outputs are sent to. */
  internalUrl: string | null;
  /**
   * Seconds past the run's timeout its pod has to send its outputs: the runner stops the command at
   * the timeout, the Job's deadline is this much later, and it is the pod's termination grace period
   * (a cancelled run collects too). Absent: no output collection (the Job as before).
   */
  outputCollectSeconds?: number;
}

/** The key of the workload's Secret holding a run's output token (domain/outputs/output-tokens.ts). */
export const OUTPUT_TOKEN_KEY = "codeplane-output-token";
/** Where a run writes the files it wants kept ($CODEPLANE_OUTPUT_DIR): on the workspace volume, outside the checkout. */
export const OUTPUT_DIR = `${WORKSPACE}/outputs`;
/** Written by the tools container: when the pod started (ms since the epoch), from which the runner counts the run's timeout. */
export const POD_STARTED_FILE = `${TOOLS_DIR}/pod-started`;

/** The key of the workload's Secret that holds its checkout token (not a variable name, so no user variable can collide). */
export const CHECKOUT_TOKEN_KEY = "codeplane-checkout-token";

// The checkout fetches exactly one commit, shallow, from codeplane's git
// endpoint. The token travels in git's environment-borne config, so it is in
// no argv, no remote URL and no .git/config, and the container that holds it
// runs nothing from the repository.
export const GIT_CHECKOUT_SCRIPT = `set -eu
git init -q "$CODEPLANE_SOURCE_DIR"
cd "$CODEPLANE_SOURCE_DIR"
git remote add origin "$CODEPLANE_GIT_URL"
export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=http.extraHeader GIT_CONFIG_VALUE_0="Authorization: Bearer $CODEPLANE_CHECKOUT_TOKEN"
unset CODEPLANE_CHECKOUT_TOKEN
if ! git fetch -q --depth 1 origin "$CODEPLANE_COMMIT"; then
  echo "checkout failed: could not fetch $CODEPLANE_COMMIT from codeplane's git endpoint ($CODEPLANE_GIT_URL)" >&2
  exit 1
fi
git -c advice.detachedHead=false checkout -q --detach "$CODEPLANE_COMMIT"
echo "checked out $CODEPLANE_COMMIT"
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

/** The checkout container's variables: where to fetch from, and the token from the workload's Secret. */
export const checkoutEnv = (checkout: CheckoutInput): V1EnvVar[] => [
  { name: "CODEPLANE_GIT_URL", value: checkout.gitUrl },
  { name: "CODEPLANE_CHECKOUT_TOKEN", valueFrom: { secretKeyRef: { name: checkout.secretName, key: CHECKOUT_TOKEN_KEY, optional: false } } },
  { name: "GIT_TERMINAL_PROMPT", value: "0" },
];

/** The pod-level isolation every codeplane workload gets: non-root, no service-account token, no service links. */
export const restrictedPodSecurity = {
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

// HOME, PATH and the toolchains' variables are the environment's (environment-job.ts), so
// what its build installed is found in the run where it was put.
const baseEnv = (spec: RunSpec) => [
  ...environmentVariables(),
  { name: "CODEPLANE_RUN_ID", value: spec.runId },
  { name: "CODEPLANE_COMMIT", value: spec.commitHash },
];

export function buildRunJob(input: RunJobInput): V1Job {
  const { images, compute } = input;
  const { spec } = input.resource;
  const collect = input.outputCollectSeconds !== undefined && input.internalUrl ? input.outputCollectSeconds : undefined;
  // The runner finds its output directory, the paths the analysis listed, where to send them and with what token here.
  const outputEnv: V1EnvVar[] =
    collect !== undefined
      ? [
          { name: "CODEPLANE_OUTPUT_DIR", value: OUTPUT_DIR },
          { name: "CODEPLANE_OUTPUT_PATHS", value: JSON.stringify(spec.outputPaths ?? []) },
          { name: "CODEPLANE_OUTPUT_URL", value: `${input.internalUrl}/internal/runs/${spec.runId}/outputs` },
          { name: "CODEPLANE_OUTPUT_TOKEN", valueFrom: { secretKeyRef: { name: input.checkout.secretName, key: OUTPUT_TOKEN_KEY, optional: false } } },
          { name: "CODEPLANE_RUN_TIMEOUT_SECONDS", value: String(spec.timeoutSeconds) },
          { name: "CODEPLANE_POD_STARTED_FILE", value: POD_STARTED_FILE },
          { name: "CODEPLANE_OUTPUT_COLLECT_SECONDS", value: String(collect) },
        ]
      : [];
  const resources = { requests: { ...compute.requests }, limits: { ...compute.limits } };
  // Each variable by name from the workload's Secret (not envFrom, which would also hand the command the checkout token).
  const userEnv: V1EnvVar[] = input.envNames.map((name) => ({
    name,
    valueFrom: { secretKeyRef: { name: input.checkout.secretName, key: name, optional: false } },
  }));
  const tools = restrictedContainer({
    name: "tools",
    image: images.codeplane,
    imagePullPolicy: images.pullPolicy,
    command: [
      "node",
      "-e",
      [
        `const fs = require("node:fs");`,
        `fs.copyFileSync(${JSON.stringify(ENTRYPOINT_IN_IMAGE)}, ${JSON.stringify(`${TOOLS_DIR}/entrypoint.ts`)});`,
        ...(collect
          ? [
              `fs.copyFileSync(${JSON.stringify(OUTPUTS_IN_IMAGE)}, ${JSON.stringify(`${TOOLS_DIR}/outputs.ts`)});`,
              `fs.writeFileSync(${JSON.stringify(POD_STARTED_FILE)}, String(Date.now()));`,
            ]
          : []),
      ].join(" "),
    ],
    resources: { requests: { cpu: "10m", memory: "32Mi" }, limits: { cpu: "500m", memory: "128Mi" } },
    volumeMounts: [{ name: "tools", mountPath: TOOLS_DIR }],
  });
  const checkout = restrictedContainer({
    name: "checkout",
    image: images.runner,
    imagePullPolicy: images.pullPolicy,
    command: ["sh", "-c", GIT_CHECKOUT_SCRIPT],
    env: [...baseEnv(spec), ...checkoutEnv(input.checkout)],
    resources,
    volumeMounts: mounts,
  });
  // The installed environment, restored from codeplane's internal endpoint with the checkout token
  // (which opens this run's own environment and nothing else), before the token is released.
  const environment = spec.environment
    ? [
        restrictedContainer({
          name: "environment",
          image: images.codeplane,
          imagePullPolicy: images.pullPolicy,
          command: [NODE_IN_IMAGE, ARCHIVER_IN_IMAGE, "restore"],
          env: [
            ...trustedVariables(),
            { name: "CODEPLANE_ARCHIVE_URL", value: input.internalUrl ? `${input.internalUrl}/internal/environments/${spec.environment.key}/archive` : "" },
            { name: "CODEPLANE_ARCHIVE_TOKEN", valueFrom: { secretKeyRef: { name: input.checkout.secretName, key: CHECKOUT_TOKEN_KEY, optional: false } } },
            { name: "CODEPLANE_ENVIRONMENT_WARNINGS", value: JSON.stringify(spec.environment.warnings) },
          ],
          resources: { requests: { cpu: "100m", memory: "64Mi" }, limits: { cpu: "1", memory: "256Mi" } },
          volumeMounts: mounts,
        }),
      ]
    : [];
  const main = restrictedContainer({
    name: "main",
    image: spec.image ?? images.runner,
    imagePullPolicy: images.pullPolicy,
    command: ["node", `${TOOLS_DIR}/entrypoint.ts`, "--workdir", SOURCE_DIR, "--", ...spec.command],
    env: [...baseEnv(spec), ...userEnv, ...outputEnv],
    resources,
    volumeMounts: mounts,
  });
  const job = restrictedJob(RUN_KIND, input, runLabels(spec.accountId, spec.repositoryId, spec.runId), {
    initContainers: [tools, checkout, ...environment],
    containers: [main],
    volumes: [
      { name: "workspace", emptyDir: {} },
      { name: "tools", emptyDir: { medium: "Memory", sizeLimit: "16Mi" } },
      { name: "tmp", emptyDir: {} },
    ],
  });
  if (collect !== undefined) {
    // The runner stops the command at the timeout and then sends its outputs: the Job's deadline, and the
    // grace a stopped (cancelled) pod gets, leave it that long.
    job.spec!.activeDeadlineSeconds = spec.timeoutSeconds + collect;
    job.spec!.template.spec!.terminationGracePeriodSeconds = collect;
  }
  return job;
}

/** A container under the restricted security context, whose termination message falls back to its log's end. */
export function restrictedContainer(c: V1Container): V1Container {
  return { ...c, securityContext: restricted, terminationMessagePolicy: "FallbackToLogsOnError" };
}

/** A workload pod: restricted, scheduled by its compute preset, pulling with the given secrets. */
export function restrictedPodSpec(
  compute: ComputePreset,
  imagePullSecrets: readonly string[] | undefined,
  pod: { initContainers: V1Container[]; containers: V1Container[]; volumes: V1Volume[] },
): V1PodSpec {
  return {
    ...restrictedPodSecurity,
    securityContext: { ...restrictedPodSecurity.securityContext },
    nodeSelector: { ...compute.nodeSelector },
    tolerations: compute.tolerations.map((t) => ({ ...t })),
    ...(compute.runtimeClassName ? { runtimeClassName: compute.runtimeClassName } : {}),
    ...(imagePullSecrets?.length ? { imagePullSecrets: imagePullSecrets.map((name) => ({ name })) } : {}),
    ...pod,
  };
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
      template: { metadata: { labels }, spec: restrictedPodSpec(input.compute, input.imagePullSecrets, pod) },
    },
  };
}
