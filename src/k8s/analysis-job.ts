import type { V1Job } from "@kubernetes/client-node";
import type { ComputePreset } from "../resources/compute-types.ts";
import { ANALYSIS_KIND, type AnalysisSpec } from "../resources/analysis.ts";
import { analysisLabels } from "../resources/labels.ts";
import { checkoutEnv, GIT_CHECKOUT_SCRIPT, restrictedContainer, restrictedJob, SOURCE_DIR, WORKSPACE, type WorkloadJobInput } from "./run-job.ts";

// Pure: an Analysis in, the Job that analyses the commit out. The checkout and
// the analyzer both run from codeplane's own image: nothing from the
// repository is installed or executed, and the pod gets no environment
// variables and no credential but its checkout token (in the checkout
// container only). The analyzer writes framed
// progress and its result to its log, which the controller reads back.

/** Where the codeplane image keeps its CLI (`codeplane`). */
export const CODEPLANE_CLI_IN_IMAGE = "/app/bin/codeplane.mjs";

export interface AnalysisJobInput extends WorkloadJobInput<AnalysisSpec> {
  images: { codeplane: string; pullPolicy: "Always" | "IfNotPresent" | "Never" };
}

/** The analyzer stops looking this long before the Job's deadline, so it still reports what it found. */
export function analyzerBudgetSeconds(timeoutSeconds: number): number {
  return Math.max(10, Math.floor(timeoutSeconds * 0.8) - 30);
}

/** CPUs in a Kubernetes quantity ("2", "1500m"); null when it does not say. */
export function cpuCount(quantity: string | undefined): number | null {
  if (!quantity) return null;
  const m = /^([0-9]+(?:\.[0-9]+)?)(m?)$/.exec(quantity.trim());
  if (!m) return null;
  return Number(m[1]) / (m[2] ? 1000 : 1);
}

/**
 * The analyzer parses in a second thread only when the pod may use two CPUs:
 * under a one-CPU limit a second thread would only cost memory.
 */
export const analyzerThreads = (compute: ComputePreset): 1 | 2 => ((cpuCount(compute.limits.cpu) ?? 1) >= 2 ? 2 : 1);

export function buildAnalysisJob(input: AnalysisJobInput): V1Job {
  const { images, compute } = input;
  const { spec } = input.resource;
  const resources = { requests: { ...compute.requests }, limits: { ...compute.limits } };
  const mounts = [
    { name: "workspace", mountPath: WORKSPACE },
    { name: "tmp", mountPath: "/tmp" },
  ];
  const env = [
    { name: "HOME", value: `${WORKSPACE}/home` },
    { name: "CODEPLANE_ANALYSIS_ID", value: spec.analysisId },
    { name: "CODEPLANE_COMMIT", value: spec.commitHash },
    { name: "CODEPLANE_SOURCE_DIR", value: SOURCE_DIR },
  ];
  const checkout = restrictedContainer({
    name: "checkout",
    image: images.codeplane,
    imagePullPolicy: images.pullPolicy,
    command: ["sh", "-c", GIT_CHECKOUT_SCRIPT],
    env: [...env, ...checkoutEnv(input.checkout)],
    resources,
    volumeMounts: mounts,
  });
  const main = restrictedContainer({
    name: "main",
    image: images.codeplane,
    imagePullPolicy: images.pullPolicy,
    command: [
      "node",
      CODEPLANE_CLI_IN_IMAGE,
      "analyze",
      SOURCE_DIR,
      "--frames",
      "--language",
      spec.language,
      "--time-budget-seconds",
      String(analyzerBudgetSeconds(spec.timeoutSeconds)),
      "--threads",
      String(analyzerThreads(compute)),
    ],
    env,
    resources,
    volumeMounts: mounts,
  });
  return restrictedJob(ANALYSIS_KIND, input, analysisLabels(spec.accountId, spec.repositoryId, spec.analysisId), {
    initContainers: [checkout],
    containers: [main],
    volumes: [
      { name: "workspace", emptyDir: {} },
      { name: "tmp", emptyDir: {} },
    ],
  });
}
