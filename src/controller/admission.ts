import type { V1Job } from "@kubernetes/client-node";
import type { WorkloadSpec, WorkloadStatus } from "../resources/common.ts";
import { findCondition } from "../resources/conditions.ts";
import type { CpuMemory } from "../resources/quantity.ts";
import { setAsideOverCap } from "./over-cap.ts";
import type { WorkloadResource } from "./workload.ts";

// Admission (design.md, Limits and queueing): whether a waiting run may get
// its Job now. The reconciler asks one interface, Admission; the built-in
// limiter (limiter.ts) answers it from the cluster's state for concurrency
// limits, and a Kueue-backed one can answer it instead (creating Jobs
// suspended in the account's LocalQueue and reporting Kueue's reason and
// position) without the reconciler changing. The decision itself is the pure
// function below, table-tested (admission.test.ts): gather (limiter.ts),
// decide (here), act (the reconciler creates the Job or writes the queue).

/**
 * Why a run waits. The built-in limiter's: AccountConcurrency, AccountQuota (its
 * requests would take the account over its CPU or memory cap), ClusterConcurrency.
 * Kueue's (kueue.ts): ClusterQuota (the ClusterQueue's quota is in use),
 * KueuePending (Kueue has not taken it in yet), KueueInadmissible (Kueue cannot
 * admit it as things are: its queue is missing or stopped, or it asks for more
 * than the quota), KueueAdmitting (quota reserved, admission under way).
 */
export type QueueReason =
  "AccountConcurrency" | "AccountQuota" | "ClusterConcurrency" | "ClusterQuota" | "KueuePending" | "KueueInadmissible" | "KueueAdmitting";

export type AdmissionDecision =
  | {
      admitted: true;
      /** When the decision admitting it was taken (the Admitted condition's time). */
      at: Date;
    }
  | {
      admitted: false;
      reason: QueueReason;
      /** What kubectl and the Run's Admitted condition say. */
      message: string;
      /** 1-based, among the account's waiting runs. */
      position: number;
      /** Look again this soon (default QUEUE_RESYNC_MS). */
      recheckMs?: number;
    };

/** A decision that the workload waits. */
export type WaitDecision = Exclude<AdmissionDecision, { admitted: true }>;

export interface Admission {
  /**
   * Whether the workload may get its Job now. An admitted one holds its slot
   * from this moment (before its Job or status is seen), so two reconciles in
   * a row never both take the last slot.
   */
  admit(resource: WorkloadResource<WorkloadSpec, WorkloadStatus>): Promise<AdmissionDecision>;
  /** Resource names of waiting runs that would be admitted now: the controller reconciles them (a slot was freed). */
  admissible(): string[];
  /**
   * Set when an engine outside codeplane admits (Kueue, kueue.ts): then admit
   * is not asked; the Job is created at once as `prepare` makes it (suspended,
   * in the account's queue) and whether it was admitted is read back with
   * `observe` until it says so.
   */
  external?: ExternalAdmission;
}

export interface ExternalAdmission {
  /**
   * Whether the workload's Job may be handed to the engine now (null), or why
   * it waits for its turn first (Kueue gets one run per account at a time, so
   * it admits them in submission order: kueue-order.ts).
   */
  handOver(resource: WorkloadResource<WorkloadSpec, WorkloadStatus>): WaitDecision | null;
  /** The Job as the engine wants it created (suspended, labelled with its queue). */
  prepare(resource: WorkloadResource<WorkloadSpec, WorkloadStatus>, job: V1Job): Promise<V1Job>;
  /** What the run says right after its Job was created: waiting for the engine. */
  created(resource: WorkloadResource<WorkloadSpec, WorkloadStatus>): Exclude<AdmissionDecision, { admitted: true }>;
  /** Whether the engine admitted the run whose Job this is, and if not why it waits. */
  observe(resource: WorkloadResource<WorkloadSpec, WorkloadStatus>, job: V1Job): Promise<AdmissionDecision>;
}

/** The condition a run carries while it waits (False, with the reason) and once it was admitted (True). */
export const ADMITTED = "Admitted";

/** How often a queued run is looked at again without events (a freed slot wakes the admissible ones at once). */
export const QUEUE_RESYNC_MS = 30_000;

/**
 * Whether a workload's status says it was admitted. Without the condition (a
 * run from before admission existed): once it started or went past pending.
 */
export function isAdmitted(status: WorkloadStatus | undefined): boolean {
  const c = findCondition(status?.conditions, ADMITTED);
  if (c) return c.status === "True";
  return Boolean(status?.startTime) || (status?.phase !== undefined && status.phase !== "pending");
}

/** A run that waits for admission. */
export interface WaitingRun {
  name: string;
  account: string;
  /** Submission order within the account: the run id (UUIDv7, time-ordered). */
  order: string;
  /** The CPU (millicores) and memory (bytes) its compute type requests; absent: none counted. */
  requests?: CpuMemory;
}

/** What the decision is made from, gathered from the cluster (and the slots this controller just handed out). */
export interface AdmissionState {
  waiting: readonly WaitingRun[];
  /** Per account: runs admitted and not finished, and analyses with an unfinished Job. */
  executing: ReadonlyMap<string, number>;
  /** Per account: when it last had a run admitted (ms); absent: not that anyone knows. */
  lastAdmitted: ReadonlyMap<string, number>;
  /** The account's executing limit; 0: none. */
  limitOf(account: string): number;
  /** The installation's executing limit; 0: none. */
  total: number;
  /** Per account: CPU and memory its executing runs and analyses request; absent: none. */
  used?: ReadonlyMap<string, CpuMemory>;
  /** The account's caps of CPU and memory requested at once; 0 in either: no cap of it. Absent: none. */
  quotaOf?(account: string): CpuMemory;
}

export interface AdmissionPlan {
  /** Names to admit now, in the order they are admitted. */
  admit: string[];
  /**
   * Runs whose requests exceed one of their account's caps by themselves: they
   * could never start, so they fail (over-cap.ts) and hold nobody back.
   */
  refused: string[];
  /** Every other waiting run: why it waits and its 1-based position among its account's waiting runs. */
  queued: Map<string, { reason: QueueReason; position: number }>;
}

/**
 * Round-robin by account over waiting runs, FIFO within an account: while a
 * slot is free, the account whose last admission is the oldest (one never
 * admitted first) and that is below its own limit has its oldest waiting run
 * admitted. So one account's backlog delays another account's next run by at
 * most one slot's turnover: when a slot frees, the account that has waited
 * longest since its last admission takes it. An account whose oldest waiting
 * run's requests would take it over its CPU or memory cap is passed over
 * (AccountQuota) until its runs free enough; its later runs do not overtake
 * that one, so the account's order holds. A run whose requests exceed a cap by
 * themselves (the cap was lowered after it was queued) is refused instead:
 * it could never start, and waiting for it would hold the account's later
 * runs forever.
 */
export function decideAdmission(s: AdmissionState): AdmissionPlan {
  const byAccount = new Map<string, WaitingRun[]>();
  for (const w of s.waiting) {
    const list = byAccount.get(w.account) ?? [];
    list.push(w);
    byAccount.set(w.account, list);
  }
  for (const list of byAccount.values()) list.sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : a.name < b.name ? -1 : 1));
  // A run over a cap by itself is no one's head: its account's later runs are decided as if it were not there.
  const refused = setAsideOverCap(byAccount, s);

  const free = new Map<string, number>();
  for (const account of byAccount.keys()) {
    const limit = s.limitOf(account);
    free.set(account, limit > 0 ? Math.max(0, limit - (s.executing.get(account) ?? 0)) : Infinity);
  }
  let executingTotal = 0;
  for (const n of s.executing.values()) executingTotal += n;
  let totalFree = s.total > 0 ? Math.max(0, s.total - executingTotal) : Infinity;
  const last = new Map(s.lastAdmitted);
  let clock = Math.max(0, ...last.values());
  const next = new Map<string, number>([...byAccount.keys()].map((a) => [a, 0]));
  const used = new Map([...byAccount.keys()].map((a) => [a, { ...(s.used?.get(a) ?? { cpu: 0, memory: 0 }) }]));
  /** Whether the account's next run fits under its caps with what it already has executing. */
  const fits = (account: string): boolean => {
    const run = byAccount.get(account)![next.get(account)!];
    if (!run?.requests || !s.quotaOf) return true;
    const quota = s.quotaOf(account);
    const u = used.get(account)!;
    return (quota.cpu <= 0 || u.cpu + run.requests.cpu <= quota.cpu) && (quota.memory <= 0 || u.memory + run.requests.memory <= quota.memory);
  };

  const admit: string[] = [];
  while (totalFree > 0) {
    let pick: string | undefined;
    for (const [account, list] of byAccount) {
      const i = next.get(account)!;
      if (i >= list.length || free.get(account)! <= 0 || !fits(account)) continue;
      if (pick === undefined || earlier(account, pick)) pick = account;
    }
    if (pick === undefined) break;
    const i = next.get(pick)!;
    const run = byAccount.get(pick)![i]!;
    admit.push(run.name);
    const u = used.get(pick)!;
    u.cpu += run.requests?.cpu ?? 0;
    u.memory += run.requests?.memory ?? 0;
    next.set(pick, i + 1);
    free.set(pick, free.get(pick)! - 1);
    totalFree--;
    last.set(pick, ++clock);
  }

  const queued = new Map<string, { reason: QueueReason; position: number }>();
  for (const [account, list] of byAccount) {
    const start = next.get(account)!;
    const reason: QueueReason = free.get(account)! <= 0 ? "AccountConcurrency" : !fits(account) ? "AccountQuota" : "ClusterConcurrency";
    for (let i = start; i < list.length; i++) queued.set(list[i]!.name, { reason, position: i - start + 1 });
  }
  return { admit, refused, queued };

  /** Whether account a comes before b: its last admission is older, then its oldest waiting run is. */
  function earlier(a: string, b: string): boolean {
    const la = last.get(a) ?? -Infinity;
    const lb = last.get(b) ?? -Infinity;
    if (la !== lb) return la < lb;
    const ha = byAccount.get(a)![next.get(a)!]!.order;
    const hb = byAccount.get(b)![next.get(b)!]!.order;
    return ha !== hb ? ha < hb : a < b;
  }
}

/** The milliseconds since the epoch a UUIDv7 was made at (its first 48 bits); null for another kind of id. */
export function uuidv7Time(id: string): number | null {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-7/i.test(id)) return null;
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}
