import type { V1Job } from "@kubernetes/client-node";
import pino from "pino";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { WorkloadSpec, WorkloadStatus } from "../resources/common.ts";
import { INSTALLATION_LABEL } from "../resources/labels.ts";
import { BuiltInLimiter, limiterMetrics, queueSeries } from "./limiter.ts";
import type { WorkloadResource } from "./workload.ts";

// The built-in limiter's gathering: what counts as executing and waiting in
// the caches, the slots it has handed out before the cache shows them, and
// its state after a restart (nothing in memory: all from the caches).

const DEFAULTS = { executingPerAccount: 2, waitingPerAccount: 0, executingTotal: 0, cpuPerAccount: 0, memoryPerAccount: 0, retryAfterSeconds: 30 };
let seq = 0;
/** A run of `account`; ids are UUIDv7-shaped and increase with each call, as submission order does. */
function run(account: string, status?: WorkloadStatus, extra: Partial<WorkloadSpec> = {}, labels: Record<string, string> = {}) {
  const id = `0190b1c2-3d4e-7f00-8a1b-${String(++seq).padStart(12, "0")}`;
  return {
    apiVersion: "codeplane.dev/v1alpha1",
    kind: "Run",
    metadata: { name: `run-${id}`, namespace: "ns", labels },
    spec: { accountId: account, repositoryId: "r", repositoryUrl: "u", commitHash: "c", timeoutSeconds: 60, ...extra },
    ...(status && { status }),
  } as WorkloadResource<WorkloadSpec, WorkloadStatus>;
}
const admitted = (phase = "pending"): WorkloadStatus => ({
  phase,
  conditions: [{ type: "Admitted", status: "True", reason: "Admitted", message: "", lastTransitionTime: "2026-01-01T00:00:00Z" }],
});
const analysisJob = (account: string, done = false): V1Job => ({
  metadata: { name: `analysis-${account}-${++seq}`, labels: { "app.kubernetes.io/component": "analysis", "codeplane.dev/account": account } },
  status: done ? { conditions: [{ type: "Complete", status: "True" }] } : { active: 1 },
});

function limiter(runs: WorkloadResource<WorkloadSpec, WorkloadStatus>[], jobs: V1Job[] = [], overrides = new Map<string, { executing: number | null }>()) {
  const registry = new Registry();
  const l = new BuiltInLimiter({
    runs: () => runs,
    jobs: () => jobs,
    defaults: DEFAULTS,
    overrides: async () => overrides,
    installation: "inst",
    metrics: limiterMetrics(registry),
    logger: pino({ level: "silent" }),
  });
  return { l, registry };
}

describe("BuiltInLimiter", () => {
  it("admits up to the account's limit, counting admitted runs and running analyses; the rest wait in order with their position", async () => {
    const busy = run("a", admitted("running"));
    const [w1, w2, w3] = [run("a"), run("a"), run("a")];
    const { l } = limiter([busy, w3, w1, w2]);
    expect(await l.admit(w1)).toMatchObject({ admitted: true });
    // w1's slot is held before any cache shows it: w2 waits, first in line.
    expect(await l.admit(w2)).toMatchObject({ admitted: false, reason: "AccountConcurrency", position: 1 });
    expect(await l.admit(w3)).toMatchObject({ admitted: false, reason: "AccountConcurrency", position: 2 });
    // Asked again (its Job's creation failed and is retried): it keeps its slot.
    expect(await l.admit(w1)).toMatchObject({ admitted: true });
    expect(l.admissible()).toEqual([]);

    const b = run("b");
    const withAnalyses = limiter([b], [analysisJob("b"), analysisJob("b")]);
    expect(await withAnalyses.l.admit(b)).toMatchObject({ admitted: false, reason: "AccountConcurrency" });
    const finished = limiter([run("b")], [analysisJob("b", true), analysisJob("b", true)]);
    expect(finished.l.admissible()).toHaveLength(1);
  });

  it("takes a decision whole: the runs it admits hold their slots in order, whichever reconcile comes first", async () => {
    const [w1, w2, w3] = [run("a"), run("a"), run("a")];
    const { l } = limiter([w1, w2, w3]);
    // w2's reconcile comes first: w1 and w2 are both admitted by that decision.
    expect(await l.admit(w2)).toMatchObject({ admitted: true });
    expect(await l.admit(w3)).toMatchObject({ admitted: false, position: 1 });
    expect(await l.admit(w1)).toMatchObject({ admitted: true });
  });

  it("a finished run frees its slot; cancelled and other installations' runs neither wait nor count", async () => {
    const done = run("a", { ...admitted(), phase: "completed" });
    const other = run("a", admitted("running"), {}, { [INSTALLATION_LABEL]: "someone-else" });
    const cancelled = run("a", undefined, { cancelRequested: true });
    const [w1, w2, w3] = [run("a"), run("a"), run("a")];
    const { l } = limiter([done, other, cancelled, w1, w2, w3]);
    expect(l.admissible()).toEqual([w1.metadata.name, w2.metadata.name]);
  });

  it("a restarted limiter derives everything from the caches: admitted runs and existing Jobs count", async () => {
    const a1 = run("a", admitted());
    const a2 = run("a", { phase: "pending" });
    const a3 = run("a");
    // a2 has a Job (created before its status said so): executing.
    const { l } = limiter([a1, a2, a3], [{ metadata: { name: a2.metadata.name, labels: {} } }]);
    expect(await l.admit(a3)).toMatchObject({ admitted: false, reason: "AccountConcurrency", position: 1 });
  });

  it("an account's override replaces the default", async () => {
    const runs = [run("a"), run("a"), run("a")];
    const { l } = limiter(runs, [], new Map([["a", { executing: 1 }]]));
    expect(await l.admit(runs[0]!)).toMatchObject({ admitted: true });
    expect(await l.admit(runs[1]!)).toMatchObject({ admitted: false, message: expect.stringContaining("limit of 1") });
  });

  it("reports runs by status and queue length per account, the rest as other", async () => {
    const runs = [run("a", admitted("running")), run("a", admitted("running")), run("a"), run("b")];
    const { registry } = limiter(runs);
    const text = await registry.metrics();
    expect(text).toContain('codeplane_runs{status="running"} 2');
    expect(text).toContain('codeplane_runs{status="pending"} 2');
    expect(text).toContain('codeplane_run_queue_length{account="a"} 1');
    expect(text).toContain('codeplane_run_queue_length{account="b"} 1');
  });
});

describe("queueSeries", () => {
  it("keeps the longest queues by account and sums the rest as other", () => {
    const w = (account: string, n: number) => Array.from({ length: n }, (_, i) => ({ name: `${account}${i}`, account, order: `${i}` }));
    expect(queueSeries([...w("a", 1), ...w("b", 3), ...w("c", 2), ...w("d", 1)], 2)).toEqual([
      ["b", 3],
      ["c", 2],
      ["other", 2],
    ]);
    expect(queueSeries(w("a", 2), 2)).toEqual([["a", 2]]);
  });
});
