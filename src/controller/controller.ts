import { makeInformer, type Informer, type KubernetesObject, type ObjectCache, type V1Job, type V1Pod } from "@kubernetes/client-node";
import type { Db } from "../db/database.ts";
import type { WorkloadTable } from "../db/workload-tables.ts";
import { saveAnalysisResult, ANALYSIS_ROWS } from "../domain/analyses/analysis-rows.ts";
import type { EnvVarService } from "../domain/env-vars/env-vars.ts";
import { RUN_ROWS } from "../domain/runs/run-rows.ts";
import { logArchiveRows } from "../domain/workloads/log-archive-rows.ts";
import { workloadRows, type WorkloadRowKind } from "../domain/workloads/workload-rows.ts";
import { kubeClusterActions } from "../k8s/cluster-actions.ts";
import { isNotFound, type KubeClients } from "../k8s/client.ts";
import type { ComputeTypes } from "../k8s/compute-types.ts";
import type { WorkloadSpec, WorkloadStatus } from "../k8s/crds/common.ts";
import { GROUP, VERSION } from "../k8s/crds/common.ts";
import { AnalysisResources, RunResources } from "../k8s/run-resources.ts";
import type { Logger } from "../logger.ts";
import { analysisWorkload } from "./analysis-workload.ts";
import { LogArchiver } from "./log-archiver.ts";
import { runWorkload } from "./run-workload.ts";
import { WorkQueue } from "./work-queue.ts";
import { podLabelOf, resourceNameOf } from "../k8s/crds/lifecycle.ts";
import type { Workload, WorkloadObservation } from "./workload.ts";
import { WorkloadReconciler, type ResourceClient } from "./workload-reconciler.ts";

// The controller: informers on every workload kind (Runs, Analyses) and the
// Jobs and pods they own feed one keyed queue (keys are resource names:
// run-<id>, analysis-<id>); each key is reconciled by its kind's reconciler,
// one at a time. It runs only while this replica holds the leader lease.

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

/** One kind of workload as the controller wires it: its descriptor, resources and rows. */
interface Registration {
  workload: Workload<WorkloadSpec, WorkloadStatus, WorkloadObservation>;
  resources: ResourceClient<WorkloadSpec, WorkloadStatus>;
  rows: WorkloadRowKind<WorkloadSpec>;
}

const register = <Spec extends WorkloadSpec, Status extends WorkloadStatus, Obs extends WorkloadObservation>(r: {
  workload: Workload<Spec, Status, Obs>;
  resources: ResourceClient<Spec, Status>;
  rows: WorkloadRowKind<Spec>;
}) => r as unknown as Registration;

export class Controller {
  readonly #o: ControllerOptions;
  #informers: Informer<KubernetesObject>[] = [];
  #queue: WorkQueue | null = null;
  #archivers: LogArchiver[] = [];
  #stopped = false;

  constructor(opts: ControllerOptions) {
    this.#o = opts;
  }

  #registrations(): Registration[] {
    const { k, db, envVars } = this.#o;
    return [
      register({
        workload: runWorkload({
          resolveEnv: (accountId, repositoryId) => envVars.resolveForRepository(db, accountId, repositoryId),
          images: this.#o.images,
          computeTypes: this.#o.computeTypes,
          jobTtlSeconds: this.#o.jobTtlSeconds,
        }),
        resources: new RunResources(k),
        rows: RUN_ROWS,
      }),
      register({
        workload: analysisWorkload({
          saveResult: (id, result) => saveAnalysisResult(db, id, result),
          images: this.#o.images,
          computeTypes: this.#o.computeTypes,
          computeType: this.#o.analysisComputeType,
          jobTtlSeconds: this.#o.jobTtlSeconds,
        }),
        resources: new AnalysisResources(k),
        rows: ANALYSIS_ROWS,
      }),
    ];
  }

  async start(): Promise<void> {
    const { k, logger } = this.#o;
    this.#stopped = false;
    const ns = k.namespace;
    const cluster = kubeClusterActions(k, logger.child({ component: "events" }));
    const jobInformer = makeInformer<V1Job>(k.config, `/apis/batch/v1/namespaces/${ns}/jobs`, () => k.batch.listNamespacedJob({ namespace: ns, labelSelector: MANAGED }), MANAGED);
    const podInformer = makeInformer<V1Pod>(k.config, `/api/v1/namespaces/${ns}/pods`, () => k.core.listNamespacedPod({ namespace: ns, labelSelector: MANAGED }), MANAGED);

    const kinds = this.#registrations().map((r) => {
      const informer = makeInformer<KubernetesObject>(k.config, `/apis/${GROUP}/${VERSION}/namespaces/${ns}/${r.workload.plural}`, async () =>
        (await k.custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: r.workload.plural })) as never,
      );
      const archiver = this.#archiver(r.rows.table, (id) => this.#queue?.add(resourceNameOf(r.workload, id)));
      const reconciler = new WorkloadReconciler({
        workload: r.workload,
        resources: r.resources,
        rows: workloadRows(this.#o.db, r.rows),
        cluster,
        jobs: jobInformer as ObjectCache<V1Job>,
        pods: podInformer as ObjectCache<V1Pod>,
        archiver,
        logger: logger.child({ component: `${r.workload.noun}-reconciler` }),
      });
      return { ...r, informer, archiver, reconciler };
    });
    this.#archivers = kinds.map((x) => x.archiver);

    const queue = new WorkQueue(
      async (name) => {
        const kind = kinds.find((x) => x.reconciler.handles(name));
        if (!kind) return;
        const result = await kind.reconciler.reconcile(name);
        if (result.requeueAfterMs) queue.addAfter(name, result.requeueAfterMs);
      },
      {
        concurrency: this.#o.concurrency ?? 8,
        onError: (key, err, attempt) => logger.warn({ resource: key, attempt, err: err instanceof Error ? err.message : String(err) }, "reconcile failed; will retry"),
      },
    );
    this.#queue = queue;

    const resourceKey = (o: KubernetesObject) => o.metadata?.name && queue.add(o.metadata.name);
    const ownerKey = (o: KubernetesObject) => {
      const labels = o.metadata?.labels ?? {};
      for (const { workload } of kinds) {
        const id = labels[podLabelOf(workload)];
        if (id) queue.add(resourceNameOf(workload, id));
      }
    };
    for (const [informer, key] of [...kinds.map((x) => [x.informer, resourceKey] as const), [jobInformer, ownerKey] as const, [podInformer, ownerKey] as const]) {
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
    for (const x of kinds) await x.informer.start();
    // Resume: every resource is looked at once after a start, so no transition
    // that happened while no controller ran is lost.
    for (const x of kinds) for (const r of x.informer.list(ns)) resourceKey(r);
    logger.info(Object.fromEntries(kinds.map((x) => [x.workload.plural, x.informer.list(ns).length])), "controller started");
  }

  #archiver(table: WorkloadTable, onComplete: (id: string) => void): LogArchiver {
    const { k, logger } = this.#o;
    return new LogArchiver({
      rows: logArchiveRows(this.#o.db, table),
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
