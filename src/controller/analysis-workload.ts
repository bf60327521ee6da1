import type { AnalyzerResult } from "@codeplane/analyzer";
import type { ComputeTypes } from "../resources/compute-types.ts";
import { buildAnalysisJob } from "../k8s/analysis-job.ts";
import { ANALYSIS_WORKLOAD, analysisSpecSchema, type AnalysisSpec, type AnalysisStatus } from "../resources/analysis.ts";
import { observeAnalysis, type AnalysisObservation } from "./analysis-observation.ts";
import { parseAnalyzerOutput } from "./analyzer-output.ts";
import { presetFor, type Workload } from "./workload.ts";
import { ensureWorkloadSecret, releaseWorkloadSecret, type CheckoutDeps } from "./workload-secret.ts";
import { analysisLabels } from "../resources/labels.ts";

// Analyses as a workload: codeplane's analyzer reads a checkout and hands its
// result back through its own log. Once the analyzer has finished, its output
// is read and validated; the result is stored in Postgres before the status
// says completed, so a reader who sees "completed" always finds the result.

export interface AnalysisWorkloadDeps {
  /** Stores the validated result; must not overwrite one already stored. */
  saveResult(analysisId: string, result: AnalyzerResult): Promise<void>;
  images: { codeplane: string; pullPolicy: "Always" | "IfNotPresent" | "Never"; pullSecrets?: readonly string[] };
  computeTypes: ComputeTypes;
  /** The compute preset analysis pods get. */
  computeType: string;
  jobTtlSeconds: number;
  checkout: CheckoutDeps;
}

export function analysisWorkload(deps: AnalysisWorkloadDeps): Workload<AnalysisSpec, AnalysisStatus, AnalysisObservation> {
  return {
    ...ANALYSIS_WORKLOAD,
    started: { reason: "AnalyzerStarted", message: "the analyzer started" },
    specSchema: analysisSpecSchema,
    idOf: (spec) => spec.analysisId,
    async job(analysis, cluster) {
      const { spec } = analysis;
      const compute = presetFor(deps.computeTypes, deps.computeType);
      const labels = analysisLabels(spec.accountId, spec.repositoryId, spec.analysisId);
      const checkout = await ensureWorkloadSecret(ANALYSIS_WORKLOAD, spec.analysisId, analysis, cluster, deps.checkout, labels);
      return buildAnalysisJob({
        resource: analysis,
        images: deps.images,
        imagePullSecrets: deps.images.pullSecrets,
        compute,
        checkout,
        ttlSecondsAfterFinished: deps.jobTtlSeconds,
      });
    },
    release: (analysis, cluster) => releaseWorkloadSecret(ANALYSIS_WORKLOAD, analysis.spec.analysisId, analysis.metadata.namespace, cluster, deps.checkout),
    async observe({ resource, job, pod, now, podNow, cluster }) {
      const { spec, status } = resource;
      const obs = observeAnalysis(spec, status, job, pod, now, null);
      if (!obs.needsOutput) return obs;
      // A finished container's log is complete, so one plain read has all of it.
      const source = await podNow();
      const text = source?.metadata?.name ? await cluster.readPodLog(resource.metadata.namespace, source.metadata.name, "main") : null;
      return observeAnalysis(spec, status, job, pod, now, text === null ? "lost" : parseAnalyzerOutput(text));
    },
    async persist(analysis, obs) {
      if (obs.result) await deps.saveResult(analysis.spec.analysisId, obs.result);
    },
    extraStatus(obs, previous) {
      const experiments = obs.result?.experiments.length ?? previous?.experiments;
      return experiments === undefined ? {} : { experiments };
    },
    eventNote: (status) =>
      status.error ?? (status.phase === "completed" ? `analysis completed: ${status.experiments ?? 0} experiment(s)` : `analysis is ${status.phase}`),
  };
}
