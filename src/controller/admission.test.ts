import { describe, expect, it } from "vitest";
import { decideAdmission, isAdmitted, uuidv7Time, type AdmissionState, type WaitingRun } from "./admission.ts";

// The pure admission decision: who is admitted now, and why and where every
// other waiting run waits. Each case is the cluster's state as the limiter
// gathered it.

/** Waiting runs of an account, named <account><n>, submitted in n's order. */
const waits = (account: string, n: number, from = 1): WaitingRun[] =>
  Array.from({ length: n }, (_, i) => ({ name: `${account}${from + i}`, account, order: `${account}-${String(from + i).padStart(4, "0")}` }));

interface Case {
  name: string;
  state: Partial<AdmissionState> & { waiting: WaitingRun[] };
  limits?: Record<string, number>;
  admit: string[];
  queued?: Record<string, { reason: string; position: number }>;
}

const cases: Case[] = [
  { name: "no limits: everyone at once, in order", state: { waiting: [...waits("a", 3), ...waits("b", 1)] }, admit: ["a1", "b1", "a2", "a3"] },
  {
    name: "account limit 2, nothing executing: two of A's, in submission order; the rest queued by position",
    state: { waiting: waits("a", 5) },
    limits: { a: 2 },
    admit: ["a1", "a2"],
    queued: {
      a3: { reason: "AccountConcurrency", position: 1 },
      a4: { reason: "AccountConcurrency", position: 2 },
      a5: { reason: "AccountConcurrency", position: 3 },
    },
  },
  {
    name: "submission order, whatever order the cache lists them in",
    state: { waiting: waits("a", 4).reverse() },
    limits: { a: 1 },
    admit: ["a1"],
    queued: {
      a2: { reason: "AccountConcurrency", position: 1 },
      a3: { reason: "AccountConcurrency", position: 2 },
      a4: { reason: "AccountConcurrency", position: 3 },
    },
  },
  {
    name: "A at its limit does not hold B back: B's first run admitted at once",
    state: { waiting: [...waits("a", 10, 3), ...waits("b", 3)], executing: new Map([["a", 2]]) },
    limits: { a: 2, b: 2 },
    admit: ["b1", "b2"],
    queued: { a3: { reason: "AccountConcurrency", position: 1 }, b3: { reason: "AccountConcurrency", position: 1 } },
  },
  {
    name: "installation limit 2, A has both slots, one frees: B (never admitted) takes it before A's older backlog",
    state: {
      waiting: [...waits("a", 10, 3), ...waits("b", 3)],
      executing: new Map([["a", 1]]),
      lastAdmitted: new Map([["a", 1000]]),
      total: 2,
    },
    admit: ["b1"],
    queued: { a3: { reason: "ClusterConcurrency", position: 1 }, b2: { reason: "ClusterConcurrency", position: 1 } },
  },
  {
    name: "installation limit, two slots free: turns alternate between accounts, the one admitted longest ago first",
    state: {
      waiting: [...waits("a", 3), ...waits("b", 3), ...waits("c", 1)],
      lastAdmitted: new Map([
        ["a", 2000],
        ["b", 1000],
      ]),
      total: 4,
    },
    admit: ["c1", "b1", "a1", "b2"],
    queued: { a2: { reason: "ClusterConcurrency", position: 1 }, b3: { reason: "ClusterConcurrency", position: 1 } },
  },
  {
    name: "same last admission: the account with the older waiting run first",
    state: {
      waiting: [...waits("b", 1), ...waits("a", 1)],
      lastAdmitted: new Map([
        ["a", 5],
        ["b", 5],
      ]),
      total: 1,
    },
    admit: ["a1"],
    queued: { b1: { reason: "ClusterConcurrency", position: 1 } },
  },
  {
    name: "an account at its own limit yields its turn; the installation's slot goes to the next",
    state: { waiting: [...waits("a", 2), ...waits("b", 2)], executing: new Map([["a", 1]]), total: 3 },
    limits: { a: 1 },
    admit: ["b1", "b2"],
    queued: { a1: { reason: "AccountConcurrency", position: 1 }, a2: { reason: "AccountConcurrency", position: 2 } },
  },
  {
    name: "analyses and admitted runs fill the installation: nobody admitted",
    state: { waiting: waits("a", 1), executing: new Map([["b", 3]]), total: 3 },
    admit: [],
    queued: { a1: { reason: "ClusterConcurrency", position: 1 } },
  },
  {
    name: "over the limit already (lowered meanwhile): nothing admitted, nothing negative",
    state: { waiting: waits("a", 1), executing: new Map([["a", 5]]) },
    limits: { a: 2 },
    admit: [],
    queued: { a1: { reason: "AccountConcurrency", position: 1 } },
  },
  { name: "nothing waiting", state: { waiting: [], executing: new Map([["a", 2]]), total: 1 }, admit: [], queued: {} },
];

describe("decideAdmission", () => {
  it.each(cases)("$name", (c) => {
    const plan = decideAdmission({
      executing: new Map(),
      lastAdmitted: new Map(),
      total: 0,
      limitOf: (a) => c.limits?.[a] ?? 0,
      ...c.state,
    });
    expect(plan.admit).toEqual(c.admit);
    if (c.queued) expect(Object.fromEntries(plan.queued)).toMatchObject(c.queued);
    // Every waiting run is either admitted or queued, never both.
    expect(plan.admit.length + plan.queued.size).toBe(c.state.waiting.length);
  });

  it("one account's backlog delays another's next run by at most one turnover (simulated, installation limit 2)", () => {
    // A submits 12, then B 3. Each step one executing run ends and the freed slot is decided.
    let waiting = waits("a", 12);
    const executing: { name: string; account: string }[] = [];
    const last = new Map<string, number>();
    const started: string[] = [];
    let clock = 0;
    for (let step = 0; step < 40 && (waiting.length || executing.length); step++) {
      const counts = new Map<string, number>();
      for (const e of executing) counts.set(e.account, (counts.get(e.account) ?? 0) + 1);
      const plan = decideAdmission({ waiting, executing: counts, lastAdmitted: last, total: 2, limitOf: () => 2 });
      for (const name of plan.admit) {
        const w = waiting.find((x) => x.name === name)!;
        executing.push(w);
        last.set(w.account, ++clock);
        started.push(name);
      }
      waiting = waiting.filter((w) => !plan.admit.includes(w.name));
      // B submits once A's backlog has taken every slot.
      if (step === 0) waiting.push(...waits("b", 3));
      executing.shift();
    }
    expect(started).toHaveLength(15);
    // B's first run is the first admitted after A's first turnover, and B's runs alternate with A's from then on.
    expect(started.slice(0, 8)).toEqual(["a1", "a2", "b1", "a3", "b2", "a4", "b3", "a5"]);
    expect(started.filter((n) => n.startsWith("a"))).toEqual(waits("a", 12).map((w) => w.name));
  });
});

describe("isAdmitted", () => {
  const cond = (status: "True" | "False") => [{ type: "Admitted", status, reason: "r", message: "", lastTransitionTime: "2026-01-01T00:00:00Z" }];
  it.each([
    ["no status", undefined, false],
    ["pending, no condition", { phase: "pending" }, false],
    ["Admitted=False", { phase: "pending", conditions: cond("False") }, false],
    ["Admitted=True", { phase: "pending", conditions: cond("True") }, true],
    ["running without the condition (older than admission)", { phase: "running" }, true],
    ["started without the condition", { phase: "pending", startTime: "2026-01-01T00:00:00Z" }, true],
  ] as const)("%s", (_n, status, expected) => expect(isAdmitted(status as never)).toBe(expected));
});

describe("uuidv7Time", () => {
  it("reads a UUIDv7's milliseconds, and nothing from another kind", () => {
    expect(uuidv7Time("0190b1c2-3d4e-7f00-8a1b-0000000000a1")).toBe(0x0190b1c23d4e);
    expect(uuidv7Time("0190b1c2-3d4e-4f00-8a1b-0000000000a1")).toBeNull();
  });
});
