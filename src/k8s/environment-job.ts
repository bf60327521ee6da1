import type { V1Job } from "@kubernetes/client-node";
import type { ComputePreset } from "../resources/compute-types.ts";
import { environmentLabels, environmentResourceName } from "../resources/labels.ts";
import { checkoutEnv, CHECKOUT_TOKEN_KEY, GIT_CHECKOUT_SCRIPT, restrictedContainer, restrictedPodSpec, type CheckoutInput } from "./run-job.ts";
import { ARCHIVER_IN_IMAGE, environmentVariables, NODE_IN_IMAGE, trustedVariables, WORKSPACE } from "./workspace.ts";

/** The key of the build's Secret that holds its upload token. */
export const UPLOAD_TOKEN_KEY = "codeplane-upload-token";

// Pure: the Job that installs an environment once, for every later run of its
// key. Three steps in one pod: the checkout (with the checkout token), the
// install (in the environment's image, running the repository's install
// steps, holding no token at all), and the save (in codeplane's image: it
// archives what the install wrote and hands it to codeplane's internal
// endpoint with an upload token that only this container holds). No storage
// credential is ever in the pod.

export interface EnvironmentBuildInput {
  /** The environment's row id: names the Job, its Secret and its pod label. */
  environmentId: string;
  accountId: string;
  repositoryId: string;
  commitHash: string;
  key: string;
  image: string;
  steps: readonly { name: string; run: string }[];
  cachePaths: readonly string[];
  namespace: string;
  compute: ComputePreset;
  timeoutSeconds: number;
  ttlSecondsAfterFinished: number;
  checkout: CheckoutInput;
  /** codeplane's internal base URL (CODEPLANE_INTERNAL_URL). */
  internalUrl: string;
  images: { runner: string; codeplane: string; pullPolicy: "Always" | "IfNotPresent" | "Never" };
  imagePullSecrets?: readonly string[];
}

/** Where the install's output is kept in the pod for the save container. */
export const SETUP_LOG = `${WORKSPACE}/setup.log`;

/** Runs CODEPLANE_INSTALL_SCRIPT with its output to the pod log and CODEPLANE_SETUP_LOG, exiting with its status. */
export const INSTALL_WRAPPER = `{ sh -c "$CODEPLANE_INSTALL_SCRIPT"; echo $? > "$CODEPLANE_SETUP_LOG.status"; } 2>&1 | tee "$CODEPLANE_SETUP_LOG"; exit "$(cat "$CODEPLANE_SETUP_LOG.status")"`;

/** A shell word that stays one word whatever it holds. */
export const shellQuote = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * The install container's script: each step in order, announced, in its own
 * `sh -eu`, in the checkout. A failing step stops the build naming the step;
 * under restricted egress it also says how an operator opens a mirror.
 */
export function installScript(steps: readonly { name: string; run: string }[]): string {
  const lines = [
    "set -u",
    `cd "$CODEPLANE_SOURCE_DIR"`,
    `mkdir -p "$CODEPLANE_ENV_DIR"`,
    "failed() {",
    `  echo "environment build failed in step: $1 (exit code $2)" >&2`,
    `  if [ "$CODEPLANE_RUN_EGRESS" = restricted ]; then`,
    `    echo "if it could not reach a package index: run pods' egress is restricted (DNS, codeplane's endpoint and what the operator allows); an operator can allow a package mirror (CODEPLANE_RUN_EGRESS_ALLOW, with its address in CODEPLANE_RUN_PREPROCESS_ENV, e.g. PIP_INDEX_URL, NPM_CONFIG_REGISTRY or GOPROXY)" >&2`,
    "  fi",
    "  exit 1",
    "}",
  ];
  steps.forEach((step, i) => {
    const label = `[${i + 1}/${steps.length}] ${step.name}`;
    lines.push(`echo ${shellQuote(`==> ${label}`)}`, `sh -eu -c ${shellQuote(step.run)} || failed ${shellQuote(label)} $?`);
  });
  lines.push(`echo "==> environment installed"`);
  return `${lines.join("\n")}\n`;
}

export function buildEnvironmentJob(input: EnvironmentBuildInput): V1Job {
  const name = environmentResourceName(input.environmentId);
  const labels = environmentLabels(input.accountId, input.repositoryId, input.environmentId);
  const resources = { requests: { ...input.compute.requests }, limits: { ...input.compute.limits } };
  const mounts = [
    { name: "workspace", mountPath: WORKSPACE },
    { name: "tmp", mountPath: "/tmp" },
  ];
  const common = [...environmentVariables(), { name: "CODEPLANE_COMMIT", value: input.commitHash }];
  const checkout = restrictedContainer({
    name: "checkout",
    image: input.images.runner,
    imagePullPolicy: input.images.pullPolicy,
    command: ["sh", "-c", GIT_CHECKOUT_SCRIPT],
    env: [...common, ...checkoutEnv(input.checkout)],
    resources,
    volumeMounts: mounts,
  });
  const preprocess = Object.entries({
    CODEPLANE_RUN_EGRESS: input.checkout.egress,
    PIP_DEFAULT_TIMEOUT: "15",
    PIP_RETRIES: "1",
    PIP_NO_CACHE_DIR: "1",
    PIP_DISABLE_PIP_VERSION_CHECK: "1",
    npm_config_fetch_retries: "1",
    npm_config_fetch_timeout: "15000",
    npm_config_update_notifier: "false",
    npm_config_cache: "/tmp/npm-cache",
    ...input.checkout.preprocessEnv,
  }).map(([n, value]) => ({ name: n, value }));
  const install = restrictedContainer({
    name: "install",
    image: input.image,
    imagePullPolicy: input.images.pullPolicy,
    // The install's output goes to the pod log and to SETUP_LOG, which the save container hands in with the
    // archive (the user's to read in every run of the key); its exit status survives the pipe through a file.
    command: ["sh", "-c", INSTALL_WRAPPER],
    env: [...common, ...preprocess, { name: "CODEPLANE_INSTALL_SCRIPT", value: installScript(input.steps) }, { name: "CODEPLANE_SETUP_LOG", value: SETUP_LOG }],
    resources,
    volumeMounts: mounts,
  });
  const save = restrictedContainer({
    name: "main",
    image: input.images.codeplane,
    imagePullPolicy: input.images.pullPolicy,
    command: [NODE_IN_IMAGE, ARCHIVER_IN_IMAGE, "save"],
    env: [
      ...trustedVariables(),
      { name: "CODEPLANE_COMMIT", value: input.commitHash },
      { name: "CODEPLANE_ARCHIVE_URL", value: `${input.internalUrl}/internal/environments/${input.environmentId}/archive` },
      { name: "CODEPLANE_ARCHIVE_TOKEN", valueFrom: { secretKeyRef: { name, key: UPLOAD_TOKEN_KEY, optional: false } } },
      { name: "CODEPLANE_CACHE_PATHS", value: JSON.stringify(input.cachePaths) },
      { name: "CODEPLANE_SETUP_LOG", value: SETUP_LOG },
    ],
    resources: { requests: { cpu: "100m", memory: "64Mi" }, limits: { cpu: "1", memory: "256Mi" } },
    volumeMounts: mounts,
  });
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { name, namespace: input.namespace, labels, annotations: { "codeplane.dev/environment-key": input.key } },
    spec: {
      // A checkout that fails (codeplane's git endpoint out of reach for a while: a pod whose network is
      // not ready yet, an API restart) is tried again in a new pod, twice, within the build's deadline:
      // a failure that is not the key's must not be cached as the key's failure. The install's and the
      // save's own failures are the key's (a broken lockfile, an archive too large): no retry.
      backoffLimit: BUILD_POD_ATTEMPTS - 1,
      podFailurePolicy: {
        rules: [
          { action: "FailJob", onExitCodes: { containerName: "install", operator: "NotIn", values: [0] } },
          { action: "FailJob", onExitCodes: { containerName: "main", operator: "NotIn", values: [0] } },
          // Evicted or preempted: not the build's doing, and not counted.
          { action: "Ignore", onPodConditions: [{ type: "DisruptionTarget", status: "True" }] },
        ],
      },
      activeDeadlineSeconds: input.timeoutSeconds,
      ttlSecondsAfterFinished: input.ttlSecondsAfterFinished,
      template: {
        metadata: { labels },
        spec: restrictedPodSpec(input.compute, input.imagePullSecrets, {
          initContainers: [checkout, install],
          containers: [save],
          volumes: [
            { name: "workspace", emptyDir: {} },
            { name: "tmp", emptyDir: {} },
          ],
        }),
      },
    },
  };
}

/** Pods a build may use: its checkout is tried this many times at most; its install once. */
export const BUILD_POD_ATTEMPTS = 3;

/**
 * The build's Secret: its checkout token and its upload token. Not owned by
 * the Job (it exists before the Job that reads it); the controller deletes it
 * when the build ends, and its labels tie it to the environment.
 */
export function environmentSecret(s: { name: string; namespace: string; labels: Record<string, string> }, tokens: { checkout: string; upload: string }) {
  return {
    metadata: { name: s.name, namespace: s.namespace, labels: s.labels },
    type: "Opaque",
    immutable: true,
    stringData: { [CHECKOUT_TOKEN_KEY]: tokens.checkout, [UPLOAD_TOKEN_KEY]: tokens.upload },
  };
}
