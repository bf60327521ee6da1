import type { ObjectCache, V1Job, V1Pod } from "@kubernetes/client-node";
import type { Db } from "../db/database.ts";
import type { EnvVarService } from "../domain/env-vars/env-vars.ts";
import { mirrorRun, runConfigOf } from "../domain/runs/run-rows.ts";
import { isForeignKeyViolation } from "../domain/shared/db-errors.ts";
import { isAlreadyExists, type KubeClients } from "../k8s/client.ts";
import type { ComputeTypes } from "../k8s/compute-types.ts";
import { API_VERSION } from "../k8s/crds/common.ts";
import { RUN_KIND, RUN_LIFECYCLE, type RunStatus } from "../k8s/crds/run.ts";
import { runLabels, runResourceName, runSecretName } from "../k8s/labels.ts";
import type { RunResource, RunResources } from "../k8s/run-resources.ts";
import { newestPod } from "../k8s/pods.ts";
import { buildRunJob } from "../k8s/run-job.ts";
import type { Logger } from "../logger.ts";
import type { LogArchiver } from "./log-archiver.ts";
import { deleteJob, lifecycleConditions, podFromApi, recordEvent, sameStatus } from "./reconcile-support.ts";
import { observeRun, type RunObservation } from "./run-observation.ts";

// Reconciles one Run: gather (the Run, its Job and pod from the informer
// caches), decide (observeRun, pure), act (create what is missing, stop what
// must stop, write status only when it changed, mirror it into Postgres).

export interface RunReconcilerDeps {
  k: KubeClients;
  runs: RunResources;
  db: Db;
  envVars: EnvVarService;
  jobs: ObjectCache<V1Job>;
  pods: ObjectCache<V1Pod>;
  archiver: LogArchiver;
  images: { runner: string; codeplane: string; pullPolicy: "Always" | "IfNotPresent" | "Never" };
  computeTypes: ComputeTypes;
  jobTtlSeconds: number;
  logger: Logger;
  now?: () => Date;
}

export interface ReconcileResult {
  requeueAfterMs?: number;
}

/** While a run is live, look again this often even without events (deadline backstop). */
const LIVE_RESYNC_MS = 15_000;

export class RunReconciler {
  readonly #d: RunReconcilerDeps;

  constructor(deps: RunReconcilerDeps) {
    this.#d = deps;
  }

  async reconcile(name: string): Promise<ReconcileResult> {
    const d = this.#d;
    const run = await d.runs.get(name);
    if (!run) {
      // The resource is gone (deleted through the API or by kubectl): so is the run.
      const id = name.replace(/^run-/, "");
      await d.db.deleteFrom("runs").where("workflow_id", "=", `${d.runs.namespace}/${name}`).where("id", "=", id).execute();
      return {};
    }
    if (run.metadata.deletionTimestamp) return {};
    const hidden = await d.db.selectFrom("runs").select("id").where("id", "=", run.spec.runId).where("deleted_at", "is not", null).executeTakeFirst();
    if (hidden) {
      // Deleted through the API while the resource still existed: finish the job.
      await d.runs.delete(name);
      return {};
    }
    const log = d.logger.child({ run: name });
    const { spec } = run;
    const config = runConfigOf(spec);
    const mirror = (status: RunStatus | undefined) =>
      mirrorRun(d.db, { namespace: run.metadata.namespace, name, createdAt: new Date(run.metadata.creationTimestamp ?? Date.now()), spec, config, status });

    try {
      await mirror(run.status);
    } catch (err) {
      if (!isForeignKeyViolation(err)) throw err;
      log.info("the run's repository or account no longer exists: deleting the run");
      await d.runs.delete(name);
      return {};
    }

    const previous = run.status;
    const live = !(previous?.phase && RUN_LIFECYCLE.isTerminal(previous.phase));
    const jobName = runResourceName(spec.runId);
    if (live && !spec.cancelRequested) {
      // The Secret matters only to the Job's pods, so it is built (which
      // decrypts every variable) only when the Job is about to be created.
      if (!d.jobs.get(jobName, run.metadata.namespace)) await this.#ensureJob(run, await this.#ensureSecret(run));
    }

    const job = d.jobs.get(jobName, run.metadata.namespace) ?? null;
    const pod = this.#newestPod(run);
    const now = (d.now ?? (() => new Date()))();
    const obs = observeRun(spec, previous, job, pod, now);

    if (obs.stopJob && job) await deleteJob(d.k, jobName, run.metadata.namespace);
    const status = this.#statusFrom(run, obs, pod, now);
    if (!sameStatus(previous, status)) {
      const updated = await d.runs.patchStatus(name, status);
      if (!updated) return {};
      if (previous?.phase !== status.phase) await recordEvent(d.k, log, { kind: RUN_KIND, name, namespace: run.metadata.namespace, uid: run.metadata.uid }, { reason: obs.reason, warning: status.phase === "failed", note: status.error ?? `run is ${status.phase}` });
      log.info({ phase: status.phase, exit_code: status.exitCode, error: status.error }, "run status changed");
    }
    await mirror(status);

    const terminal = RUN_LIFECYCLE.isTerminal(status.phase!);
    // Declaring the logs complete is final, so a cache that has not caught up
    // (a controller just started) must not decide it: ask the API server.
    const source = pod ?? (terminal ? await podFromApi(d.k, run.metadata.namespace, `codeplane.dev/run=${spec.runId}`) : null);
    const main = source?.status?.containerStatuses?.find((c) => c.name === "main");
    if (source && (main?.state?.running || main?.state?.terminated)) {
      d.archiver.ensure(spec.runId, { namespace: run.metadata.namespace, pod: source.metadata!.name!, container: "main" });
    } else if (terminal && !d.archiver.isArchiving(spec.runId)) {
      // The main container never ran (or its pod is gone): nothing more will come.
      await d.db.updateTable("runs").set({ logs_complete: true }).where("id", "=", spec.runId).where("logs_complete", "=", false).execute();
    }
    return terminal ? {} : { requeueAfterMs: LIVE_RESYNC_MS };
  }

  #newestPod(run: RunResource): V1Pod | null {
    return newestPod(this.#d.pods.list(run.metadata.namespace).filter((p) => p.metadata?.labels?.["codeplane.dev/run"] === run.spec.runId));
  }

  #statusFrom(run: RunResource, obs: RunObservation, pod: V1Pod | null, now: Date): RunStatus {
    const prev = run.status;
    const terminal = RUN_LIFECYCLE.isTerminal(obs.phase);
    const generation = run.metadata.generation ?? 0;
    const conditions = lifecycleConditions(
      prev?.conditions,
      {
        noun: "run",
        phase: obs.phase,
        terminal,
        reason: obs.reason,
        error: obs.error,
        startTime: obs.startTime,
        started: { reason: "ContainerStarted", message: "the run's command started" },
        generation,
      },
      now,
    );
    return {
      phase: obs.phase,
      observedGeneration: generation,
      conditions,
      jobName: runResourceName(run.spec.runId),
      ...((pod?.metadata?.name ?? prev?.podName) && { podName: pod?.metadata?.name ?? prev?.podName }),
      // Absent rather than null: a merge patch's null deletes the field, so null would never read back.
      ...(obs.exitCode !== null && { exitCode: obs.exitCode }),
      ...(obs.error !== null && { error: obs.error }),
      ...(obs.startTime && { startTime: obs.startTime }),
      ...(terminal && obs.completionTime && { completionTime: obs.completionTime }),
    };
  }

  async #ensureSecret(run: RunResource): Promise<string | null> {
    const d = this.#d;
    const env = await d.envVars.resolveForRepository(d.db, run.spec.accountId, run.spec.repositoryId);
    if (Object.keys(env).length === 0) return null;
    const name = runSecretName(run.spec.runId);
    try {
      await d.k.core.createNamespacedSecret({
        namespace: run.metadata.namespace,
        body: {
          metadata: {
            name,
            namespace: run.metadata.namespace,
            labels: runLabels(run.spec.accountId, run.spec.repositoryId, run.spec.runId),
            ownerReferences: [{ apiVersion: API_VERSION, kind: RUN_KIND, name: run.metadata.name, uid: run.metadata.uid, controller: true, blockOwnerDeletion: true }],
          },
          type: "Opaque",
          immutable: true,
          stringData: env,
        },
      });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    return name;
  }

  async #ensureJob(run: RunResource, envSecretName: string | null): Promise<void> {
    const d = this.#d;
    const compute = d.computeTypes[run.spec.computeType];
    if (!compute) throw new Error(`unknown compute type ${run.spec.computeType}`);
    const job = buildRunJob({
      run: { name: run.metadata.name, namespace: run.metadata.namespace, uid: run.metadata.uid, spec: run.spec },
      images: d.images,
      compute,
      envSecretName,
      ttlSecondsAfterFinished: d.jobTtlSeconds,
    });
    try {
      await d.k.batch.createNamespacedJob({ namespace: run.metadata.namespace, body: job });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }
}
