import { makeInformer, type Informer, type KubernetesObject, type ObjectCache, type V1Job, type V1Pod } from "@kubernetes/client-node";
import type { Db } from "../db/database.ts";
import type { EnvVarService } from "../domain/env-vars/env-vars.ts";
import { isNotFound, type KubeClients } from "../k8s/client.ts";
import type { ComputeTypes } from "../k8s/compute-types.ts";
import { GROUP, VERSION } from "../k8s/crds/common.ts";
import { RUN_PLURAL } from "../k8s/crds/run.ts";
import { runResourceName } from "../k8s/labels.ts";
import { RunResources, type RunResource } from "../k8s/run-resources.ts";
import type { Logger } from "../logger.ts";
import { LogArchiver } from "./log-archiver.ts";
import { RunReconciler } from "./run-reconciler.ts";
import { WorkQueue } from "./work-queue.ts";

// The controller: informers on Runs and the Jobs and pods they own feed a
// keyed queue; each key is reconciled by RunReconciler, one at a time. It
// runs only while this replica holds the leader lease.

export interface ControllerOptions {
  k: KubeClients;
  db: Db;
  envVars: EnvVarService;
  images: { runner: string; codeplane: string; pullPolicy: "Always" | "IfNotPresent" | "Never" };
  computeTypes: ComputeTypes;
  jobTtlSeconds: number;
  logMaxBytes: number;
  concurrency?: number;
  logger: Logger;
}

const MANAGED = "app.kubernetes.io/managed-by=codeplane,app.kubernetes.io/component=run";

export class Controller {
  readonly #o: ControllerOptions;
  #informers: Informer<KubernetesObject>[] = [];
  #queue: WorkQueue | null = null;
  #archiver: LogArchiver | null = null;
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

    this.#archiver = new LogArchiver({
      db: this.#o.db,
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
      onComplete: (runId) => this.#queue?.add(runResourceName(runId)),
    });
    const reconciler = new RunReconciler({
      k,
      runs,
      db: this.#o.db,
      envVars: this.#o.envVars,
      jobs: jobInformer as ObjectCache<V1Job>,
      pods: podInformer as ObjectCache<V1Pod>,
      archiver: this.#archiver,
      images: this.#o.images,
      computeTypes: this.#o.computeTypes,
      jobTtlSeconds: this.#o.jobTtlSeconds,
      logger: logger.child({ component: "run-reconciler" }),
    });
    const queue = new WorkQueue(
      async (name) => {
        const result = await reconciler.reconcile(name);
        if (result.requeueAfterMs) queue.addAfter(name, result.requeueAfterMs);
      },
      {
        concurrency: this.#o.concurrency ?? 8,
        onError: (key, err, attempt) => logger.warn({ run: key, attempt, err: err instanceof Error ? err.message : String(err) }, "reconcile failed; will retry"),
      },
    );
    this.#queue = queue;

    const runKey = (o: KubernetesObject) => o.metadata?.name && queue.add(o.metadata.name);
    const ownerKey = (o: KubernetesObject) => {
      const id = o.metadata?.labels?.["codeplane.dev/run"];
      if (id) queue.add(runResourceName(id));
    };
    for (const [informer, key] of [
      [runInformer, runKey],
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
    // Resume: every Run is looked at once after a start, so no transition
    // that happened while no controller ran is lost.
    for (const r of runInformer.list(ns)) runKey(r);
    logger.info({ runs: runInformer.list(ns).length }, "controller started");
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all(this.#informers.map((i) => i.stop().catch(() => undefined)));
    this.#informers = [];
    this.#archiver?.stopAll();
    await this.#queue?.stop();
    this.#queue = null;
  }
}
