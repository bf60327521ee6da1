import type { V1Job } from "@kubernetes/client-node";
import pino from "pino";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { WorkloadSpec, WorkloadStatus } from "../resources/common.ts";
import { presetRequests } from "../resources/quantity.ts";
import { Unreconcilable } from "../domain/workloads/unreconcilable.ts";
import { BuiltInLimiter, limiterMetrics } from "./limiter.ts";
import type { WorkloadResource } from "./workload.ts";

// The built-in limiter's CPU and memory caps as gathered from the caches:
// admitted runs count their compute type's requests, running analyses the
// analysis compute type's, a slot just handed out counts before the cache
// shows it, and an account's override replaces the operator's default.

const DEFAULTS = { executingPerAccount: 0, waitingPerAccount: 0, executingTotal: 0, cpuPerAccount: 1000, memoryPerAccount: 0, retryAfterSeconds: 30 };
const PRESETS: Record<string, Record<string, string>> = { small: { cpu: "250m", memory: "256Mi" }, big: { cpu: "2", memory: "1Gi" } };
let seq = 0;
function run(account: string, computeType: string, status?: WorkloadStatus) {
  const id = `0190b1c2-3d4e-7f00-8a1b-${String(++seq).padStart(12, "0")}`;
  return {
    metadata: { name: `run-${id}`, namespace: "ns", uid: id },
    spec: { accountId: account, repositoryId: "r", repositoryUrl: "u", commitHash: "c", timeoutSeconds: 60, computeType },
    ...(status && { status }),
  } as WorkloadResource<WorkloadSpec, WorkloadStatus>;
}
const admitted: WorkloadStatus = {
  phase: "running",
  conditions: [{ type: "Admitted", status: "True", reason: "Admitted", message: "", lastTransitionTime: "2026-01-01T00:00:00Z" }],
};
const analysisJob = (account: string): V1Job => ({
  metadata: { name: `analysis-${++seq}`, labels: { "app.kubernetes.io/component": "analysis", "codeplane.dev/account": account } },
  status: { active: 1 },
});

function limiter(
  runs: WorkloadResource<WorkloadSpec, WorkloadStatus>[],
  jobs: V1Job[] = [],
  overrides = new Map<string, { executing: null; cpu: number | null }>(),
) {
  return new BuiltInLimiter({
    runs: () => runs,
    jobs: () => jobs,
    defaults: DEFAULTS,
    overrides: async () => overrides,
    requestsOf: (type) => presetRequests(PRESETS[type] ?? {}),
    analysisRequests: presetRequests({ cpu: "500m" }),
    installation: "inst",
    metrics: limiterMetrics(new Registry()),
    logger: pino({ level: "silent" }),
  });
}

describe("BuiltInLimiter: CPU and memory caps", () => {
  it("counts admitted runs' requests and holds a run that would take the account over its cap", async () => {
    const running = [run("a", "small", admitted), run("a", "small", admitted), run("a", "small", admitted)];
    const [w1, w2] = [run("a", "small"), run("a", "small")];
    const l = limiter([...running, w1, w2]);
    // 750m in use of 1 CPU: one more 250m run fits, held at once; the next waits for CPU.
    expect(await l.admit(w1)).toMatchObject({ admitted: true });
    const queued = await l.admit(w2);
    expect(queued).toMatchObject({ admitted: false, reason: "AccountQuota", position: 1 });
    expect(queued.admitted === false && queued.message).toContain("would take the account over its cap of 1 CPU");
  });

  it("counts running analyses at the analysis compute type's requests", async () => {
    const w = run("a", "small");
    const l = limiter([w], [analysisJob("a")]);
    // 500m of analysis + 250m fits under 1 CPU; with two analyses it does not.
    expect(await l.admit(w)).toMatchObject({ admitted: true });
    const w2 = run("a", "small");
    expect(await limiter([w2], [analysisJob("a"), analysisJob("a")]).admit(w2)).toMatchObject({ admitted: false, reason: "AccountQuota" });
  });

  it("fails a run that asks for more than the cap by itself, naming the limit and its value, and an override lets it start", async () => {
    const w = run("a", "big");
    const later = run("a", "small");
    const l = limiter([w, later]);
    // Both are reconciled at once: the over-cap one to fail, the later one (not held behind it) to start.
    expect(l.admissible()).toEqual([later.metadata.name, w.metadata.name]);
    const failed = await l.admit(w).then(
      () => null,
      (err: unknown) => err,
    );
    expect(failed).toBeInstanceOf(Unreconcilable);
    expect(failed).toMatchObject({ reason: "AccountCapExceeded", expected: true });
    expect((failed as Error).message).toBe(
      "compute type 'big' requests 2 CPU, more than this account's cap of 1 (limit 'cpu' per account): a run of it could never start, so it failed without starting; raise the account's cap (codeplane accounts limits) or use a smaller compute type",
    );
    expect(await l.admit(later)).toMatchObject({ admitted: true });
    expect(await limiter([w], [], new Map([["a", { executing: null, cpu: 4000 }]])).admit(w)).toMatchObject({ admitted: true });
    // 0 for the account: no cap, whatever the default.
    expect(await limiter([w], [], new Map([["a", { executing: null, cpu: 0 }]])).admit(w)).toMatchObject({ admitted: true });
  });

  it("fails a run as over its cap only on the caps read just now: a cap raised within the cache's life, or an unreadable override, keeps it waiting", async () => {
    const small = run("a", "small");
    const w = run("a", "big");
    let overrides: Map<string, { executing: null; cpu: number | null }> | Error = new Map();
    let reads = 0;
    const l = new BuiltInLimiter({
      runs: () => [small, w],
      jobs: () => [],
      defaults: DEFAULTS,
      overrides: async () => {
        reads++;
        if (overrides instanceof Error) throw overrides;
        return overrides;
      },
      requestsOf: (type) => presetRequests(PRESETS[type] ?? {}),
      analysisRequests: presetRequests({ cpu: "500m" }),
      installation: "inst",
      metrics: limiterMetrics(new Registry()),
      logger: pino({ level: "silent" }),
    });
    // The overrides are read (and cached) for another run's decision; then the admin raises a's cap.
    expect(await l.admit(small)).toMatchObject({ admitted: true });
    expect(reads).toBe(1);
    overrides = new Map([["a", { executing: null, cpu: 4000 }]]);
    // Within the cache's life the big run still looks over the cap; it is read again, and starts.
    expect(await l.admit(w)).toMatchObject({ admitted: true });
    expect(reads).toBe(2);

    // An account whose overrides cannot be read: the defaults would fail it; it waits instead.
    const w2 = run("b", "big");
    const l2 = limiter([w2]);
    const failing = new BuiltInLimiter({
      runs: () => [w2],
      jobs: () => [],
      defaults: DEFAULTS,
      overrides: async () => {
        throw new Error("connection refused");
      },
      requestsOf: (type) => presetRequests(PRESETS[type] ?? {}),
      analysisRequests: presetRequests({ cpu: "500m" }),
      installation: "inst",
      metrics: limiterMetrics(new Registry()),
      logger: pino({ level: "silent" }),
    });
    expect(await failing.admit(w2)).toMatchObject({ admitted: false, reason: "AccountQuota", position: 1 });
    // Read, the same run fails for good.
    await expect(l2.admit(w2)).rejects.toMatchObject({ reason: "AccountCapExceeded" });
  });

  it("does not hold another account back", async () => {
    const full = [run("a", "small", admitted), run("a", "small", admitted), run("a", "small", admitted), run("a", "small", admitted)];
    const [a5, b1] = [run("a", "small"), run("b", "small")];
    const l = limiter([...full, a5, b1]);
    expect(l.admissible()).toEqual([b1.metadata.name]);
    expect(await l.admit(a5)).toMatchObject({ admitted: false, reason: "AccountQuota" });
  });
});

describe("BuiltInLimiter: CPU and memory requested per account, as gauges", () => {
  it("reports each account's executing requests (admitted runs, slots just handed out, running analyses), not waiting runs", async () => {
    const registry = new Registry();
    const a = [run("a", "small", admitted), run("a", "big", admitted)];
    const waiting = run("b", "small");
    const l = new BuiltInLimiter({
      runs: () => [...a, waiting],
      jobs: () => [analysisJob("c")],
      defaults: { ...DEFAULTS, cpuPerAccount: 0 },
      overrides: async () => new Map(),
      requestsOf: (type) => presetRequests(PRESETS[type] ?? {}),
      analysisRequests: presetRequests({ cpu: "500m", memory: "512Mi" }),
      installation: "inst",
      metrics: limiterMetrics(registry),
      logger: pino({ level: "silent" }),
    });
    let text = await registry.metrics();
    expect(text).toContain('codeplane_account_requested_cpu_cores{account="a"} 2.25');
    expect(text).toContain(`codeplane_account_requested_memory_bytes{account="a"} ${(256 + 1024) * 2 ** 20}`);
    expect(text).toContain('codeplane_account_requested_cpu_cores{account="c"} 0.5');
    expect(text).not.toContain('codeplane_account_requested_cpu_cores{account="b"}');
    // b's run admitted: it counts at once, before the cache shows it.
    expect(await l.admit(waiting)).toMatchObject({ admitted: true });
    text = await registry.metrics();
    expect(text).toContain('codeplane_account_requested_cpu_cores{account="b"} 0.25');
    // The controller stopped (lost the lease): no series.
    l.stop();
    expect(await registry.metrics()).not.toMatch(/codeplane_account_requested_cpu_cores\{/);
  });
});
