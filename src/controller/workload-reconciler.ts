import type { ObjectCache, V1Job, V1Pod } from "@kubernetes/client-node";
import { z } from "zod";
import { Unreconcilable } from "../domain/workloads/unreconcilable.ts";
import type { WorkloadRows } from "../domain/workloads/workload-rows.ts";
import type { ClusterActions } from "../k8s/cluster-actions.ts";
import type { WorkloadSpec, WorkloadStatus } from "../resources/common.ts";
import { podLogNumbering, type FollowTarget } from "../k8s/pod-log.ts";
import { newestPod } from "../k8s/pods.ts";
import type { Logger } from "../logger.ts";
import { setCondition } from "../resources/conditions.ts";
import { idFromName, podLabelOf } from "../resources/lifecycle.ts";
import { INSTALLATION_LABEL } from "../resources/labels.ts";
import { lifecycleConditions, sameStatus } from "./reconcile-support.ts";
import { ADMITTED, isAdmitted, QUEUE_RESYNC_MS, type Admission, type AdmissionDecision, type ExternalAdmission } from "./admission.ts";
import { isAdopted, isNotReady, type NotReady, type RetryPlan, type Workload, type WorkloadObservation, type WorkloadResource } from "./workload.ts";

// Reconciles one workload resource of any kind: gather (the resource, its Job
// and pod from the informer caches), decide (the descriptor's observe), act
// (create what is missing, stop what must stop, write status only when it
// changed, mirror it into Postgres, archive the logs). Every lifecycle rule
// lives here once; the descriptor says only what differs between kinds.
//
// It never destroys what it does not know: a resource of another installation
// is not touched, and one its database has no row, repository or account for
// is left running with a condition that says so. Only the API's delete (a
// hidden row) and the retention of finished resources remove a resource.

/** The resource client the reconciler needs (CustomResources in src/k8s, or a fake). */
export interface ResourceClient<Spec, Status> {
  readonly namespace: string;
  get(name: string): Promise<WorkloadResource<Spec, Status> | null>;
  /** null when the resource is gone. */
  patchStatus(name: string, status: Status): Promise<WorkloadResource<Spec, Status> | null>;
  delete(name: string): Promise<void>;
}

export interface LogArchive {
  ensure(id: string, target: FollowTarget, opts?: { holdCompletion?: boolean }): void;
  isArchiving(id: string): boolean;
}

export interface WorkloadMetrics {
  /** A workload was marked failed because it could never be reconciled. */
  unreconcilable(kind: string, reason: string): void;
  /** A workload this installation's database does not know was found (and left alone). */
  untracked(kind: string): void;
}

export interface WorkloadReconcilerDeps<Spec extends WorkloadSpec, Status extends WorkloadStatus, Obs extends WorkloadObservation> {
  workload: Workload<Spec, Status, Obs>;
  resources: ResourceClient<Spec, Status>;
  rows: WorkloadRows<Spec, Status>;
  cluster: ClusterActions;
  jobs: Pick<ObjectCache<V1Job>, "get">;
  pods: Pick<ObjectCache<V1Pod>, "list">;
  archiver: LogArchive;
  /** This installation's identity: resources labelled with another are not ours. */
  installation: string;
  /** A finished resource is deleted this long after it finished (its row and logs stay). */
  retentionSeconds: number;
  metrics: WorkloadMetrics;
  /**
   * Asked before a workload's Job is first created (runs: the account's and
   * the installation's executing limits); absent: every workload is admitted
   * at once (analyses).
   */
  admission?: Admission;
  logger: Logger;
  now?: () => Date;
}

export interface ReconcileResult {
  requeueAfterMs?: number;
}

/** While a workload is live, look again this often even without events (deadline backstop). */
export const LIVE_RESYNC_MS = 15_000;
/** A workload the database does not know is looked at again this often: the database may be restored. */
export const UNTRACKED_RESYNC_MS = 60_000;
/** setTimeout's limit; a longer retention is looked at again before it ends. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/** One reconcile's view of its resource (WorkloadReconciler.#pass). */
interface Pass<Spec, Status> {
  resource: WorkloadResource<Spec, Status>;
  id: string;
  now: Date;
  log: Logger;
  /** The newest pod in the informer cache. */
  cached: V1Pod | null;
  /** The pod, asked of the API server when the cache has none (at most once per reconcile). */
  podNow: () => Promise<V1Pod | null>;
  /** Mirrors a status into the workload's row. */
  mirror: (status: Status | undefined) => Promise<"mirrored" | "orphaned">;
  /** The workload's current Job (a run's later attempt has one of its own). */
  jobName: string;
}

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
    const { workload: w, resources, rows } = this.#d;
    const resource = await resources.get(name);
    if (!resource) {
      // The resource is gone: deleted through the API (its row goes too), or by
      // kubectl or retention (its row stays readable).
      const id = idFromName(w, name);
      if (id) await rows.resourceGone(id, `${resources.namespace}/${name}`);
      return {};
    }
    if (resource.metadata.deletionTimestamp || !this.#ours(resource)) return {};
    try {
      return await this.#reconcile(resource);
    } catch (err) {
      if (!(err instanceof Unreconcilable)) throw err;
      // As it is now, not as this reconcile began: the reconcile may have written its final status
      // before what threw (a finished run whose row cannot be stored), and #fail leaves a finished
      // workload as it is rather than rewriting it as failed and counting it finished twice.
      const current = await resources.get(name);
      if (!current || current.metadata.deletionTimestamp) return {};
      await this.#fail(current, err.reason, err.message, err.expected);
      return {};
    }
  }

  /**
   * Marks the workload failed because reconciling it keeps failing (the
   * controller gives up after a bounded number of attempts). A workload that
   * has finished, is gone or is not ours is left as it is.
   */
  async giveUp(name: string, err: unknown): Promise<void> {
    const resource = await this.#d.resources.get(name);
    if (!resource || resource.metadata.deletionTimestamp || !this.#ours(resource)) return;
    const why = err instanceof Error ? err.message : String(err);
    await this.#fail(resource, "Unreconcilable", `the controller could not reconcile it: ${why}`);
  }

  /** Not labelled, or labelled with this installation (resources made before installations were labelled count as ours). */
  #ours(resource: WorkloadResource<Spec, Status>): boolean {
    const owner = resource.metadata.labels?.[INSTALLATION_LABEL];
    return owner === undefined || owner === this.#d.installation;
  }

  async #reconcile(resource: WorkloadResource<Spec, Status>): Promise<ReconcileResult> {
    const { workload: w, resources, rows } = this.#d;
    const name = resource.metadata.name;
    const parsed = w.specSchema.safeParse(resource.spec);
    if (!parsed.success) throw new Unreconcilable("InvalidSpec", `its spec is invalid: ${z.prettifyError(parsed.error).slice(0, 1000)}`);
    const id = w.idOf(resource.spec);
    if (await rows.isHidden(id)) {
      // Deleted through the API while the resource still existed: finish the job.
      await resources.delete(name);
      return {};
    }
    const log = this.#d.logger.child({ [w.noun]: name });
    const ns = resource.metadata.namespace;
    const mirror = (status: Status | undefined) =>
      rows.mirror({ namespace: ns, name, createdAt: new Date(resource.metadata.creationTimestamp ?? Date.now()), spec: resource.spec, status });
    if ((await mirror(resource.status)) === "orphaned") return this.#untracked(resource, log);
    const pass = this.#pass(resource, id, log, mirror);

    // A finished workload never changes again: its status, reason and pod stay
    // as they were written; only a later spec edit is acknowledged.
    const previous = resource.status;
    let status = previous;
    let pod = pass.cached;
    let requeueAfterMs = LIVE_RESYNC_MS;
    if (previous && w.lifecycle.isTerminal(previous.phase)) {
      if (!(await this.#acknowledge(resource, previous))) return {};
    } else {
      const stepped = await this.#step(pass);
      if (stepped === "gone") return {};
      if (stepped === "orphaned") return this.#untracked(resource, pass.log);
      ({ status, pod } = stepped);
      requeueAfterMs = stepped.requeueAfterMs ?? LIVE_RESYNC_MS;
    }

    const terminal = w.lifecycle.isTerminal(status?.phase);
    await this.#followLogs(pass, terminal, pod);
    if (!terminal) return { requeueAfterMs };
    return this.#retain(resource, status!, pass.now, pass.log);
  }

  /** What one reconcile of a resource works with, gathered once. */
  #pass(resource: WorkloadResource<Spec, Status>, id: string, log: Logger, mirror: Pass<Spec, Status>["mirror"]): Pass<Spec, Status> {
    const { workload: w, cluster } = this.#d;
    const ns = resource.metadata.namespace;
    // The cache may lag behind a pod (a controller just started): ask the API server, at most once per reconcile.
    let fromApi: Promise<V1Pod | null> | undefined;
    const label = podLabelOf(w);
    const jobName = this.#jobName(resource);
    // A later attempt's Job has a name of its own: only its pods count (the lost attempt's may linger, failed).
    const own = (p: V1Pod) => p.metadata?.labels?.[label] === id && (jobName === resource.metadata.name || p.metadata?.labels?.[JOB_NAME_LABEL] === jobName);
    const cached = newestPod(this.#d.pods.list(ns).filter(own));
    const now = this.#now();
    const selector = jobName === resource.metadata.name ? `${label}=${id}` : `${label}=${id},${JOB_NAME_LABEL}=${jobName}`;
    const podNow = async () => cached ?? (await (fromApi ??= cluster.newestPod(ns, selector)));
    return { resource, id, now, log, cached, podNow, mirror, jobName };
  }

  #jobName(resource: WorkloadResource<Spec, Status>): string {
    return this.#d.workload.jobName?.(resource) ?? resource.metadata.name;
  }

  /** A finished workload's status records a later spec edit's generation, and nothing else; false when the resource is gone. */
  async #acknowledge(resource: WorkloadResource<Spec, Status>, previous: Status): Promise<boolean> {
    const generation = resource.metadata.generation ?? 0;
    if (previous.observedGeneration === generation) return true;
    return Boolean(await this.#d.resources.patchStatus(resource.metadata.name, acknowledged(previous, generation)));
  }

  /**
   * One step of a live workload: its Job created if missing, observed, stopped
   * if it must, its status written and mirrored. "gone": the resource went
   * away meanwhile; "orphaned": the database no longer knows it.
   */
  async #step(pass: Pass<Spec, Status>): Promise<{ status: Status; pod: V1Pod | null; requeueAfterMs?: number } | "gone" | "orphaned"> {
    const { workload: w, cluster } = this.#d;
    const { resource, now, podNow } = pass;
    const ns = resource.metadata.namespace;
    const launched = await this.#launch(pass);
    if (!isLaunched(launched)) return launched;
    // The Job is named after its resource (restrictedJob), or after its attempt (a run's retry), or it is
    // one the workload was given (a warm pool's, recorded in its status), so it is found by that name.
    const { jobName } = launched;
    /** When this reconcile's admission decision admitted it (null: not by this reconcile). */
    let admittedNow: Date | null = launched.admittedNow;
    const job = this.#d.jobs.get(jobName, ns) ?? null;
    // With an external engine the Job exists, suspended until the engine admits it: until then the run waits, saying why.
    const engine = await this.#engineSays(resource, job);
    if (engine?.admitted === false) return this.#queued(pass, engine);
    if (engine?.admitted) admittedNow = engine.at;
    // A Job that has run a pod the cache does not show: deciding "the pod was lost" would be final, so look it up first.
    const pod = pass.cached ?? (job && hasRunPods(job) ? await podNow() : null);
    const obs = await w.observe({ resource, job, pod, now, podNow, cluster });
    const plan = w.retry?.(resource, obs, now) ?? null;
    if (plan) return this.#retry(pass, plan, obs, job, pod);

    return this.#settle(pass, obs, { job, pod, jobName, admittedNow });
  }

  /** Acts on what observe found (the workload's own step, a Job to stop), then writes and mirrors the status. */
  async #settle(
    pass: Pass<Spec, Status>,
    obs: Obs,
    at: { job: V1Job | null; pod: V1Pod | null; jobName: string; admittedNow: Date | null },
  ): Promise<{ status: Status; pod: V1Pod | null; requeueAfterMs?: number } | "gone" | "orphaned"> {
    const { workload: w, cluster } = this.#d;
    const { resource, now } = pass;
    const { job, pod, jobName, admittedNow } = at;
    const previous = resource.status;
    const external = this.#d.admission?.external;
    await w.persist?.(resource, obs);
    if (obs.stopJob && job) await cluster.deleteJob(resource.metadata.namespace, jobName);

    // A Job means admitted, but for an external engine's, which waits suspended (a cancelled queued run's never was).
    const extra = w.extraStatus?.(obs, previous, { resource, job: job !== null || admittedNow !== null, now });
    const next = this.#statusFrom(resource, obs, pod, now, extra, admittedNow ?? (job !== null && !external ? now : null), jobName);
    // What the workload needed only to start goes once it has started (or ended), before the status says so.
    if (w.release && releaseDue(w, previous, next)) await w.release(resource, cluster);
    if (!(await this.#write(resource, next, obs.reason, pass.log))) return "gone";
    if (w.lifecycle.isTerminal(next.phase) && !w.lifecycle.isTerminal(previous?.phase)) w.finished?.(resource, next);
    if ((await pass.mirror(next)) === "orphaned") return "orphaned";
    return { status: next, pod, ...(obs.requeueAfterMs !== undefined && { requeueAfterMs: obs.requeueAfterMs }) };
  }

  /** Creates the workload's Job, or takes the one it was given (a warm pool's); its name, or why it must wait. */
  async #makeJob(resource: WorkloadResource<Spec, Status>): Promise<string | NotReady> {
    const made = await this.#d.workload.job(resource, this.#d.cluster);
    if (isNotReady(made)) return made;
    if (isAdopted(made)) return made.jobName;
    await this.#d.cluster.createJob(resource.metadata.namespace, made);
    return made.metadata?.name ?? resource.metadata.name;
  }

  /**
   * The infrastructure lost the attempt and the workload may try again: once the lost attempt's pod
   * has stopped (so nothing it still sends, outputs or lines, mixes with the next attempt's), the
   * next attempt is prepared and recorded in the status, with an Event; its Job is created by the
   * next reconcile, under the name the status now gives, so a restart in between creates it once.
   */
  async #retry(
    pass: Pass<Spec, Status>,
    plan: RetryPlan<Status>,
    obs: Obs,
    job: V1Job | null,
    pod: V1Pod | null,
  ): Promise<{ status: Status; pod: V1Pod | null; requeueAfterMs?: number } | "gone" | "orphaned"> {
    const { workload: w, cluster } = this.#d;
    const { resource, log } = pass;
    const ns = resource.metadata.namespace;
    // A pod waiting for its image forever never ran the command: its Job is stopped once the next
    // attempt is recorded (stopped first, the next reconcile would make it again under its name).
    const stop = obs.stopJob && job !== null;
    const previous = resource.status ?? ({ phase: w.lifecycle.initial } as Status);
    if (!stop && pod && stillRunning(pod)) {
      log.info({ pod: pod.metadata?.name, attempt: plan.attempt }, `waiting for the lost attempt's pod to stop before the ${w.noun} is tried again`);
      return { status: previous, pod, requeueAfterMs: RETRY_WAIT_MS };
    }
    await w.beginAttempt?.(resource, plan);
    const { name, namespace, uid } = resource.metadata;
    const status = this.#requeued(resource, plan);
    const updated = await this.#d.resources.patchStatus(name, status);
    if (!updated) return "gone";
    // A CRD older than retries drops the attempt from the status: the same attempt would be retried forever.
    if (this.#jobName(updated) !== this.#jobName({ ...resource, status: plan.status })) {
      throw new Unreconcilable(
        "OutdatedResourceDefinition",
        `the cluster's ${w.kind} definition does not keep the ${w.noun}'s attempts, so it cannot be retried: apply this version's CRDs (codeplane install)`,
      );
    }
    await cluster.recordEvent({ kind: w.kind, name, namespace, uid }, { reason: plan.reason, warning: true, note: plan.note });
    if (stop) await cluster.deleteJob(ns, pass.jobName);
    log.info({ attempt: plan.attempt, note: plan.note }, `${w.noun} retried`);
    if ((await pass.mirror(status)) === "orphaned") return "orphaned";
    return { status, pod: null, requeueAfterMs: 250 };
  }

  /**
   * The status recording a retry. With an external engine the next attempt goes through it again
   * (Kueue admitted the lost attempt's Job, not this one's): the workload is no longer admitted and
   * waits in its queue, so the next reconcile creates the attempt's Job suspended in it.
   */
  #requeued(resource: WorkloadResource<Spec, Status>, plan: RetryPlan<Status>): Status {
    const external = this.#d.admission?.external;
    if (!external) return plan.status;
    const d = external.created(resource);
    const conditions = setCondition(
      plan.status.conditions,
      {
        type: ADMITTED,
        status: "False",
        reason: d.reason,
        message: `attempt ${plan.attempt} ${d.message}`,
        observedGeneration: resource.metadata.generation ?? 0,
      },
      this.#now(),
    );
    return { ...plan.status, conditions, queue: { reason: d.reason } };
  }

  /**
   * Creates the workload's Job if it has none and may get one: once admitted (or, with an external
   * engine, at once and suspended: the engine admits it); a cancelled one never does. Returns when
   * this reconcile admitted it (null: it did not) and the Job's name (a warm pool's it adopted, or
   * its own), or the step's result when the workload waits.
   */
  async #launch(pass: Pass<Spec, Status>): Promise<Launched | StepResult<Status>> {
    const { admission } = this.#d;
    const { resource } = pass;
    const ns = resource.metadata.namespace;
    const as = { admittedNow: null, jobName: pass.jobName };
    if (resource.spec.cancelRequested || this.#d.jobs.get(pass.jobName, ns)) return as;
    const waiting = !isAdmitted(resource.status);
    if (admission?.external && waiting) return this.#createSuspended(pass, admission.external);
    let admittedNow: Date | null = null;
    if (admission && waiting) {
      const decision = await admission.admit(resource);
      if (!decision.admitted) return this.#queued(pass, decision);
      admittedNow = decision.at;
    }
    const made = await this.#makeJob(resource);
    if (typeof made !== "string") return this.#wait(pass, made, admittedNow);
    return { admittedNow, jobName: made };
  }

  /** What an external engine says of a workload whose Job waits for it; null: no engine, no Job, cancelled or admitted already. */
  async #engineSays(resource: WorkloadResource<Spec, Status>, job: V1Job | null): Promise<AdmissionDecision | null> {
    const external = this.#d.admission?.external;
    if (!external || !job || resource.spec.cancelRequested || isAdmitted(resource.status)) return null;
    return external.observe(resource, job);
  }

  /** An external engine admits (Kueue): the Job is made now as the engine wants it (suspended, in its queue), and the workload waits. */
  async #createSuspended(
    pass: Pass<Spec, Status>,
    external: ExternalAdmission,
  ): Promise<{ status: Status; pod: V1Pod | null; requeueAfterMs: number } | "gone" | "orphaned"> {
    const { resource } = pass;
    // Its turn first (Kueue gets one run per account at a time, in order): nothing is made before.
    const behind = external.handOver(resource);
    if (behind) return this.#queued(pass, behind);
    const made = await this.#d.workload.job(resource, this.#d.cluster);
    // Not admitted either: says so, or the next reconcile would take the phase it writes for admitted (isAdmitted).
    if (isNotReady(made)) return this.#wait(pass, made, null, true);
    // The controller gives no warm pool to workloads an engine admits (controller.ts): a running pod cannot wait in its queue.
    if (isAdopted(made)) throw new Error(`${this.#d.workload.noun} took a running pod while an external engine admits`);
    await this.#d.cluster.createJob(resource.metadata.namespace, await external.prepare(resource, made));
    return this.#queued(pass, external.created(resource));
  }

  /** The workload waits for something its Job needs (its environment's build): say so, and look again soon. */
  async #wait(
    pass: Pass<Spec, Status>,
    waiting: NotReady,
    admittedNow: Date | null,
    notAdmitted = false,
  ): Promise<{ status: Status; pod: V1Pod | null; requeueAfterMs: number } | "gone" | "orphaned"> {
    const { resource, now } = pass;
    const obs: WorkloadObservation = { phase: waiting.phase, reason: waiting.reason, error: null, exitCode: null, stopJob: false };
    let next = this.#statusFrom(resource, obs, null, now, undefined, admittedNow);
    if (notAdmitted) {
      const message = `the ${this.#d.workload.noun} is not in the engine's queue yet: it waits for this first (${waiting.reason})`;
      const admitted = { type: ADMITTED, status: "False" as const, reason: waiting.reason, message, observedGeneration: resource.metadata.generation ?? 0 };
      next = { ...next, conditions: setCondition(next.conditions, admitted, now) };
    }
    if (!(await this.#write(resource, next, obs.reason, pass.log))) return "gone";
    if ((await pass.mirror(next)) === "orphaned") return "orphaned";
    return { status: next, pod: null, requeueAfterMs: waiting.retryAfterMs };
  }

  /**
   * The workload may not start yet (its account has its limit executing): it
   * stays pending with an Admitted=False condition and status.queue saying
   * why, and is looked at again when a slot frees (the controller reconciles
   * the admissible ones) or after QUEUE_RESYNC_MS.
   */
  async #queued(
    pass: Pass<Spec, Status>,
    d: Exclude<AdmissionDecision, { admitted: true }>,
  ): Promise<{ status: Status; pod: V1Pod | null; requeueAfterMs: number } | "gone" | "orphaned"> {
    const { resource, now } = pass;
    const { lifecycle } = this.#d.workload;
    const prev = resource.status;
    // A phase is never taken back (nor is the row's): a run queued after its environment's build, or a later
    // attempt queued again in Kueue (a retry), keeps the phase and start it had and only says it waits.
    const phase = prev?.phase && !lifecycle.isTerminal(prev.phase) ? prev.phase : lifecycle.initial;
    const obs: WorkloadObservation = {
      phase,
      reason: d.reason,
      error: null,
      exitCode: null,
      stopJob: false,
      ...(prev?.startTime && { startTime: prev.startTime }),
    };
    const base = this.#statusFrom(resource, obs, null, now, undefined, null);
    const conditions = setCondition(
      base.conditions,
      { type: ADMITTED, status: "False", reason: d.reason, message: d.message, observedGeneration: resource.metadata.generation ?? 0 },
      now,
    );
    const next = { ...base, conditions, queue: { reason: d.reason } } as Status;
    if (!(await this.#write(resource, next, obs.reason, pass.log))) return "gone";
    if ((await pass.mirror(next)) === "orphaned") return "orphaned";
    return { status: next, pod: null, requeueAfterMs: d.recheckMs ?? QUEUE_RESYNC_MS };
  }

  /** Archives the main container's logs once it has run; marks them complete when it never will. */
  async #followLogs(pass: Pass<Spec, Status>, terminal: boolean, pod: V1Pod | null): Promise<void> {
    const { archiver, rows } = this.#d;
    // Declaring the logs complete is final, so a cache that has not caught up
    // (a controller just started) must not decide it: ask the API server.
    const source = terminal ? await pass.podNow() : pod;
    const main = source?.status?.containerStatuses?.find((c) => c.name === "main");
    if (source && (main?.state?.running || main?.state?.terminated)) {
      archiver.ensure(
        pass.id,
        { namespace: pass.resource.metadata.namespace, pod: source.metadata!.name!, container: "main", ...podLogNumbering(source) },
        { holdCompletion: !terminal && (this.#d.workload.mayContinue?.(pass.resource) ?? false) },
      );
    } else if (terminal && !archiver.isArchiving(pass.id)) {
      // The main container never ran (or its pod is gone): nothing more will come.
      await rows.markLogsComplete(pass.id);
    }
  }

  /** A finished resource is deleted once its retention has passed; its row and logs stay. */
  async #retain(resource: WorkloadResource<Spec, Status>, status: Status, now: Date, log: Logger): Promise<ReconcileResult> {
    const finished = Date.parse(status.completionTime ?? "") || new Date(resource.metadata.creationTimestamp ?? now).getTime();
    const left = finished + this.#d.retentionSeconds * 1000 - now.getTime();
    if (left > 0) return { requeueAfterMs: Math.min(left, MAX_DELAY_MS) };
    log.info({ retention_seconds: this.#d.retentionSeconds }, `the ${this.#d.workload.noun} finished longer ago than the retention: deleting its resource`);
    await this.#d.resources.delete(resource.metadata.name);
    return {};
  }

  /** Patches the status when it changed, with an Event when the phase did; false when the resource is gone. */
  async #write(resource: WorkloadResource<Spec, Status>, next: Status, reason: string, log: Logger): Promise<boolean> {
    const { workload: w, resources, cluster } = this.#d;
    const previous = resource.status;
    if (sameStatus(previous, next)) return true;
    const updated = await resources.patchStatus(resource.metadata.name, next);
    if (!updated) return false;
    const entry = { phase: next.phase, exit_code: next.exitCode, error: next.error };
    if (previous?.phase !== next.phase) {
      const { name, namespace, uid } = resource.metadata;
      await cluster.recordEvent({ kind: w.kind, name, namespace, uid }, { reason, warning: next.phase === "failed", note: w.eventNote(next) });
      log.info(entry, `${w.noun} status changed`);
    } else {
      // The same phase with new details (pod name, conditions): one info line per phase is enough.
      log.debug(entry, `${w.noun} status updated`);
    }
    return true;
  }

  /**
   * The database has no row, repository or account for this workload (a
   * restored or wrong database, another installation's unlabelled resource):
   * leave it and its Job alone, say so once, and look again later.
   */
  async #untracked(resource: WorkloadResource<Spec, Status>, log: Logger): Promise<ReconcileResult> {
    const { workload: w, resources, cluster, metrics } = this.#d;
    const prev = resource.status;
    const tracked = prev?.conditions?.find((c) => c.type === "Tracked");
    if (tracked?.status !== "False") {
      const message = `this installation's database has no ${w.noun}, repository or account for it: left alone (not started, stopped or deleted)`;
      log.warn(message);
      metrics.untracked(w.noun);
      const conditions = setCondition(
        prev?.conditions,
        { type: "Tracked", status: "False", reason: "UnknownToDatabase", message, observedGeneration: resource.metadata.generation ?? 0 },
        this.#now(),
      );
      if (await resources.patchStatus(resource.metadata.name, { ...prev, conditions } as Status)) {
        const { name, namespace, uid } = resource.metadata;
        await cluster.recordEvent({ kind: w.kind, name, namespace, uid }, { reason: "UnknownToDatabase", warning: true, note: message });
      }
    }
    return { requeueAfterMs: UNTRACKED_RESYNC_MS };
  }

  /** Marks a workload that can never be reconciled failed, with a condition, an Event, its row where one can be written, and a metric. */
  async #fail(resource: WorkloadResource<Spec, Status>, reason: string, message: string, expected = false): Promise<void> {
    const { workload: w, rows, cluster, metrics, logger } = this.#d;
    const { name, namespace } = resource.metadata;
    if (w.lifecycle.isTerminal(resource.status?.phase)) return;
    const log = logger.child({ [w.noun]: name });
    if (expected) log.info({ reason, error: message }, `the ${w.noun} failed`);
    else {
      log.warn({ reason, error: message }, `the ${w.noun} cannot be reconciled: marking it failed`);
      metrics.unreconcilable(w.noun, reason);
    }
    const now = this.#now();
    const failed: WorkloadObservation = {
      phase: "failed",
      reason,
      error: message.slice(0, 4000),
      exitCode: null,
      startTime: resource.status?.startTime,
      completionTime: now.toISOString(),
      stopJob: true,
    };
    const jobName = this.#jobName(resource);
    if (this.#d.jobs.get(jobName, namespace)) await cluster.deleteJob(namespace, jobName);
    if (w.release) await w.release(resource, cluster).catch(() => undefined);
    const status = this.#statusFrom(resource, failed, null, now, undefined, null);
    if (!(await this.#write(resource, status, reason, log))) return;
    w.finished?.(resource, status);
    // Best effort: the row may be what cannot be written.
    await rows
      .mirror({ namespace, name, createdAt: new Date(resource.metadata.creationTimestamp ?? now), spec: resource.spec, status })
      .catch((err: unknown) => log.warn({ err: err instanceof Error ? err.message : String(err) }, `the ${w.noun}'s row cannot record the failure`));
  }

  #now(): Date {
    return (this.#d.now ?? (() => new Date()))();
  }

  /** `admitted`: when it was admitted, if its Job was created (or is about to be) by this reconcile or an earlier one. */
  #statusFrom(
    resource: WorkloadResource<Spec, Status>,
    obs: WorkloadObservation,
    pod: V1Pod | null,
    now: Date,
    extra: Partial<Status> | undefined,
    admitted: Date | null,
    jobName: string = this.#jobName(resource),
  ): Status {
    const w = this.#d.workload;
    const prev = resource.status;
    const terminal = w.lifecycle.isTerminal(obs.phase);
    const generation = resource.metadata.generation ?? 0;
    let conditions = lifecycleConditions(
      prev?.conditions,
      { noun: w.noun, phase: obs.phase, terminal, reason: obs.reason, error: obs.error, startTime: obs.startTime, started: w.started, generation },
      now,
    );
    // Known to the database again (restored): say so.
    if (conditions.some((c) => c.type === "Tracked" && c.status === "False")) {
      conditions = setCondition(
        conditions,
        {
          type: "Tracked",
          status: "True",
          reason: "Tracked",
          message: `the ${w.noun} is known to this installation's database`,
          observedGeneration: generation,
        },
        now,
      );
    }
    if (this.#d.admission && admitted && !isAdmitted(prev)) {
      conditions = setCondition(
        conditions,
        {
          type: ADMITTED,
          status: "True",
          reason: "Admitted",
          message: this.#d.admission.external ? `the ${w.noun} was admitted by Kueue: its Job may start` : `the ${w.noun} was admitted: its Job was created`,
          observedGeneration: generation,
        },
        admitted,
      );
    }
    // No longer queued (admitted, or cancelled while waiting): null, as a merge patch deletes the field.
    const unqueued = (prev as { queue?: unknown } | undefined)?.queue ? { queue: null } : {};
    const podName = pod?.metadata?.name ?? prev?.podName;
    return {
      ...unqueued,
      phase: obs.phase,
      observedGeneration: generation,
      conditions,
      jobName,
      ...(podName && { podName }),
      // Absent rather than null: a merge patch's null deletes the field, so null would never read back.
      ...(obs.exitCode !== null && { exitCode: obs.exitCode }),
      ...(obs.error !== null && { error: obs.error }),
      ...extra,
      ...(obs.startTime && { startTime: obs.startTime }),
      ...(terminal && obs.completionTime && { completionTime: obs.completionTime }),
    } as Status;
  }
}

/** What the workload needed only to start may go: it has just started or ended, or a later attempt of it has just started. */
function releaseDue<Status extends WorkloadStatus>(
  w: { lifecycle: { isTerminal(p: string | undefined): boolean }; attemptStarted?(previous: Status | undefined, next: Status): boolean },
  previous: Status | undefined,
  next: Status,
): boolean {
  return startedOrDone(w, next) && (!startedOrDone(w, previous) || (w.attemptStarted?.(previous, next) ?? false));
}

/** The main container has started (startTime is set then), or the workload has finished. */
function startedOrDone(w: { lifecycle: { isTerminal(p: string | undefined): boolean } }, s: WorkloadStatus | undefined): boolean {
  return !!s && (!!s.startTime || w.lifecycle.isTerminal(s.phase));
}

/** The label the Job controller gives its pods (both spellings: the older one is kept for compatibility by Kubernetes). */
const JOB_NAME_LABEL = "job-name";
/** How often a retry looks again while the lost attempt's pod is still stopping. */
export const RETRY_WAIT_MS = 2000;

/** The pod may still write or send something: it is being deleted, or has not reached a final phase. */
function stillRunning(pod: V1Pod): boolean {
  const phase = pod.status?.phase;
  return Boolean(pod.metadata?.deletionTimestamp) || (phase !== "Failed" && phase !== "Succeeded");
}

function hasRunPods(job: V1Job): boolean {
  const s = job.status;
  return (
    (s?.active ?? 0) + (s?.succeeded ?? 0) + (s?.failed ?? 0) > 0 ||
    (s?.conditions ?? []).some((c) => c.status === "True" && (c.type === "Complete" || c.type === "Failed"))
  );
}

/** A finished status, unchanged but for the generation it has seen. */
function acknowledged<Status extends WorkloadStatus>(status: Status, generation: number): Status {
  return { ...status, observedGeneration: generation, conditions: status.conditions?.map((c) => ({ ...c, observedGeneration: generation })) };
}

type StepResult<Status> = { status: Status; pod: V1Pod | null; requeueAfterMs: number } | "gone" | "orphaned";
/** A workload that has (or was given) its Job, or needs none yet: when this reconcile admitted it, and its Job's name. */
type Launched = { admittedNow: Date | null; jobName: string };
const isLaunched = <Status>(x: Launched | StepResult<Status>): x is Launched => typeof x === "object" && "jobName" in x && !("status" in x);
