import type { ObjectCache, V1Job, V1Pod } from "@kubernetes/client-node";
import type { WorkloadRows } from "../domain/workloads/workload-rows.ts";
import type { ClusterActions } from "../k8s/cluster-actions.ts";
import type { WorkloadSpec, WorkloadStatus } from "../k8s/crds/common.ts";
import type { FollowTarget } from "../k8s/pod-log.ts";
import { newestPod } from "../k8s/pods.ts";
import type { Logger } from "../logger.ts";
import { lifecycleConditions, sameStatus } from "./reconcile-support.ts";
import { idFromName, podLabelOf } from "../k8s/crds/lifecycle.ts";
import type { Workload, WorkloadObservation, WorkloadResource } from "./workload.ts";

// Reconciles one workload resource of any kind: gather (the resource, its Job
// and pod from the informer caches), decide (the descriptor's observe), act
// (create what is missing, stop what must stop, write status only when it
// changed, mirror it into Postgres, archive the logs). Every lifecycle rule
// lives here once; the descriptor says only what differs between kinds.

/** The resource client the reconciler needs (CustomResources in src/k8s, or a fake). */
export interface ResourceClient<Spec, Status> {
  readonly namespace: string;
  get(name: string): Promise<WorkloadResource<Spec, Status> | null>;
  /** null when the resource is gone. */
  patchStatus(name: string, status: Status): Promise<WorkloadResource<Spec, Status> | null>;
  delete(name: string): Promise<void>;
}

export interface LogArchive {
  ensure(id: string, target: FollowTarget): void;
  isArchiving(id: string): boolean;
}

export interface WorkloadReconcilerDeps<Spec extends WorkloadSpec, Status extends WorkloadStatus, Obs extends WorkloadObservation> {
  workload: Workload<Spec, Status, Obs>;
  resources: ResourceClient<Spec, Status>;
  rows: WorkloadRows<Spec, Status>;
  cluster: ClusterActions;
  jobs: Pick<ObjectCache<V1Job>, "get">;
  pods: Pick<ObjectCache<V1Pod>, "list">;
  archiver: LogArchive;
  logger: Logger;
  now?: () => Date;
}

export interface ReconcileResult {
  requeueAfterMs?: number;
}

/** While a workload is live, look again this often even without events (deadline backstop). */
export const LIVE_RESYNC_MS = 15_000;

export class WorkloadReconciler<Spec extends WorkloadSpec, Status extends WorkloadStatus, Obs extends WorkloadObservation> {
  readonly #d: WorkloadReconcilerDeps<Spec, Status, Obs>;

  constructor(deps: WorkloadReconcilerDeps<Spec, Status, Obs>) {
    this.#d = deps;
  }

  /** Whether this reconciler owns resources named so. */
  handles(name: string): boolean {
    return idFromName(this.#d.workload, name) !== null;
  }

  async reconcile(name: string): Promise<ReconcileResult> {
    const { workload: w, resources, rows, cluster, logger } = this.#d;
    const resource = await resources.get(name);
    if (!resource) {
      // The resource is gone (deleted through the API or by kubectl): so is the workload.
      const id = idFromName(w, name);
      if (id) await rows.removeGone(id, `${resources.namespace}/${name}`);
      return {};
    }
    if (resource.metadata.deletionTimestamp) return {};
    const { spec } = resource;
    const id = w.idOf(spec);
    if (await rows.isHidden(id)) {
      // Deleted through the API while the resource still existed: finish the job.
      await resources.delete(name);
      return {};
    }
    const log = logger.child({ [w.noun]: name });
    const ns = resource.metadata.namespace;
    const mirror = (status: Status | undefined) =>
      rows.mirror({ namespace: ns, name, createdAt: new Date(resource.metadata.creationTimestamp ?? Date.now()), spec, status });
    const orphaned = async () => {
      log.info(`the ${w.noun} no longer belongs to a live repository and account (or another ${w.noun} holds its place): deleting it`);
      await resources.delete(name);
      return {};
    };
    if ((await mirror(resource.status)) === "orphaned") return orphaned();

    const previous = resource.status;
    // The Job is named after its resource (restrictedJob), so it is found by that name.
    const jobName = name;
    const generation = resource.metadata.generation ?? 0;
    const now = (this.#d.now ?? (() => new Date()))();
    // The cache may lag behind a pod (a controller just started): ask the API server, at most once per reconcile.
    let fromApi: Promise<V1Pod | null> | undefined;
    const label = podLabelOf(w);
    const cached = newestPod(this.#d.pods.list(ns).filter((p) => p.metadata?.labels?.[label] === id));
    const podNow = async () => cached ?? (await (fromApi ??= cluster.newestPod(ns, `${label}=${id}`)));

    // A finished workload never changes again: its status, reason and pod stay
    // as they were written; only a later spec edit is acknowledged.
    let status = previous;
    let pod = cached;
    if (previous && w.lifecycle.isTerminal(previous.phase)) {
      if (previous.observedGeneration !== generation && !(await resources.patchStatus(name, acknowledged(previous, generation)))) return {};
    } else {
      if (!spec.cancelRequested && !this.#d.jobs.get(jobName, ns)) await cluster.createJob(ns, await w.job(resource, cluster));
      const job = this.#d.jobs.get(jobName, ns) ?? null;
      // A Job that has run a pod the cache does not show: deciding "the pod was lost" would be final, so look it up first.
      pod = cached ?? (job && hasRunPods(job) ? await podNow() : null);
      const obs = await w.observe({ resource, job, pod, now, podNow, cluster });

      await w.persist?.(resource, obs);
      if (obs.stopJob && job) await cluster.deleteJob(ns, jobName);

      const next = this.#statusFrom(resource, obs, pod, now);
      if (!sameStatus(previous, next)) {
        const updated = await resources.patchStatus(name, next);
        if (!updated) return {};
        if (previous?.phase !== next.phase) {
          await cluster.recordEvent(
            { kind: w.kind, name, namespace: ns, uid: resource.metadata.uid },
            { reason: obs.reason, warning: next.phase === "failed", note: w.eventNote(next) },
          );
        }
        log.info({ phase: next.phase, exit_code: next.exitCode, error: next.error }, `${w.noun} status changed`);
      }
      if ((await mirror(next)) === "orphaned") return orphaned();
      status = next;
    }

    const terminal = w.lifecycle.isTerminal(status?.phase);
    // Declaring the logs complete is final, so a cache that has not caught up
    // (a controller just started) must not decide it: ask the API server.
    const source = terminal ? await podNow() : pod;
    const main = source?.status?.containerStatuses?.find((c) => c.name === "main");
    if (source && (main?.state?.running || main?.state?.terminated)) {
      this.#d.archiver.ensure(id, { namespace: ns, pod: source.metadata!.name!, container: "main" });
    } else if (terminal && !this.#d.archiver.isArchiving(id)) {
      // The main container never ran (or its pod is gone): nothing more will come.
      await rows.markLogsComplete(id);
    }
    return terminal ? {} : { requeueAfterMs: LIVE_RESYNC_MS };
  }

  #statusFrom(resource: WorkloadResource<Spec, Status>, obs: Obs, pod: V1Pod | null, now: Date): Status {
    const w = this.#d.workload;
    const prev = resource.status;
    const terminal = w.lifecycle.isTerminal(obs.phase);
    const generation = resource.metadata.generation ?? 0;
    const conditions = lifecycleConditions(
      prev?.conditions,
      { noun: w.noun, phase: obs.phase, terminal, reason: obs.reason, error: obs.error, startTime: obs.startTime, started: w.started, generation },
      now,
    );
    const podName = pod?.metadata?.name ?? prev?.podName;
    return {
      phase: obs.phase,
      observedGeneration: generation,
      conditions,
      jobName: resource.metadata.name,
      ...(podName && { podName }),
      // Absent rather than null: a merge patch's null deletes the field, so null would never read back.
      ...(obs.exitCode !== null && { exitCode: obs.exitCode }),
      ...(obs.error !== null && { error: obs.error }),
      ...w.extraStatus?.(obs, prev),
      ...(obs.startTime && { startTime: obs.startTime }),
      ...(terminal && obs.completionTime && { completionTime: obs.completionTime }),
    } as Status;
  }
}

function hasRunPods(job: V1Job): boolean {
  const s = job.status;
  return (s?.active ?? 0) + (s?.succeeded ?? 0) + (s?.failed ?? 0) > 0 || (s?.conditions ?? []).some((c) => c.status === "True" && (c.type === "Complete" || c.type === "Failed"));
}

/** A finished status, unchanged but for the generation it has seen. */
function acknowledged<Status extends WorkloadStatus>(status: Status, generation: number): Status {
  return { ...status, observedGeneration: generation, conditions: status.conditions?.map((c) => ({ ...c, observedGeneration: generation })) };
}
