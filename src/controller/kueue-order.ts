// Submission order within an account on Kueue (design.md, Limits and queueing).
// Kueue orders one LocalQueue's Workloads by their creation time, which the
// API server keeps in whole seconds, and breaks ties by uid (random); it makes
// each Workload when its own reconcile of the Job comes, and codeplane creates
// Jobs from several reconciles at once. So runs submitted within a second or
// two could be admitted in any order (6 of 66 pairs in one e2e run). codeplane
// therefore hands Kueue one run per account at a time: a run's suspended Job
// is created only when no run of its account has a Job Kueue still holds
// (suspended), and only for the account's oldest waiting run (run ids are
// UUIDv7, time-ordered). Kueue still decides which account goes next, among
// the LocalQueues' heads (fair sharing); within an account there is only ever
// one candidate, so it cannot reorder them. The cost: an account whose head
// was just admitted has no run in Kueue until codeplane sees the admission and
// hands over the next (about a second), so two slots freeing at once go to two
// accounts, or to one account a second apart.
//
// Pure: gathered by KueueAdmission (kueue.ts) from the informer caches and the
// handovers it made that the caches do not show yet; table-tested.

/** One of the installation's runs, as far as handing runs to Kueue goes. */
export interface OrderedRun {
  name: string;
  account: string;
  /** Submission order within the account: the run id (UUIDv7, time-ordered). */
  order: string;
  /** Not finished, not being deleted, no cancel requested. */
  live: boolean;
  /** Its status says it was admitted (for its current attempt). */
  admitted: boolean;
  /** Its current attempt's Job: absent, held by Kueue (suspended), or let run. */
  job: "none" | "held" | "running";
  /** Handed to Kueue by this controller; its Job is not in the cache yet. */
  handedOver: boolean;
}

export interface HandoverPlan {
  /** Per account: the run to hand to Kueue now (its oldest waiting run), when none of its runs is in Kueue's hands. */
  next: Map<string, string>;
  /** Per account: the run Kueue holds (or is being given), that the account's other waiting runs are behind. */
  holding: Map<string, string>;
}

/** A run waiting for its (current attempt's) Job: live, not admitted, no Job, not handed over. */
const waiting = (r: OrderedRun) => r.live && !r.admitted && r.job === "none" && !r.handedOver;
/** A run in Kueue's hands: its Job made (or about to be) and still suspended. */
const inKueue = (r: OrderedRun) => r.live && (r.job === "held" || (r.job === "none" && r.handedOver));

export function planHandover(runs: readonly OrderedRun[]): HandoverPlan {
  const holding = new Map<string, string>();
  for (const r of [...runs].sort(byOrder)) if (inKueue(r) && !holding.has(r.account)) holding.set(r.account, r.name);
  const next = new Map<string, string>();
  for (const r of [...runs].sort(byOrder)) {
    if (!waiting(r) || holding.has(r.account) || next.has(r.account)) continue;
    next.set(r.account, r.name);
  }
  return { next, holding };
}

function byOrder(a: OrderedRun, b: OrderedRun): number {
  if (a.order !== b.order) return a.order < b.order ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
