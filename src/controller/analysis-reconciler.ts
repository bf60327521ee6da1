import type { ObjectCache, V1Job, V1Pod } from "@kubernetes/client-node";
import type { Db } from "../db/database.ts";
import { mirrorAnalysis } from "../domain/analyses/analysis-rows.ts";
import { isForeignKeyViolation, isUniqueViolation } from "../domain/shared/db-errors.ts";
import { buildAnalysisJob } from "../k8s/analysis-job.ts";
import { isAlreadyExists, type KubeClients } from "../k8s/client.ts";
import type { ComputeTypes } from "../k8s/compute-types.ts";
import { ANALYSIS_KIND, type AnalysisStatus } from "../k8s/crds/analysis.ts";
import { ANALYSIS_LABEL, analysisResourceName } from "../k8s/labels.ts";
import { newestPod } from "../k8s/pods.ts";
import type { AnalysisResource, AnalysisResources } from "../k8s/run-resources.ts";
import type { Logger } from "../logger.ts";
import { observeAnalysis, type AnalysisObservation } from "./analysis-observation.ts";
import { readAnalyzerOutput } from "./analyzer-output.ts";
import type { LogArchiver } from "./log-archiver.ts";
import { deleteJob, lifecycleConditions, podFromApi, recordEvent, sameStatus } from "./reconcile-support.ts";

// Reconciles one Analysis the way RunReconciler reconciles a Run: gather (the
// resource, its Job and pod), decide (observeAnalysis, pure), act. Once the
// analyzer has finished, its output is read from the pod log; the validated
// result is stored in Postgres before the status says completed, so a reader
// who sees "completed" always finds the result.

export interface AnalysisReconcilerDeps {
  k: KubeClients;
  analyses: AnalysisResources;
  db: Db;
  jobs: ObjectCache<V1Job>;
  pods: ObjectCache<V1Pod>;
  archiver: LogArchiver;
  images: { codeplane: string; pullPolicy: "Always" | "IfNotPresent" | "Never" };
  computeTypes: ComputeTypes;
  computeType: string;
  jobTtlSeconds: number;
  logger: Logger;
  now?: () => Date;
}

const LIVE_RESYNC_MS = 15_000;
const TERMINAL = new Set(["completed", "failed", "cancelled"]);

export class AnalysisReconciler {
  readonly #d: AnalysisReconcilerDeps;

  constructor(deps: AnalysisReconcilerDeps) {
    this.#d = deps;
  }

  async reconcile(name: string): Promise<{ requeueAfterMs?: number }> {
    const d = this.#d;
    const analysis = await d.analyses.get(name);
    if (!analysis) {
      const id = name.replace(/^analysis-/, "");
      await d.db.deleteFrom("analyses").where("workflow_id", "=", `${d.analyses.namespace}/${name}`).where("id", "=", id).execute();
      return {};
    }
    if (analysis.metadata.deletionTimestamp) return {};
    const { spec } = analysis;
    const hidden = await d.db.selectFrom("analyses").select("id").where("id", "=", spec.analysisId).where("deleted_at", "is not", null).executeTakeFirst();
    if (hidden) {
      await d.analyses.delete(name);
      return {};
    }
    const log = d.logger.child({ analysis: name });
    const ns = analysis.metadata.namespace;
    const mirror = (status: AnalysisStatus | undefined) =>
      mirrorAnalysis(d.db, { namespace: ns, name, createdAt: new Date(analysis.metadata.creationTimestamp ?? Date.now()), spec, status });
    try {
      await mirror(analysis.status);
    } catch (err) {
      // The repository is gone, or another live analysis holds this commit
      // (this one's row was removed while its resource lingered): it has no place.
      if (!isForeignKeyViolation(err) && !isUniqueViolation(err)) throw err;
      log.info("the analysis no longer belongs to a live repository and commit: deleting it");
      await d.analyses.delete(name);
      return {};
    }

    const previous = analysis.status;
    const live = !(previous?.phase && TERMINAL.has(previous.phase));
    const jobName = analysisResourceName(spec.analysisId);
    if (live && !spec.cancelRequested && !d.jobs.get(jobName, ns)) await this.#ensureJob(analysis);

    const job = d.jobs.get(jobName, ns) ?? null;
    const pod = newestPod(d.pods.list(ns).filter((p) => p.metadata?.labels?.[ANALYSIS_LABEL] === spec.analysisId));
    const now = (d.now ?? (() => new Date()))();
    // The cache may lag behind a pod that just finished: ask the API server, at most once per reconcile.
    let fromApi: Promise<V1Pod | null> | undefined;
    const podNow = async () => pod ?? (await (fromApi ??= podFromApi(d.k, ns, `${ANALYSIS_LABEL}=${spec.analysisId}`)));
    let obs = observeAnalysis(spec, previous, job, pod, now, null);
    if (obs.needsOutput) {
      const source = await podNow();
      const output = source?.metadata?.name ? await readAnalyzerOutput(d.k, ns, source.metadata.name) : "lost";
      obs = observeAnalysis(spec, previous, job, pod, now, output);
    }
    if (obs.result) {
      await d.db.updateTable("analyses").set({ result: JSON.stringify(obs.result) }).where("id", "=", spec.analysisId).where("result", "is", null).execute();
    }
    if (obs.stopJob && job) await deleteJob(d.k, jobName, ns);

    const status = this.#statusFrom(analysis, obs, pod, now);
    if (!sameStatus(previous, status)) {
      const updated = await d.analyses.patchStatus(name, status);
      if (!updated) return {};
      if (previous?.phase !== status.phase) {
        await recordEvent(d.k, log, { kind: ANALYSIS_KIND, name, namespace: ns, uid: analysis.metadata.uid }, {
          reason: obs.reason,
          warning: status.phase === "failed",
          note: status.error ?? (status.phase === "completed" ? `analysis completed: ${status.experiments ?? 0} experiment(s)` : `analysis is ${status.phase}`),
        });
      }
      log.info({ phase: status.phase, error: status.error }, "analysis status changed");
    }
    await mirror(status);

    const terminal = TERMINAL.has(status.phase!);
    const source = terminal ? await podNow() : pod;
    const main = source?.status?.containerStatuses?.find((c) => c.name === "main");
    if (source && (main?.state?.running || main?.state?.terminated)) {
      d.archiver.ensure(spec.analysisId, { namespace: ns, pod: source.metadata!.name!, container: "main" });
    } else if (terminal && !d.archiver.isArchiving(spec.analysisId)) {
      await d.db.updateTable("analyses").set({ logs_complete: true }).where("id", "=", spec.analysisId).where("logs_complete", "=", false).execute();
    }
    return terminal ? {} : { requeueAfterMs: LIVE_RESYNC_MS };
  }

  #statusFrom(analysis: AnalysisResource, obs: AnalysisObservation, pod: V1Pod | null, now: Date): AnalysisStatus {
    const prev = analysis.status;
    const terminal = TERMINAL.has(obs.phase);
    const generation = analysis.metadata.generation ?? 0;
    const conditions = lifecycleConditions(
      prev?.conditions,
      {
        noun: "analysis",
        phase: obs.phase,
        terminal,
        reason: obs.reason,
        error: obs.error,
        startTime: obs.startTime,
        started: { reason: "AnalyzerStarted", message: "the analyzer started" },
        generation,
      },
      now,
    );
    const experiments = obs.result?.experiments.length ?? prev?.experiments;
    return {
      phase: obs.phase,
      observedGeneration: generation,
      conditions,
      jobName: analysisResourceName(analysis.spec.analysisId),
      ...((pod?.metadata?.name ?? prev?.podName) && { podName: pod?.metadata?.name ?? prev?.podName }),
      ...(obs.exitCode !== null && { exitCode: obs.exitCode }),
      ...(obs.error !== null && { error: obs.error }),
      ...(experiments !== undefined && { experiments }),
      ...(obs.startTime && { startTime: obs.startTime }),
      ...(terminal && obs.completionTime && { completionTime: obs.completionTime }),
    };
  }

  async #ensureJob(analysis: AnalysisResource): Promise<void> {
    const d = this.#d;
    const compute = d.computeTypes[d.computeType];
    if (!compute) throw new Error(`unknown compute type ${d.computeType}`);
    const job = buildAnalysisJob({
      analysis: { name: analysis.metadata.name, namespace: analysis.metadata.namespace, uid: analysis.metadata.uid, spec: analysis.spec },
      images: d.images,
      compute,
      ttlSecondsAfterFinished: d.jobTtlSeconds,
    });
    try {
      await d.k.batch.createNamespacedJob({ namespace: analysis.metadata.namespace, body: job });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }
}
