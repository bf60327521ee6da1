import type { V1Job } from "@kubernetes/client-node";
import { Unreconcilable } from "../domain/workloads/unreconcilable.ts";
import { isAlreadyExists, isNotFound, type KubeClients } from "../k8s/client.ts";
import type { Logger } from "../logger.ts";
import type { WorkloadSpec, WorkloadStatus } from "../resources/common.ts";
import { INSTALLATION_LABEL, MANAGED_BY } from "../resources/labels.ts";
import { RUN_LIFECYCLE } from "../resources/run.ts";
import { isAdmitted, type Admission, type AdmissionDecision, type ExternalAdmission, type QueueReason, type WaitDecision } from "./admission.ts";
import { planHandover, type HandoverPlan, type OrderedRun } from "./kueue-order.ts";
import type { WorkloadResource } from "./workload.ts";

// Kueue as the admission engine (design.md, Limits and queueing; docs/operators/limits.md).
// Where Kueue is installed and the operator names a ClusterQueue, a run's Job is
// created at once, suspended, labelled with its account's LocalQueue (one per
// account, made and labelled by codeplane, pointing at that ClusterQueue), and
// Kueue decides when it starts: it unsuspends the Job once it admits its
// Workload. codeplane reads Kueue's answer from the Job (suspended or not) and
// the Workload Kueue made for it (why it waits), and reports it through the
// same queue fields as the built-in limiter: status.queue.reason, the
// Admitted condition, and the position the API derives among the account's
// queued runs. Runs are handed to Kueue one per account at a time, in
// submission order (kueue-order.ts), so that position is the order Kueue
// admits them in.

export const KUEUE_GROUP = "kueue.x-k8s.io";
export const KUEUE_API_VERSION = "v1beta2";
/** The label that puts a Job in a LocalQueue. */
export const QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name";
/** The label Kueue puts on the Workload it makes for a Job: the Job's uid. */
export const JOB_UID_LABEL = "kueue.x-k8s.io/job-uid";
const ACCOUNT_LABEL = "codeplane.dev/account";

/** A run with no Workload yet is looked at again this soon (Kueue makes one within a second or so). */
export const KUEUE_PENDING_RECHECK_MS = 3000;
/** A run Kueue holds back is looked at again this often: its reason may change without its Job changing. */
export const KUEUE_QUEUED_RECHECK_MS = 10_000;

/** The LocalQueue of an account: one per account and installation. */
export function localQueueName(installation: string, accountId: string): string {
  // Both are UUIDs: "cp-" + 8 + "-" + 36 characters, well within a label value's 63.
  return `cp-${installation.slice(0, 8)}-${accountId}`;
}

export interface KueueLocalQueue {
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec: { clusterQueue: string };
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface KueueWorkload {
  metadata: { name: string; creationTimestamp?: string };
  status?: { conditions?: Condition[] };
}

/** The Kueue calls codeplane makes, in the run namespace (the chart's Role grants exactly these). */
export interface KueueApi {
  getLocalQueue(namespace: string, name: string): Promise<KueueLocalQueue | null>;
  createLocalQueue(namespace: string, queue: KueueLocalQueue): Promise<void>;
  /** Deletes the LocalQueue (its ClusterQueue cannot be changed in place); one already gone counts as deleted. */
  deleteLocalQueue(namespace: string, name: string): Promise<void>;
  /** The Workloads Kueue made for the Job with this uid (one, or none yet). */
  workloadsOfJob(namespace: string, jobUid: string): Promise<KueueWorkload[]>;
}

export function kueueApi(k: KubeClients): KueueApi {
  const base = { group: KUEUE_GROUP, version: KUEUE_API_VERSION };
  return {
    async getLocalQueue(namespace, name) {
      try {
        return (await k.custom.getNamespacedCustomObject({ ...base, namespace, plural: "localqueues", name })) as KueueLocalQueue;
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    },
    async createLocalQueue(namespace, queue) {
      try {
        await k.custom.createNamespacedCustomObject({
          ...base,
          namespace,
          plural: "localqueues",
          body: { apiVersion: `${KUEUE_GROUP}/${KUEUE_API_VERSION}`, kind: "LocalQueue", ...queue },
        });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
    },
    async deleteLocalQueue(namespace, name) {
      try {
        await k.custom.deleteNamespacedCustomObject({ ...base, namespace, plural: "localqueues", name });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    },
    async workloadsOfJob(namespace, jobUid) {
      const list = (await k.custom.listNamespacedCustomObject({ ...base, namespace, plural: "workloads", labelSelector: `${JOB_UID_LABEL}=${jobUid}` })) as {
        items?: KueueWorkload[];
      };
      return list.items ?? [];
    },
  };
}

/** Whether the cluster serves Kueue's LocalQueues and Workloads (its CRDs are installed). */
export async function kueueInstalled(k: Pick<KubeClients, "custom">): Promise<boolean> {
  try {
    const list = await k.custom.getAPIResources({ group: KUEUE_GROUP, version: KUEUE_API_VERSION });
    const names = new Set(list.resources.map((r) => r.name));
    return names.has("localqueues") && names.has("workloads");
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

export interface KueueAdmissionDeps {
  api: KueueApi;
  /** The ClusterQueue every account's LocalQueue points at (CODEPLANE_KUEUE_CLUSTER_QUEUE). */
  clusterQueue: string;
  /** A run waiting longer than this fails (its tokens were made for this long: CODEPLANE_KUEUE_MAX_WAIT_SECONDS). */
  maxWaitSeconds: number;
  installation: string;
  /** Run resources (the informer's cache): whose turn it is to be handed to Kueue. */
  runs(): readonly Resource[];
  /** Jobs (the informer's cache). */
  jobs(): readonly V1Job[];
  /** A run's current attempt's Job name (runJobName). */
  jobName(run: Resource): string;
  logger: Logger;
  now?: () => number;
}

type Resource = WorkloadResource<WorkloadSpec, WorkloadStatus>;

/** What Kueue's Workload says about a run it has not admitted: codeplane's reason and Kueue's message. */
export function kueueWaitReason(workload: KueueWorkload | undefined, queue: string): { reason: QueueReason; message: string } {
  if (!workload) return { reason: "KueuePending", message: `queued: waiting for Kueue to take its Job in (LocalQueue ${queue})` };
  const conditions = workload.status?.conditions ?? [];
  const cond = (type: string) => conditions.find((c) => c.type === type);
  const reserved = cond("QuotaReserved");
  const kueueSays = (c: Condition | undefined) => (c?.message ? `Kueue: ${c.message}` : "");
  if (reserved?.status === "True") {
    // Quota is held; admission checks (or the Job's unsuspension) are what is left.
    return { reason: "KueueAdmitting", message: `queued: Kueue reserved its quota and is admitting it. ${kueueSays(cond("Admitted"))}`.trim() };
  }
  if (reserved?.reason === "Inadmissible") {
    return { reason: "KueueInadmissible", message: `queued: Kueue cannot admit it as things are (LocalQueue ${queue}). ${kueueSays(reserved)}`.trim() };
  }
  if (reserved) return { reason: "ClusterQuota", message: `queued: the cluster queue's quota is in use; accounts take turns. ${kueueSays(reserved)}`.trim() };
  // In Kueue's queue with no verdict: behind runs that wait for quota (StrictFIFO looks at the head only).
  return { reason: "ClusterQuota", message: `queued: in Kueue's queue behind earlier runs (LocalQueue ${queue}); accounts take turns` };
}

/**
 * Admission by Kueue. A run's Job is made suspended in its account's
 * LocalQueue (prepare), which is created on the account's first run and
 * pointed at the operator's ClusterQueue; a Job Kueue has unsuspended is
 * admitted (observe), one still suspended waits with the reason its Workload
 * gives. Nothing is decided here: Kueue decides, from its quotas and its fair
 * sharing between the accounts' LocalQueues.
 */
export class KueueAdmission implements Admission, ExternalAdmission {
  readonly #d: KueueAdmissionDeps;
  /** LocalQueues known to exist and point at the ClusterQueue (namespace/name). */
  readonly #ensured = new Set<string>();
  /** Runs handed to Kueue (their Job being made) that the Job cache does not show yet: name → account. */
  readonly #handed = new Map<string, string>();

  constructor(deps: KueueAdmissionDeps) {
    this.#d = deps;
  }

  /** The reconciler asks this instead of admit (admission.ts). */
  get external(): ExternalAdmission {
    return this;
  }

  /** Not asked with `external` set; a run it were asked about waits for Kueue. */
  admit(resource: Resource): Promise<AdmissionDecision> {
    return Promise.resolve(this.created(resource));
  }

  /** Kueue wakes the runs it admits (their Jobs change); codeplane wakes each account's next run to hand over. */
  admissible(): string[] {
    return [...this.#plan().next.values()];
  }

  /**
   * Whether the run's Job may be handed to Kueue now (null), or why it waits:
   * one run per account is in Kueue's hands at a time, the oldest first
   * (kueue-order.ts). Nothing awaits between the decision and recording the
   * handover, so two reconciles at once never both hand one over.
   */
  handOver(resource: Resource): WaitDecision | null {
    const name = resource.metadata.name;
    const account = resource.spec.accountId;
    // Handed over already (making its Job failed and is tried again): it keeps its turn.
    if (this.#handed.has(name)) return null;
    const plan = this.#plan(resource);
    if (plan.next.get(account) === name) {
      this.#handed.set(name, account);
      return null;
    }
    return this.#behind(resource, plan);
  }

  queueOf(accountId: string): string {
    return localQueueName(this.#d.installation, accountId);
  }

  async prepare(resource: Resource, job: V1Job): Promise<V1Job> {
    const ns = resource.metadata.namespace;
    const queue = this.queueOf(resource.spec.accountId);
    await this.#ensureQueue(ns, queue, resource.spec.accountId);
    return {
      ...job,
      metadata: { ...job.metadata, labels: { ...job.metadata?.labels, [QUEUE_NAME_LABEL]: queue } },
      spec: { ...job.spec!, suspend: true },
    };
  }

  created(resource: Resource): Exclude<AdmissionDecision, { admitted: true }> {
    const { reason, message } = kueueWaitReason(undefined, this.queueOf(resource.spec.accountId));
    return { admitted: false, reason, message, position: 1, recheckMs: KUEUE_PENDING_RECHECK_MS };
  }

  async observe(resource: Resource, job: V1Job): Promise<AdmissionDecision> {
    const queue = this.queueOf(resource.spec.accountId);
    const workloads = job.metadata?.uid ? await this.#d.api.workloadsOfJob(resource.metadata.namespace, job.metadata.uid) : [];
    const workload = workloads[0];
    if (job.spec?.suspend === false) {
      // Kueue unsuspends a Job only once it admitted its Workload: when it did is the Admitted condition's time.
      const admitted = workload?.status?.conditions?.find((c) => c.type === "Admitted" && c.status === "True");
      const at = Date.parse(admitted?.lastTransitionTime ?? "");
      return { admitted: true, at: new Date(Number.isNaN(at) ? this.#now() : at) };
    }
    // The wait that matters is the Job's: its tokens were made with it (a run may wait for its turn before).
    const created = new Date(job.metadata?.creationTimestamp ?? resource.metadata.creationTimestamp ?? this.#now()).getTime();
    if (this.#now() - created > this.#d.maxWaitSeconds * 1000) {
      throw new Unreconcilable(
        "QueueTimeout",
        `Kueue did not admit it within ${this.#d.maxWaitSeconds}s (CODEPLANE_KUEUE_MAX_WAIT_SECONDS); its last reason: ${kueueWaitReason(workload, queue).message}`,
        { expected: true },
      );
    }
    const { reason, message } = kueueWaitReason(workload, queue);
    return { admitted: false, reason, message, position: 1, recheckMs: workload ? KUEUE_QUEUED_RECHECK_MS : KUEUE_PENDING_RECHECK_MS };
  }

  async #ensureQueue(namespace: string, name: string, accountId: string): Promise<void> {
    const key = `${namespace}/${name}`;
    if (this.#ensured.has(key)) return;
    const { api, clusterQueue, installation } = this.#d;
    const existing = await api.getLocalQueue(namespace, name);
    if (existing && existing.spec.clusterQueue !== clusterQueue) {
      // The operator named another ClusterQueue. A LocalQueue's cannot change, so it is made again;
      // its waiting Workloads name the queue, and Kueue takes them up again once it is back.
      await api.deleteLocalQueue(namespace, name);
      this.#d.logger.info(
        { local_queue: name, cluster_queue: clusterQueue, was: existing.spec.clusterQueue },
        "re-creating the account's LocalQueue for the configured ClusterQueue",
      );
    }
    if (!existing || existing.spec.clusterQueue !== clusterQueue) {
      await api.createLocalQueue(namespace, {
        metadata: { name, namespace, labels: { ...MANAGED_BY, [INSTALLATION_LABEL]: installation, [ACCOUNT_LABEL]: accountId } },
        spec: { clusterQueue },
      });
      this.#d.logger.info({ local_queue: name, cluster_queue: clusterQueue }, "created the account's Kueue LocalQueue");
    }
    // One being deleted may still have been there to create: only a queue seen as it should be is taken as done.
    if (!existing || existing.spec.clusterQueue === clusterQueue) this.#ensured.add(key);
  }

  /** Why a run that is not the account's next to hand over waits, and its place among the account's waiting runs. */
  #behind(resource: Resource, plan: HandoverPlan): WaitDecision {
    const account = resource.spec.accountId;
    const queue = this.queueOf(account);
    const holder = plan.holding.get(account);
    const id = idOf(resource.metadata.name);
    // Its place among the account's runs Kueue has not let run, the one in Kueue's hands included.
    const ahead = this.#gather(resource).filter((r) => r.account === account && r.live && !r.admitted && r.job !== "running" && r.order < id);
    const position = ahead.length + 1;
    if (!holder) {
      const message = `queued: behind the account's earlier runs, which are handed to Kueue one at a time in submission order (LocalQueue ${queue})`;
      return { admitted: false, reason: "ClusterQuota", message, position };
    }
    const held = this.#d.runs().find((r) => r.metadata.name === holder);
    // A head Kueue cannot admit holds the account's other runs back for the same reason.
    const heldReason = (held?.status as { queue?: { reason?: string } } | undefined)?.queue?.reason;
    const reason: QueueReason = heldReason === "KueueInadmissible" ? "KueueInadmissible" : "ClusterQuota";
    const message = `queued: behind the account's run ${holder.replace(/^run-/, "")}, which Kueue holds (LocalQueue ${queue}); runs are handed to Kueue one at a time per account, in submission order`;
    return { admitted: false, reason, message, position };
  }

  #plan(current?: Resource): HandoverPlan {
    return planHandover(this.#gather(current));
  }

  /** The installation's runs as the handover sees them, from the caches and this controller's handovers. */
  #gather(current?: Resource): OrderedRun[] {
    const jobs = new Map(this.#d.jobs().map((j) => [j.metadata?.name, j]));
    // The reconciled run as its reconcile read it: the cache may not show its last status yet (a retry's, not admitted).
    const runs = current ? [current, ...this.#d.runs().filter((r) => r.metadata.name !== current.metadata.name)] : [...this.#d.runs()];
    const out: OrderedRun[] = [];
    const seen = new Set<string>();
    for (const run of runs) {
      const owner = run.metadata.labels?.[INSTALLATION_LABEL];
      if ((owner !== undefined && owner !== this.#d.installation) || seen.has(run.metadata.name)) continue;
      seen.add(run.metadata.name);
      const live = !RUN_LIFECYCLE.isTerminal(run.status?.phase) && !run.metadata.deletionTimestamp && !run.spec.cancelRequested;
      const job = jobs.get(this.#d.jobName(run));
      // The cache shows the Job (or the run will never get one): the handover has done its work.
      if (job || !live) this.#handed.delete(run.metadata.name);
      out.push({
        name: run.metadata.name,
        account: run.spec.accountId,
        order: idOf(run.metadata.name),
        live,
        admitted: isAdmitted(run.status),
        job: !job ? "none" : job.spec?.suspend === true && !jobFinished(job) ? "held" : "running",
        handedOver: this.#handed.has(run.metadata.name),
      });
    }
    // A handed-over run the cache no longer has is gone.
    for (const name of this.#handed.keys()) if (!seen.has(name)) this.#handed.delete(name);
    return out;
  }

  #now(): number {
    return (this.#d.now ?? Date.now)();
  }
}

/** The run id in a resource name (run-<id>): UUIDv7, time-ordered. */
const idOf = (name: string) => name.replace(/^run-/, "");
const jobFinished = (job: V1Job) => (job.status?.conditions ?? []).some((c) => c.status === "True" && (c.type === "Complete" || c.type === "Failed"));
