import { presetRequests } from "../resources/quantity.ts";
import { beginRunAttempt, type BeginAttemptDeps } from "../domain/runs/run-attempts.ts";
import { makeInformer, type Informer, type KubernetesObject, type ObjectCache, type V1Job, type V1Pod } from "@kubernetes/client-node";
import type { Db } from "../db/database.ts";
import type { WorkloadTable } from "../db/workload-tables.ts";
import { saveAnalysisResult, ANALYSIS_ROWS } from "../domain/analyses/analysis-rows.ts";
import type { EnvVarService } from "../domain/env-vars/env-vars.ts";
import { RUN_ROWS } from "../domain/runs/run-rows.ts";
import { runMetricsArchiveHook, type MetricLimits } from "../domain/runs/run-metrics.ts";
import { logArchiveRows, type ArchiveBatchHook } from "../domain/workloads/log-archive-rows.ts";
import { workloadRows, type WorkloadRowKind } from "../domain/workloads/workload-rows.ts";
import { kubeClusterActions, type ClusterActions } from "../k8s/cluster-actions.ts";
import { isNotFound, type KubeClients } from "../k8s/client.ts";
import type { ComputeTypes } from "../resources/compute-types.ts";
import type { ImagePolicy } from "../domain/environments/resolve.ts";
import type { WorkloadSpec, WorkloadStatus } from "../resources/common.ts";
import { GROUP, VERSION } from "../resources/common.ts";
import { AnalysisResources, RunResources } from "../k8s/run-resources.ts";
import type { Logger } from "../logger.ts";
import type { Registry } from "prom-client";
import { workloadMetrics } from "./metrics.ts";
import { isTransient } from "./transient.ts";
import { analysisWorkload } from "./analysis-workload.ts";
import { LogArchiver } from "./log-archiver.ts";
import { runJobName, runWorkload } from "./run-workload.ts";
import { EnvironmentBuilds } from "./environment-builds.ts";
import { recordRunEnvironmentCache } from "../domain/runs/run-rows.ts";
import { WorkQueue } from "./work-queue.ts";
import type { CheckoutDeps } from "./workload-secret.ts";
import { mintCheckoutToken, revokeCheckoutTokens } from "../domain/checkout/checkout-tokens.ts";
import { mintOutputToken } from "../domain/outputs/output-tokens.ts";
import { podLabelOf, resourceNameOf, type WorkloadKind } from "../resources/lifecycle.ts";
import { MANAGED_BY } from "../resources/labels.ts";
import type { Workload, WorkloadObservation } from "./workload.ts";
import { WorkloadReconciler, type ResourceClient, type WorkloadMetrics } from "./workload-reconciler.ts";
import type { Admission } from "./admission.ts";
import { BuiltInLimiter, limiterMetrics, type LimiterMetrics } from "./limiter.ts";
import { queueSnapshot } from "./queue-snapshot.ts";
import { runMetrics, type RunMetrics } from "./run-metrics.ts";
import { KueueAdmission, kueueApi, kueueInstalled } from "./kueue.ts";
import { limitOverrides } from "../domain/limits/limits.ts";
import type { Limits } from "../domain/limits/limits.ts";
import type { SecretBox } from "../domain/crypto/secret-box.ts";
import { readyEnvironmentImage } from "../domain/pools/pool-pods.ts";
import { kubePoolCluster } from "../k8s/pool-actions.ts";
import type { WarmPool } from "../resources/warm-pools.ts";
import { WarmPools } from "./warm-pools.ts";

// The controller: informers on every workload kind (Runs, Analyses) and the
// Jobs and pods they own feed one keyed queue (keys are resource names:
// run-<id>, analysis-<id>); each key is reconciled by its kind's reconciler,
// one at a time. It runs only while this replica holds the leader lease.

export interface ControllerOptions {
  k: KubeClients;
  db: Db;
  envVars: EnvVarService;
  images: { runner: string; codeplane: string; pullPolicy: "Always" | "IfNotPresent" | "Never"; pullSecrets?: readonly string[] };
  computeTypes: ComputeTypes;
  jobTtlSeconds: number;
  /** An environment build's time budget (CODEPLANE_ENVIRONMENT_BUILD_TIMEOUT_SECONDS). */
  environmentBuildTimeoutSeconds: number;
  /** The image catalog (CODEPLANE_ENVIRONMENT_IMAGES) and the registries repositories may name their own images from. */
  environmentImages: ImagePolicy;
  logMaxBytes: number;
  /** The bounds on a run's metrics (CODEPLANE_METRICS_*). */
  metricLimits: MetricLimits;
  /** The compute preset analysis pods get. */
  analysisComputeType: string;
  /** This installation's identity (src/domain/workloads/installation.ts). */
  installation: string;
  /** Finished resources are deleted this long after they finished; rows and logs stay. */
  retentionSeconds: number;
  /** The process's metrics registry. */
  metrics: Registry;
  /** How workloads check out: the git endpoint's address, egress mode and preprocessing variables. */
  checkout: Pick<CheckoutDeps, "internalUrl" | "egress" | "preprocessEnv">;
  /** The operator's limits: runs wait for admission within them (per-account overrides from the database). */
  limits: Limits;
  /**
   * Kueue admits runs instead of the built-in limiter when this names a
   * ClusterQueue and the cluster serves Kueue's CRDs (kueue.ts); null: the built-in limiter.
   */
  kueue?: { clusterQueue: string; maxWaitSeconds: number } | null;
  /** Seconds a run's pod has past its timeout to send its outputs (CODEPLANE_RUN_OUTPUT_COLLECT_SECONDS); absent: runs collect none. */
  outputCollectSeconds?: number;
  /** Drops a run's stored outputs when a retry gives up its lost attempt (src/domain/runs/run-attempts.ts). */
  discardOutputs: BeginAttemptDeps["discardOutputs"];
  /** Warm pools (CODEPLANE_WARM_POOLS, issue 33); absent or empty: none. */
  warmPools?: readonly WarmPool[];
  /** Seals warm pods' assignments (the installation's encryption key); required with warmPools. */
  box?: SecretBox;
  concurrency?: number;
  /** The root logger: the controller's parts each log as their own component. */
  logger: Logger;
}

/** Hopeless failures in a row (not transient ones) before a workload is marked failed as unreconcilable. */
export const MAX_RECONCILE_ATTEMPTS = 8;

/** What every kind's reconciler shares: the cluster actions and the Job and pod caches. */
interface Shared {
  cluster: ClusterActions;
  /** Runs' admission (the built-in limiter, or Kueue). */
  admission: Admission;
  jobs: Pick<ObjectCache<V1Job>, "get">;
  pods: Pick<ObjectCache<V1Pod>, "list">;
}

/** One kind of workload, wired: what the informers and the queue need to know of it. */
interface Wired {
  kind: WorkloadKind;
  archiver: LogArchiver;
  reconciler: Pick<WorkloadReconciler<WorkloadSpec, WorkloadStatus, WorkloadObservation>, "handles" | "reconcile" | "giveUp">;
}

export class Controller {
  readonly #o: ControllerOptions;
  #informers: Informer<KubernetesObject>[] = [];
  #queue: WorkQueue | null = null;
  #archivers: LogArchiver[] = [];
  #stopped = false;
  /** Informer restarts waiting out their delay: cleared by stop, so none brings a watch back after it. */
  readonly #restarts = new Set<NodeJS.Timeout>();

  readonly #metrics: WorkloadMetrics;
  readonly #limiterMetrics: LimiterMetrics;
  readonly #runMetrics: RunMetrics;
  #limiter: BuiltInLimiter | null = null;
  #warm: WarmPools | null = null;
  /** A wake-up of the admissible runs is scheduled (coalesced: one per burst of events). */
  #kick: NodeJS.Timeout | null = null;

  constructor(opts: ControllerOptions) {
    this.#o = opts;
    this.#metrics = workloadMetrics(opts.metrics);
    this.#limiterMetrics = limiterMetrics(opts.metrics);
    this.#runMetrics = runMetrics(opts.metrics, Object.keys(opts.computeTypes));
  }

  /** Every kind of workload the controller drives. */
  #kinds(shared: Shared): Wired[] {
    const { k, db, envVars, installation } = this.#o;
    const checkout: CheckoutDeps = {
      ...this.#o.checkout,
      mint: (grant) => mintCheckoutToken(db, grant),
      revoke: async (kind, id) => {
        await revokeCheckoutTokens(db, kind, id);
      },
    };
    return [
      this.#wire(shared, {
        workload: runWorkload({
          environments: new EnvironmentBuilds({
            db,
            namespace: k.namespace,
            images: this.#o.images,
            buildTimeoutSeconds: this.#o.environmentBuildTimeoutSeconds,
            jobTtlSeconds: this.#o.jobTtlSeconds,
            checkout,
            cluster: shared.cluster,
            imagePolicy: this.#o.environmentImages,
            logger: this.#o.logger.child({ component: "environment-builds" }),
          }),
          recordEnvironmentCache: (runId, cache) => recordRunEnvironmentCache(db, runId, cache),
          beginAttempt: (runId, _attempt, marker) => beginRunAttempt(db, { discardOutputs: this.#o.discardOutputs }, runId, marker),
          resolveEnv: (accountId, repositoryId) => envVars.resolveForRepository(db, accountId, repositoryId),
          images: this.#o.images,
          computeTypes: this.#o.computeTypes,
          jobTtlSeconds: this.#o.jobTtlSeconds,
          checkout,
          metrics: this.#runMetrics,
          ...(this.#warm && { warm: this.#warm }),
          // With Kueue a run's Job (and its tokens) is made when the run is queued, not when it starts.
          queueAllowanceSeconds: shared.admission.external && this.#o.kueue ? this.#o.kueue.maxWaitSeconds : 0,
          ...(this.#o.outputCollectSeconds !== undefined && {
            outputs: {
              collectSeconds: this.#o.outputCollectSeconds,
              mint: (runId: string, accountId: string, expiresAt: Date) => mintOutputToken(db, runId, accountId, expiresAt),
            },
          }),
        }),
        resources: new RunResources(k, installation),
        rows: RUN_ROWS,
        admission: shared.admission,
      }),
      this.#wire(shared, {
        workload: analysisWorkload({
          saveResult: (id, result) => saveAnalysisResult(db, id, result),
          images: this.#o.images,
          computeTypes: this.#o.computeTypes,
          computeType: this.#o.analysisComputeType,
          jobTtlSeconds: this.#o.jobTtlSeconds,
          checkout,
        }),
        resources: new AnalysisResources(k, installation),
        rows: ANALYSIS_ROWS,
      }),
    ];
  }

  #wire<Spec extends WorkloadSpec, Status extends WorkloadStatus, Obs extends WorkloadObservation>(
    shared: Shared,
    r: { workload: Workload<Spec, Status, Obs>; resources: ResourceClient<Spec, Status>; rows: WorkloadRowKind<Spec>; admission?: Admission },
  ): Wired {
    const onBatch = (r.rows as unknown) === RUN_ROWS ? runMetricsArchiveHook(this.#o.metricLimits) : undefined;
    const archiver = this.#archiver(r.rows.table, (id) => this.#queue?.add(resourceNameOf(r.workload, id)), onBatch);
    const { admission: _all, ...common } = shared;
    const reconciler = new WorkloadReconciler({
      ...common,
      ...(r.admission && { admission: r.admission }),
      workload: r.workload,
      resources: r.resources,
      rows: workloadRows<Spec, Status>(this.#o.db, r.rows),
      archiver,
      installation: this.#o.installation,
      retentionSeconds: this.#o.retentionSeconds,
      metrics: this.#metrics,
      logger: this.#o.logger.child({ component: `${r.workload.noun}-reconciler` }),
    });
    return { kind: r.workload, archiver, reconciler };
  }

  async start(): Promise<void> {
    const { k } = this.#o;
    const logger = this.#o.logger;
    this.#stopped = false;
    const ns = k.namespace;
    const cluster = kubeClusterActions(k, logger.child({ component: "events" }));
    // The Job and pod caches are made once the kinds are known (their selector names them all).
    let jobCache: ObjectCache<V1Job> | null = null;
    let podCache: ObjectCache<V1Pod> | null = null;
    let runCache: Pick<ObjectCache<KubernetesObject>, "list"> | null = null;
    const limiter = await this.#admission(
      ns,
      () => (runCache?.list(ns) ?? []) as never,
      () => jobCache?.list(ns) ?? [],
    );
    // A pool's pod is running already and cannot wait in an engine's queue: with Kueue, runs start cold.
    if (this.#o.warmPools?.length && limiter.external) {
      logger.warn(
        { pools: this.#o.warmPools.map((p) => p.name) },
        "warm pools are not kept while Kueue admits runs: a waiting pod would run outside its quota",
      );
    }
    this.#warm =
      this.#o.warmPools?.length && this.#o.box && !limiter.external
        ? new WarmPools({
            db: this.#o.db,
            box: this.#o.box,
            cluster: kubePoolCluster(k),
            namespace: ns,
            pools: this.#o.warmPools,
            computeTypes: this.#o.computeTypes,
            images: this.#o.images,
            internalUrl: this.#o.checkout.internalUrl,
            jobTtlSeconds: this.#o.jobTtlSeconds,
            ...(this.#o.outputCollectSeconds !== undefined && { outputCollectSeconds: this.#o.outputCollectSeconds }),
            environmentImage: (key) => readyEnvironmentImage(this.#o.db, key),
            logger: logger.child({ component: "warm-pools" }),
          })
        : null;
    const wired = this.#kinds({
      cluster,
      admission: limiter,
      jobs: { get: (name, namespace) => jobCache?.get(name, namespace) },
      pods: { list: (namespace) => podCache?.list(namespace) ?? [] },
    });
    // Jobs and pods of every kind, and nothing else of the namespace.
    const managed = `${Object.entries(MANAGED_BY)
      .map(([key, v]) => `${key}=${v}`)
      .join(",")},app.kubernetes.io/component in (${wired.map((x) => x.kind.noun).join(",")})`;
    const jobInformer = makeInformer<V1Job>(
      k.config,
      `/apis/batch/v1/namespaces/${ns}/jobs`,
      () => k.batch.listNamespacedJob({ namespace: ns, labelSelector: managed }),
      managed,
    );
    const podInformer = makeInformer<V1Pod>(
      k.config,
      `/api/v1/namespaces/${ns}/pods`,
      () => k.core.listNamespacedPod({ namespace: ns, labelSelector: managed }),
      managed,
    );
    jobCache = jobInformer;
    podCache = podInformer;

    const kinds = wired.map((x) => ({
      ...x,
      informer: makeInformer<KubernetesObject>(
        k.config,
        `/apis/${GROUP}/${VERSION}/namespaces/${ns}/${x.kind.plural}`,
        async () => (await k.custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: x.kind.plural })) as never,
      ),
    }));
    this.#archivers = kinds.map((x) => x.archiver);
    runCache = kinds.find((x) => x.kind.plural === "runs")!.informer;

    const queue = new WorkQueue(
      async (name) => {
        const kind = kinds.find((x) => x.reconciler.handles(name));
        if (!kind) return;
        const result = await kind.reconciler.reconcile(name);
        if (result.requeueAfterMs) queue.addAfter(name, result.requeueAfterMs);
        // A run that finished or was admitted changes what may be admitted next.
        this.#wakeAdmissible(queue, limiter);
      },
      {
        concurrency: this.#o.concurrency ?? 8,
        onError: (key, err, attempt) =>
          logger.warn({ resource: key, attempt, err: err instanceof Error ? err.message : String(err) }, "reconcile failed; will retry"),
        // A workload that fails to reconcile for reasons retrying cannot cure is marked failed, not retried forever.
        maxAttempts: MAX_RECONCILE_ATTEMPTS,
        transient: isTransient,
        onGiveUp: async (key, err) => {
          logger.error(
            { resource: key, attempts: MAX_RECONCILE_ATTEMPTS, err: err instanceof Error ? err.message : String(err) },
            "reconcile keeps failing; marking the workload failed",
          );
          await kinds.find((x) => x.reconciler.handles(key))?.reconciler.giveUp(key, err);
        },
      },
    );
    this.#queue = queue;

    const resourceKey = (o: KubernetesObject) => o.metadata?.name && queue.add(o.metadata.name);
    const ownerKey = (o: KubernetesObject) => {
      const labels = o.metadata?.labels ?? {};
      for (const { kind } of kinds) {
        const id = labels[podLabelOf(kind)];
        if (id) queue.add(resourceNameOf(kind, id));
      }
    };
    for (const [informer, key] of [
      ...kinds.map((x) => [x.informer, resourceKey] as const),
      [jobInformer, ownerKey] as const,
      [podInformer, ownerKey] as const,
    ]) {
      const inf = informer as Informer<KubernetesObject>;
      const keyAndWake = (o: KubernetesObject) => {
        key(o);
        this.#wakeAdmissible(queue, limiter);
      };
      inf.on("add", keyAndWake);
      inf.on("update", keyAndWake);
      inf.on("delete", keyAndWake);
      inf.on("error", (err: unknown) => {
        if (this.#stopped) return;
        logger.warn({ err: err instanceof Error ? err.message : String(err) }, "watch failed; restarting");
        const restart = setTimeout(() => {
          this.#restarts.delete(restart);
          if (!this.#stopped) void inf.start().catch(() => undefined);
        }, 2000);
        restart.unref();
        this.#restarts.add(restart);
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
    logger.info(Object.fromEntries(kinds.map((x) => [x.kind.plural, x.informer.list(ns).length])), "controller started");
    this.#warm?.start();
  }

  /** Kueue where the operator named a ClusterQueue and the cluster serves Kueue's CRDs; otherwise the built-in limiter. */
  async #admission(ns: string, runs: () => never, jobs: () => readonly V1Job[]): Promise<Admission> {
    const { k, kueue, installation } = this.#o;
    const log = this.#o.logger.child({ component: "admission" });
    if (kueue) {
      if (await kueueInstalled(k)) {
        log.info({ cluster_queue: kueue.clusterQueue, namespace: ns }, "Kueue admits runs: each account's LocalQueue points at the ClusterQueue");
        // The runs-by-status and queue-length gauges, from the caches as the limiter would report them.
        this.#limiterMetrics.observe(() => queueSnapshot(runs(), installation));
        return new KueueAdmission({
          api: kueueApi(k),
          clusterQueue: kueue.clusterQueue,
          maxWaitSeconds: kueue.maxWaitSeconds,
          installation,
          runs,
          jobs,
          jobName: (run) => runJobName(run as never),
          logger: log,
        });
      }
      log.warn(
        { cluster_queue: kueue.clusterQueue },
        "CODEPLANE_KUEUE_CLUSTER_QUEUE is set but the cluster serves no Kueue (kueue.x-k8s.io/v1beta2): the built-in limiter admits runs",
      );
    }
    const limiter = new BuiltInLimiter({
      runs,
      jobs,
      defaults: this.#o.limits,
      overrides: () => limitOverrides(this.#o.db),
      // The CPU and memory caps count what compute types request (an unknown one: nothing; its reconcile fails the run).
      requestsOf: (type) => presetRequests(Object.hasOwn(this.#o.computeTypes, type) ? this.#o.computeTypes[type]!.requests : {}),
      analysisRequests: presetRequests(this.#o.computeTypes[this.#o.analysisComputeType]?.requests ?? {}),
      installation,
      metrics: this.#limiterMetrics,
      logger: log,
    });
    this.#limiter = limiter;
    return limiter;
  }

  #archiver(table: WorkloadTable, onComplete: (id: string) => void, onBatch?: ArchiveBatchHook): LogArchiver {
    const { k } = this.#o;
    const logger = this.#o.logger;
    return new LogArchiver({
      rows: logArchiveRows(this.#o.db, table, onBatch),
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

  /**
   * Reconciles the waiting runs the limiter would admit now (a slot was
   * freed), soon and once per burst of events; each is admitted only by its
   * own reconcile, which decides again.
   */
  #wakeAdmissible(queue: WorkQueue, limiter: Admission): void {
    if (this.#kick || this.#stopped) return;
    this.#kick = setTimeout(() => {
      this.#kick = null;
      if (this.#stopped) return;
      for (const name of limiter.admissible()) queue.add(name);
    }, 100);
    this.#kick.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#kick) clearTimeout(this.#kick);
    this.#kick = null;
    this.#limiter?.stop();
    this.#limiter = null;
    this.#limiterMetrics.observe(null);
    await this.#warm?.stop();
    this.#warm = null;
    for (const t of this.#restarts) clearTimeout(t);
    this.#restarts.clear();
    await Promise.all(this.#informers.map((i) => i.stop().catch(() => undefined)));
    this.#informers = [];
    for (const a of this.#archivers) a.stopAll();
    await this.#queue?.stop();
    this.#queue = null;
  }
}
