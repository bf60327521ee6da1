import { describe, expect, it } from "vitest";
import { decideAdmission, type AdmissionState, type WaitingRun } from "./admission.ts";
import type { CpuMemory } from "../resources/quantity.ts";

// The admission decision with per-account caps of CPU and memory requested at
// once (docs/operators/limits.md): a run whose compute type's requests would
// take its account over a cap waits (AccountQuota) and does not let the
// account's later runs pass it; other accounts are not held back. A run over
// a cap by itself is refused (over-cap.ts) and holds nobody back.

const Mi = 2 ** 20;
const Gi = 2 ** 30;
/** Waiting runs of an account, each requesting `requests`, named <account><n> in submission order. */
const waits = (account: string, n: number, requests: CpuMemory, from = 1): WaitingRun[] =>
  Array.from({ length: n }, (_, i) => ({ name: `${account}${from + i}`, account, order: `${account}-${String(from + i).padStart(4, "0")}`, requests }));
const small = { cpu: 250, memory: 256 * Mi };

interface Case {
  name: string;
  state: Partial<AdmissionState> & { waiting: WaitingRun[] };
  quotas: Record<string, CpuMemory>;
  limits?: Record<string, number>;
  admit: string[];
  /** Over a cap by themselves (default: none). */
  refused?: string[];
  /** Runs of account "a" executing already (default: none). */
  executing?: number;
  queued?: Record<string, { reason: string; position: number }>;
}

const cases: Case[] = [
  {
    name: "CPU cap 1 CPU, runs of 250m: four at once, the fifth waits for CPU",
    state: { waiting: waits("a", 5, small) },
    quotas: { a: { cpu: 1000, memory: 0 } },
    admit: ["a1", "a2", "a3", "a4"],
    queued: { a5: { reason: "AccountQuota", position: 1 } },
  },
  {
    name: "750m of 1 CPU in use: a 500m run waits, and the one behind it too",
    state: { waiting: waits("a", 2, { cpu: 500, memory: 0 }), used: new Map([["a", { cpu: 750, memory: 0 }]]) },
    quotas: { a: { cpu: 1000, memory: 0 } },
    admit: [],
    queued: { a1: { reason: "AccountQuota", position: 1 }, a2: { reason: "AccountQuota", position: 2 } },
  },
  {
    name: "memory cap 1Gi with 512Mi in use: one 512Mi run fits, the next does not",
    state: { waiting: waits("a", 3, { cpu: 0, memory: 512 * Mi }), used: new Map([["a", { cpu: 0, memory: 512 * Mi }]]) },
    quotas: { a: { cpu: 0, memory: Gi } },
    admit: ["a1"],
    queued: { a2: { reason: "AccountQuota", position: 1 }, a3: { reason: "AccountQuota", position: 2 } },
  },
  {
    name: "a big run at the head that does not fit is not overtaken by a small one behind it (order within the account)",
    state: {
      waiting: [...waits("a", 1, { cpu: 2000, memory: 0 }), ...waits("a", 1, small, 2)],
      used: new Map([["a", { cpu: 500, memory: 0 }]]),
    },
    quotas: { a: { cpu: 2000, memory: 0 } },
    admit: [],
    queued: { a1: { reason: "AccountQuota", position: 1 }, a2: { reason: "AccountQuota", position: 2 } },
  },
  {
    name: "A waiting for CPU does not hold B back, even for the installation's slots",
    state: { waiting: [...waits("a", 3, small), ...waits("b", 2, small)], used: new Map([["a", { cpu: 1000, memory: 0 }]]), total: 4 },
    quotas: { a: { cpu: 1000, memory: 0 }, b: { cpu: 1000, memory: 0 } },
    admit: ["b1", "b2"],
    queued: { a1: { reason: "AccountQuota", position: 1 } },
  },
  {
    name: "no cap (0): requests are not counted",
    state: { waiting: waits("a", 3, { cpu: 64_000, memory: 512 * Gi }) },
    quotas: { a: { cpu: 0, memory: 0 } },
    admit: ["a1", "a2", "a3"],
  },
  {
    name: "at its executing limit and over its cap: the executing limit is the reason given",
    state: { waiting: waits("a", 1, small), executing: new Map([["a", 2]]), used: new Map([["a", { cpu: 1000, memory: 0 }]]) },
    quotas: { a: { cpu: 1000, memory: 0 } },
    limits: { a: 2 },
    admit: [],
    queued: { a1: { reason: "AccountConcurrency", position: 1 } },
  },
  {
    name: "a run that asks for more than the cap by itself is refused (it could never start), nothing else of the account executing",
    state: { waiting: waits("a", 1, { cpu: 4000, memory: 0 }) },
    quotas: { a: { cpu: 2000, memory: 0 } },
    admit: [],
    refused: ["a1"],
  },
  {
    name: "an over-cap run at the head holds nobody back: the account's later runs are decided without it, positions from 1",
    state: {
      waiting: [...waits("a", 1, small), ...waits("a", 1, { cpu: 0, memory: 2 * Gi }, 2), ...waits("a", 3, small, 3)],
      used: new Map([["a", { cpu: 0, memory: 256 * Mi }]]),
    },
    quotas: { a: { cpu: 0, memory: Gi } },
    limits: { a: 2 },
    executing: 1,
    admit: ["a1"],
    refused: ["a2"],
    queued: {
      a3: { reason: "AccountConcurrency", position: 1 },
      a4: { reason: "AccountConcurrency", position: 2 },
      a5: { reason: "AccountConcurrency", position: 3 },
    },
  },
  {
    name: "over the memory cap alone, under the CPU cap: refused; another account's run is admitted",
    state: { waiting: [...waits("a", 1, { cpu: 250, memory: 2 * Gi }), ...waits("b", 1, small)] },
    quotas: { a: { cpu: 1000, memory: Gi }, b: { cpu: 1000, memory: Gi } },
    admit: ["b1"],
    refused: ["a1"],
  },
  {
    name: "exactly the cap by itself fits (not over)",
    state: { waiting: waits("a", 1, { cpu: 1000, memory: Gi }) },
    quotas: { a: { cpu: 1000, memory: Gi } },
    admit: ["a1"],
  },
  {
    name: "both caps: the run must fit under each",
    state: { waiting: waits("a", 2, { cpu: 250, memory: Gi }) },
    quotas: { a: { cpu: 4000, memory: Gi } },
    admit: ["a1"],
    queued: { a2: { reason: "AccountQuota", position: 1 } },
  },
  {
    name: "runs without requests (a compute type that asks for none) are not held by a cap",
    state: { waiting: [{ name: "a1", account: "a", order: "a-0001" }], used: new Map([["a", { cpu: 5000, memory: 0 }]]) },
    quotas: { a: { cpu: 1000, memory: 0 } },
    admit: ["a1"],
  },
];

describe("decideAdmission with CPU and memory caps", () => {
  it.each(cases)("$name", (c) => {
    const plan = decideAdmission({
      executing: new Map(),
      lastAdmitted: new Map(),
      total: 0,
      limitOf: (a) => c.limits?.[a] ?? 0,
      quotaOf: (a) => c.quotas[a] ?? { cpu: 0, memory: 0 },
      ...(c.executing && { executing: new Map([["a", c.executing]]) }),
      ...c.state,
    });
    expect(plan.admit).toEqual(c.admit);
    expect(plan.refused).toEqual(c.refused ?? []);
    if (c.queued) expect(Object.fromEntries(plan.queued)).toMatchObject(c.queued);
    expect(plan.admit.length + plan.refused.length + plan.queued.size).toBe(c.state.waiting.length);
  });

  it("admits runs as CPU frees, never more than the cap at once, in submission order (simulated)", () => {
    // A 1-CPU cap, runs of 250m, 300m and 450m: each step the oldest executing run ends.
    const sizes = [250, 300, 450, 250, 250, 450, 300, 250];
    let waiting: WaitingRun[] = sizes.map((cpu, i) => ({
      name: `a${i + 1}`,
      account: "a",
      order: `a-${String(i + 1).padStart(4, "0")}`,
      requests: { cpu, memory: 0 },
    }));
    const executing: WaitingRun[] = [];
    const started: string[] = [];
    let peak = 0;
    for (let step = 0; step < 20 && (waiting.length || executing.length); step++) {
      const cpu = executing.reduce((n, r) => n + r.requests!.cpu, 0);
      const plan = decideAdmission({
        waiting,
        executing: new Map([["a", executing.length]]),
        used: new Map([["a", { cpu, memory: 0 }]]),
        lastAdmitted: new Map(),
        total: 0,
        limitOf: () => 0,
        quotaOf: () => ({ cpu: 1000, memory: 0 }),
      });
      for (const name of plan.admit) executing.push(waiting.find((w) => w.name === name)!);
      started.push(...plan.admit);
      waiting = waiting.filter((w) => !plan.admit.includes(w.name));
      peak = Math.max(
        peak,
        executing.reduce((n, r) => n + r.requests!.cpu, 0),
      );
      executing.shift();
    }
    expect(started).toEqual(sizes.map((_, i) => `a${i + 1}`));
    expect(peak).toBeLessThanOrEqual(1000);
    // The cap was used, not just respected: at some point three runs shared it.
    expect(peak).toBeGreaterThanOrEqual(1000);
  });
});
