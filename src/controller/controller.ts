import { makeInformer, type Informer, type KubernetesObject, type ObjectCache, type V1Job, type V1Pod } from "@kubernetes/client-node";
import type { Db } from "../db/database.ts";
import type { EnvVarService } from "../domain/env-vars/env-vars.ts";
import { isNotFound, type KubeClients } from "../k8s/client.ts";
import type { ComputeTypes } from "../k8s/compute-types.ts";
import { GROUP, VERSION } from "../k8s/crds/common.ts";
import { ANALYSIS_PLURAL } from "../k8s/crds/analysis.ts";
import { RUN_PLURAL } from "../k8s/crds/run.ts";
import { analysisResourceName, runResourceName } from "../k8s/labels.ts";
import { AnalysisResources, RunResources, type AnalysisResource, type RunResource } from "../k8s/run-resources.ts";
import { ANALYSIS_TABLE, RUN_TABLE } from "../db/workload-tables.ts";
import { AnalysisReconciler } from "./analysis-reconciler.ts";
import type { Logger } from "../logger.ts";
import { LogArchiver } from "./log-archiver.ts";
import { RunReconciler } from "./run-reconciler.ts";
import { WorkQueue } from "./work-queue.ts";

// The controller: informers on Runs, Analyses and the Jobs and pods they own
// feed one keyed queue (keys are resource names: run-<id>, analysis-<id>);
// each key is reconciled by its kind's reconciler, one at a time. It runs
// only while this replica holds the leader lease.

export interface ControllerOptions {
  k: KubeClients;
  db: Db;
  envVars: EnvVarService;
  images: { runner: string; codeplane: string; pullPolicy: "Always" | "IfNotPresent" | "Never" };
  computeTypes: ComputeTypes;
  jobTtlSeconds: number;
  logMaxBytes: number;
  /** The compute preset analysis pods get. */
  analysisComputeType: string;
  concurrency?: number;
  logger: Logger;
}

const MANAGED = "app.kubernetes.io/managed-by=codeplane,app.kubernetes.io/component in (run,analysis)";

export class Controller {
  readonly #o: ControllerOptions;
  #informers: Informer<KubernetesObject>[] = [];
  #queue: WorkQueue | null = null;
  #archivers: LogArchiver[] = [];
  #stopped = false;

  constructor(opts: ControllerOptions) {
    this.#o = opts;
  }

  async start(): Promise<void> {
    const { k, logger } = this.#o;
    this.#stopped = false;
    const ns = k.namespace;
    const runs = new RunResources(k);
    const runInformer = makeInformer<RunResource>(k.config, `/apis/${GROUP}/${VERSION}/namespaces/${ns}/${RUN_PLURAL}`, async () =>
      (await k.custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: RUN_PLURAL })) as never,
    );
    const jobInformer = makeInformer<V1Job>(k.config, `/apis/batch/v1/namespaces/${ns}/jobs`, () => k.batch.listNamespacedJob({ namespace: ns, labelSelector: MANAGED }), MANAGED);
    const podInformer = makeInformer<V1Pod>(k.config, `/api/v1/namespaces/${ns}/pods`, () => k.core.listNamespacedPod({ namespace: ns, labelSelector: MANAGED }), MANAGED);
    const analysisInformer = makeInformer<AnalysisResource>(k.config, `/apis/${GROUP}/${VERSION}/namespaces/${ns}/${ANALYSIS_PLURAL}`, async () =>
      (await k.custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: ANALYSIS_PLURAL })) as never,
    );

    const archiver = (owner: typeof RUN_TABLE, onComplete: (id: string) => void) => new LogArchiver({
      db: this.#o.db,
      owner,
      log: k.log,
      logger: logger.child({ component: "log-archiver" }),
      maxBytesPerStream: this.#o.logMaxBytes,
      containerState: async (t) => {
        try {
          const pod = await k.core.readNamespacedPod({ name: t.pod, namespace: t.namespace });
          const s = pod.status?.containerStatuses?.find((c) => c.name === t.container)?.state;
          return s?.terminated ? "terminated" : s?.running ? "running" : "waiting";
        } catch (err) {
          // Only a 404 means the pod is gone; the API server being away (a
          // restart) must not end archiving while the container still writes.
          if (isNotFound(err)) return "gone";
          throw err;
        }
      },
      onComplete,
    });
    const runArchiver = archiver(RUN_TABLE, (id) => this.#queue?.add(runResourceName(id)));
    const analysisArchiver = archiver(ANALYSIS_TABLE, (id) => this.#queue?.add(analysisResourceName(id)));
    this.#archivers = [runArchiver, analysisArchiver];
    const reconciler = new RunReconciler({
      k,
      runs,
      db: this.#o.db,
      envVars: this.#o.envVars,
      jobs: jobInformer as ObjectCache<V1Job>,
      pods: podInformer as ObjectCache<V1Pod>,
      archiver: runArchiver,
      images: this.#o.images,
      computeTypes: this.#o.computeTypes,
      jobTtlSeconds: this.#o.jobTtlSeconds,
      logger: logger.child({ component: "run-reconciler" }),
    });
    const analysisReconciler = new AnalysisReconciler({
      k,
      analyses: new AnalysisResources(k),
      db: this.#o.db,
      jobs: jobInformer as ObjectCache<V1Job>,
      pods: podInformer as ObjectCache<V1Pod>,
      archiver: analysisArchiver,
      images: this.#o.images,
      computeTypes: this.#o.computeTypes,
      computeType: this.#o.analysisComputeType,
      jobTtlSeconds: this.#o.jobTtlSeconds,
      logger: logger.child({ component: "analysis-reconciler" }),
    });
    const queue = new WorkQueue(
      async (name) => {
        const result = name.startsWith("analysis-") ? await analysisReconciler.reconcile(name) : await reconciler.reconcile(name);
        if (result.requeueAfterMs) queue.addAfter(name, result.requeueAfterMs);
      },
      {
        concurrency: this.#o.concurrency ?? 8,
        onError: (key, err, attempt) => logger.warn({ resource: key, attempt, err: err instanceof Error ? err.message : String(err) }, "reconcile failed; will retry"),
      },
    );
    this.#queue = queue;

    const runKey = (o: KubernetesObject) => o.metadata?.name && queue.add(o.metadata.name);
    const ownerKey = (o: KubernetesObject) => {
      const labels = o.metadata?.labels ?? {};
      if (labels["codeplane.dev/run"]) queue.add(runResourceName(labels["codeplane.dev/run"]));
      if (labels["codeplane.dev/analysis"]) queue.add(analysisResourceName(labels["codeplane.dev/analysis"]));
    };
    for (const [informer, key] of [
      [runInformer, runKey],
      [analysisInformer, runKey],
      [jobInformer, ownerKey],
      [podInformer, ownerKey],
    ] as const) {
      const inf = informer as Informer<KubernetesObject>;
      inf.on("add", key);
      inf.on("update", key);
      inf.on("delete", key);
      inf.on("error", (err: unknown) => {
        if (this.#stopped) return;
        logger.warn({ err: err instanceof Error ? err.message : String(err) }, "watch failed; restarting");
        setTimeout(() => void inf.start().catch(() => undefined), 2000).unref();
      });
      this.#informers.push(inf);
    }
    // Jobs and pods first, so the first reconciles see the children that exist.
    await jobInformer.start();
    await podInformer.start();
    await runInformer.start();
    await analysisInformer.start();
    // Resume: every resource is looked at once after a start, so no transition
    // that happened while no controller ran is lost.
    for (const r of runInformer.list(ns)) runKey(r);
    for (const a of analysisInformer.list(ns)) runKey(a);
    logger.info({ runs: runInformer.list(ns).length, analyses: analysisInformer.list(ns).length }, "controller started");
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all(this.#informers.map((i) => i.stop().catch(() => undefined)));
    this.#informers = [];
    for (const a of this.#archivers) a.stopAll();
    await this.#queue?.stop();
    this.#queue = null;
  }
}
