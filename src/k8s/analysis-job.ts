import type { V1Container, V1Job } from "@kubernetes/client-node";
import type { ComputePreset } from "./compute-types.ts";
import { ANALYSIS_KIND, type AnalysisSpec } from "./crds/analysis.ts";
import { analysisLabels, analysisResourceName } from "./labels.ts";
import { checkoutEnv, GIT_CHECKOUT_SCRIPT, restricted, restrictedJob, SOURCE_DIR, WORKSPACE } from "./run-job.ts";

// Pure: an Analysis in, the Job that analyses the commit out. The checkout and
// the analyzer both run from codeplane's own image: nothing from the
// repository is installed or executed, and the pod gets no environment
// variables or credentials beyond the clone URL. The analyzer writes framed
// progress and its result to its log, which the controller reads back.

/** Where the codeplane image keeps its CLI (`codeplane`). */
export const CODEPLANE_CLI_IN_IMAGE = "/app/bin/codeplane.mjs";

export interface AnalysisJobInput {
  analysis: { name: string; namespace: string; uid: string; spec: AnalysisSpec };
  images: { codeplane: string; pullPolicy: "Always" | "IfNotPresent" | "Never" };
  compute: ComputePreset;
  ttlSecondsAfterFinished: number;
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
  const { analysis, images, compute } = input;
  const { spec } = analysis;
  const labels = analysisLabels(spec.accountId, spec.repositoryId, spec.analysisId);
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
  const checkout: V1Container = {
    name: "checkout",
    image: images.codeplane,
    imagePullPolicy: images.pullPolicy,
    command: ["sh", "-c", GIT_CHECKOUT_SCRIPT],
    env: [...env, ...checkoutEnv(spec.repositoryUrl)],
    securityContext: restricted,
    resources,
    volumeMounts: mounts,
    terminationMessagePolicy: "FallbackToLogsOnError",
  };
  const main: V1Container = {
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
    securityContext: restricted,
    resources,
    volumeMounts: mounts,
    terminationMessagePolicy: "FallbackToLogsOnError",
  };
  return restrictedJob({
    name: analysisResourceName(spec.analysisId),
    namespace: analysis.namespace,
    labels,
    owner: { kind: ANALYSIS_KIND, name: analysis.name, uid: analysis.uid },
    timeoutSeconds: spec.timeoutSeconds,
    ttlSecondsAfterFinished: input.ttlSecondsAfterFinished,
    compute,
    initContainers: [checkout],
    containers: [main],
    volumes: [
      { name: "workspace", emptyDir: {} },
      { name: "tmp", emptyDir: {} },
    ],
  });
}
