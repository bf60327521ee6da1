import type { V1Job } from "@kubernetes/client-node";
import { Gauge, Histogram, type Registry } from "prom-client";
import type { Limits } from "../domain/limits/limits.ts";
import { Unreconcilable } from "../domain/workloads/unreconcilable.ts";
import type { Logger } from "../logger.ts";
import type { WorkloadSpec, WorkloadStatus } from "../resources/common.ts";
import { findCondition } from "../resources/conditions.ts";
import { INSTALLATION_LABEL } from "../resources/labels.ts";
import { formatCpu, formatMemory, type CpuMemory } from "../resources/quantity.ts";
import { RUN_LIFECYCLE, RUN_PHASES } from "../resources/run.ts";
import { ADMITTED, decideAdmission, isAdmitted, uuidv7Time, type Admission, type AdmissionDecision, type AdmissionPlan, type WaitingRun } from "./admission.ts";
import { accountSeries } from "./account-series.ts";
import { OVER_CAP_REASON, overCapMessage } from "./over-cap.ts";
import type { WorkloadResource } from "./workload.ts";

// The built-in limiter (no Kueue): admits waiting runs within each account's
// executing limit, its caps of CPU and memory requested at once (what the
// runs' compute types request; analyses count what the analysis compute type
// does) and the installation's executing limit, round-robin across accounts and in
// order within one (admission.ts decides). Its state is the cluster's, read
// from the controller's informer caches on every decision: a run is executing
// once its status says Admitted (or it has a Job) until it finishes, an
// analysis while its Job has not finished. So a restarted controller, or a
// new leader, decides from what is there. The only memory is the slots it
// has just handed out and the cache has not shown yet, and the exact time of
// recent admissions (the cluster's have whole seconds).

type Resource = WorkloadResource<WorkloadSpec, WorkloadStatus>;

export interface LimiterDeps {
  /** Run resources (the informer's cache). */
  runs(): readonly Resource[];
  /** Jobs of every workload kind (the informer's cache). */
  jobs(): readonly V1Job[];
  defaults: Limits;
  /** Every account's overrides (null or absent: the default); read again at most every OVERRIDES_TTL_MS. */
  overrides(): Promise<Map<string, Overrides>>;
  /** What a run of this compute type requests (an unknown one: nothing, its reconcile fails it). Absent: CPU and memory are not counted. */
  requestsOf?(computeType: string): CpuMemory;
  /** What an analysis's pod requests (the analysis compute type's). */
  analysisRequests?: CpuMemory;
  installation: string;
  metrics: LimiterMetrics;
  logger: Logger;
  now?: () => number;
}

type Overrides = { executing: number | null; cpu?: number | null; memory?: number | null };

export const OVERRIDES_TTL_MS = 5000;
/** How many accounts get their own series of the queue length; the rest are summed as account="other". */
export const QUEUE_METRIC_ACCOUNTS = 20;

export class BuiltInLimiter implements Admission {
  readonly #d: LimiterDeps;
  /** Slots handed out that the Run cache does not show yet: name → its account and when it was admitted. */
  readonly #reserved = new Map<string, { account: string; at: Date }>();
  /** Recent admissions per account, in ms. */
  readonly #lastAdmitted = new Map<string, number>();
  #overrides = new Map<string, Overrides>();
  #overridesAt = -Infinity;

  constructor(deps: LimiterDeps) {
    this.#d = deps;
    deps.metrics.observe(() => this.#snapshot());
  }

  /** The controller stopped (lost the lease): its caches say nothing any more. */
  stop(): void {
    this.#d.metrics.observe(null);
  }

  async admit(resource: Resource): Promise<AdmissionDecision> {
    const name = resource.metadata.name;
    // Admitted already, its Job not made yet (creating it failed and is retried): it keeps its slot.
    const reserved = this.#reserved.get(name);
    if (reserved) return { admitted: true, at: reserved.at };
    await this.#refreshOverrides();
    // From here to the reservation nothing awaits: no other reconcile decides in between.
    let plan = this.#plan(resource);
    if (plan.refused.includes(name)) {
      // Failing a run is for good, so it is decided on the caps as they are now, never on a
      // cached read (a cap raised a moment ago, which the API already checked the run against)
      // or on the defaults when the overrides could not be read: until a read succeeds, it waits.
      if (!(await this.#refreshOverrides(true))) {
        return { admitted: false, reason: "AccountQuota", message: this.#message("AccountQuota", resource), position: 1 };
      }
      plan = this.#plan(resource);
    }
    if (plan.refused.includes(name)) {
      const computeType = (resource.spec as { computeType?: string }).computeType ?? "";
      throw new Unreconcilable(OVER_CAP_REASON, overCapMessage(computeType, this.#requestsOf(resource), this.#quotaOf(resource.spec.accountId)), {
        expected: true,
      });
    }
    if (plan.admit.includes(name)) {
      // The whole decision is taken at once: every run it admits holds its slot now, in
      // order, so one whose reconcile comes first cannot take a slot decided for another.
      const now = this.#now();
      const at = new Date(now);
      const accounts = new Map(this.#d.runs().map((r) => [r.metadata.name, r.spec.accountId]));
      accounts.set(name, resource.spec.accountId);
      for (const [i, admitted] of plan.admit.entries()) {
        const account = accounts.get(admitted);
        if (!account) continue;
        this.#reserved.set(admitted, { account, at });
        // In the decision's order, so the next turn goes to the account admitted longest ago.
        this.#lastAdmitted.set(account, now + i / 1000);
        const created = uuidv7Time(idOf(admitted));
        if (created !== null) this.#d.metrics.admitted(Math.max(0, now - created) / 1000);
      }
      return { admitted: true, at };
    }
    const q = plan.queued.get(name) ?? { reason: "AccountConcurrency" as const, position: 1 };
    return { admitted: false, reason: q.reason, message: this.#message(q.reason, resource), position: q.position };
  }

  /** What kubectl and the Admitted condition say of a queued run. */
  #message(reason: string, resource: Resource): string {
    const account = resource.spec.accountId;
    if (reason === "AccountConcurrency")
      return `queued: the account has its limit of ${this.#limitOf(account)} runs and analyses executing (limit 'executing' per account)`;
    if (reason === "AccountQuota") {
      const cap = this.#quotaOf(account);
      const asks = this.#requestsOf(resource);
      const caps = [cap.cpu > 0 && `${formatCpu(cap.cpu)} CPU`, cap.memory > 0 && `${formatMemory(cap.memory)} memory`].filter(Boolean).join(" and ");
      return `queued: this run's requests (${formatCpu(asks.cpu)} CPU, ${formatMemory(asks.memory)} memory) would take the account over its cap of ${caps} requested at once (limits 'cpu' and 'memory' per account)`;
    }
    return `queued: the installation has its limit of ${this.#d.defaults.executingTotal} runs and analyses executing; accounts take turns`;
  }

  /** The runs to reconcile now: those a slot was freed for, and those over a cap by themselves (they fail). */
  admissible(): string[] {
    const plan = this.#plan();
    return [...plan.admit, ...plan.refused];
  }

  /** Reads the accounts' overrides when the last read is older than its TTL (or always, `fresh`); false when the read failed. */
  async #refreshOverrides(fresh = false): Promise<boolean> {
    if (!fresh && this.#now() - this.#overridesAt < OVERRIDES_TTL_MS) return true;
    try {
      this.#overrides = await this.#d.overrides();
      this.#overridesAt = this.#now();
      return true;
    } catch (err) {
      // The defaults and the last overrides read still hold; the next decision tries again.
      this.#d.logger.warn({ err: err instanceof Error ? err.message : String(err) }, "could not read the accounts' limits");
      return false;
    }
  }

  #limitOf(account: string): number {
    return this.#overrides.get(account)?.executing ?? this.#d.defaults.executingPerAccount;
  }

  #quotaOf(account: string): CpuMemory {
    const o = this.#overrides.get(account);
    return { cpu: o?.cpu ?? this.#d.defaults.cpuPerAccount, memory: o?.memory ?? this.#d.defaults.memoryPerAccount };
  }

  #requestsOf(run: Resource): CpuMemory {
    const computeType = (run.spec as { computeType?: string }).computeType;
    return computeType && this.#d.requestsOf ? this.#d.requestsOf(computeType) : NONE;
  }

  /** Gather (the caches and this limiter's reservations) and decide; `current` is counted even when the cache lags behind it. */
  #plan(current?: Resource): AdmissionPlan {
    const s = this.#snapshot(current);
    return decideAdmission({ ...s, limitOf: (a) => this.#limitOf(a), quotaOf: (a) => this.#quotaOf(a), total: this.#d.defaults.executingTotal });
  }

  #snapshot(current?: Resource) {
    const ours = (labels: Record<string, string> | undefined) => {
      const owner = labels?.[INSTALLATION_LABEL];
      return owner === undefined || owner === this.#d.installation;
    };
    const state: Gathered = { executing: new Map(), used: new Map(), lastAdmitted: new Map(this.#lastAdmitted), waiting: [], byPhase: new Map() };
    const jobs = this.#d.jobs();
    const jobNames = new Set(jobs.map((j) => j.metadata?.name));
    const runs = [...this.#d.runs()];
    if (current && !runs.some((r) => r.metadata.name === current.metadata.name)) runs.push(current);
    const seen = new Set<string>();
    for (const run of runs) {
      if (!ours(run.metadata.labels) || seen.has(run.metadata.name)) continue;
      seen.add(run.metadata.name);
      this.#gatherRun(run, jobNames, state);
    }
    // A reserved run the cache no longer has is gone.
    for (const name of this.#reserved.keys()) if (!seen.has(name)) this.#reserved.delete(name);
    // Analyses are never held back, but count against their account while their Job runs.
    for (const job of jobs) {
      const labels = job.metadata?.labels;
      const account = labels?.["codeplane.dev/account"];
      if (labels?.["app.kubernetes.io/component"] === "analysis" && ours(labels) && account && !jobFinished(job)) {
        count(state.executing, account);
        add(state.used, account, this.#d.analysisRequests ?? NONE);
      }
    }
    return state;
  }

  /** One run's part: its phase, its account's last admission, and whether it executes, waits or neither. */
  #gatherRun(run: Resource, jobNames: ReadonlySet<string | undefined>, state: Gathered): void {
    const name = run.metadata.name;
    const account = run.spec.accountId;
    const admitted = isAdmitted(run.status);
    count(state.byPhase, run.status?.phase ?? "pending");
    const admittedAt = Date.parse(findCondition(run.status?.conditions, ADMITTED)?.lastTransitionTime ?? "");
    if (admitted && admittedAt > (state.lastAdmitted.get(account) ?? -Infinity)) state.lastAdmitted.set(account, admittedAt);
    const finished = RUN_LIFECYCLE.isTerminal(run.status?.phase) || Boolean(run.metadata.deletionTimestamp);
    // The cache shows what was reserved: the reservation has done its work.
    if (finished || admitted) this.#reserved.delete(name);
    if (finished) return;
    const requests = this.#requestsOf(run);
    if (admitted || this.#reserved.has(name) || jobNames.has(name)) {
      count(state.executing, account);
      add(state.used, account, requests);
    } else if (!run.spec.cancelRequested) state.waiting.push({ name, account, order: idOf(name), requests });
  }

  #now(): number {
    return (this.#d.now ?? Date.now)();
  }
}

interface Gathered {
  waiting: WaitingRun[];
  executing: Map<string, number>;
  used: Map<string, CpuMemory>;
  lastAdmitted: Map<string, number>;
  byPhase: Map<string, number>;
}

const count = (m: Map<string, number>, key: string) => m.set(key, (m.get(key) ?? 0) + 1);
const NONE: CpuMemory = { cpu: 0, memory: 0 };
const add = (m: Map<string, CpuMemory>, key: string, r: CpuMemory) => {
  const u = m.get(key) ?? { cpu: 0, memory: 0 };
  m.set(key, { cpu: u.cpu + r.cpu, memory: u.memory + r.memory });
};
const jobFinished = (job: V1Job) => (job.status?.conditions ?? []).some((c) => c.status === "True" && (c.type === "Complete" || c.type === "Failed"));

/** The run id in a resource name (run-<id>). */
const idOf = (name: string) => name.replace(/^run-/, "");

/** What the limiter's gauges read at scrape time. */
export interface LimiterSnapshot {
  waiting: readonly WaitingRun[];
  byPhase: ReadonlyMap<string, number>;
  /** Per account: CPU (millicores) and memory (bytes) its executing runs and analyses request. */
  used: ReadonlyMap<string, CpuMemory>;
}

export interface LimiterMetrics {
  /** A run was admitted this long after it was created. */
  admitted(seconds: number): void;
  /** Where the gauges read the limiter's state from at scrape time. */
  observe(snapshot: (() => LimiterSnapshot) | null): void;
}

/**
 * The limiter's series: runs by status, queue length and CPU and memory
 * requested per account, read from the caches when scraped (so only the
 * leader reports them), and the admission latency. Each per-account gauge has
 * one series for each of the QUEUE_METRIC_ACCOUNTS accounts with the largest
 * values and one, "other", for the rest (account-series.ts), so its
 * cardinality is bounded whatever the number of accounts.
 */
export function limiterMetrics(registry: Registry): LimiterMetrics {
  let read: (() => LimiterSnapshot) | null = null;
  new Gauge({
    name: "codeplane_runs",
    help: "Run resources in the cluster by status (reported by the controller's leader; finished ones until their retention ends).",
    labelNames: ["status"],
    registers: [registry],
    collect() {
      this.reset();
      if (!read) return;
      const { byPhase } = read();
      for (const phase of RUN_PHASES) this.set({ status: phase }, byPhase.get(phase) ?? 0);
    },
  });
  new Gauge({
    name: "codeplane_run_queue_length",
    help: `Runs waiting for admission per account: the ${QUEUE_METRIC_ACCOUNTS} accounts with the longest queues by id, the rest summed as account="other".`,
    labelNames: ["account"],
    registers: [registry],
    collect() {
      this.reset();
      if (!read) return;
      for (const [account, n] of queueSeries(read().waiting)) this.set({ account }, n);
    },
  });
  // What each account's executing runs and analyses request: what its CPU and memory caps count.
  const perAccount = (name: string, help: string, value: (r: CpuMemory) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ["account"],
      registers: [registry],
      collect() {
        this.reset();
        if (!read) return;
        const values = new Map([...read().used].map(([account, r]) => [account, value(r)]));
        for (const [account, v] of accountSeries(values, QUEUE_METRIC_ACCOUNTS)) this.set({ account }, v);
      },
    });
  perAccount(
    "codeplane_account_requested_cpu_cores",
    `CPU requested by each account's executing runs and analyses (what its CPU cap counts): the ${QUEUE_METRIC_ACCOUNTS} largest by account id, the rest summed as account="other".`,
    (r) => r.cpu / 1000,
  );
  perAccount(
    "codeplane_account_requested_memory_bytes",
    `Memory requested by each account's executing runs and analyses (what its memory cap counts): the ${QUEUE_METRIC_ACCOUNTS} largest by account id, the rest summed as account="other".`,
    (r) => r.memory,
  );
  const latency = new Histogram({
    name: "codeplane_run_admission_seconds",
    help: "From a run's creation to its admission (its Job about to be created).",
    buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
    registers: [registry],
  });
  return {
    admitted: (seconds) => latency.observe(seconds),
    observe: (snapshot) => {
      read = snapshot;
    },
  };
}

/** The queue length series: the longest queues by account, the rest as "other" (bounded cardinality). */
export function queueSeries(waiting: readonly WaitingRun[], max = QUEUE_METRIC_ACCOUNTS): [string, number][] {
  const counts = new Map<string, number>();
  for (const w of waiting) counts.set(w.account, (counts.get(w.account) ?? 0) + 1);
  return accountSeries(counts, max);
}
