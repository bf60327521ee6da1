import { describe, expect, it } from "vitest";
import { planHandover, type OrderedRun } from "./kueue-order.ts";

// Which run of each account is handed to Kueue next: the oldest waiting one,
// and none while one of the account's runs is in Kueue's hands.

const r = (name: string, account: string, over: Partial<OrderedRun> = {}): OrderedRun => ({
  name,
  account,
  order: name,
  live: true,
  admitted: false,
  job: "none",
  handedOver: false,
  ...over,
});

const cases: { name: string; runs: OrderedRun[]; next: Record<string, string>; holding: Record<string, string> }[] = [
  { name: "nothing waits", runs: [], next: {}, holding: {} },
  { name: "the oldest waiting run, whatever order the runs come in", runs: [r("a3", "A"), r("a1", "A"), r("a2", "A")], next: { A: "a1" }, holding: {} },
  { name: "one run in Kueue's hands (held) holds its account", runs: [r("a1", "A", { job: "held" }), r("a2", "A")], next: {}, holding: { A: "a1" } },
  {
    name: "one handed over whose Job is not seen yet holds its account",
    runs: [r("a1", "A", { handedOver: true }), r("a2", "A")],
    next: {},
    holding: { A: "a1" },
  },
  {
    name: "an admitted run evicted by Kueue (suspended again) holds its account",
    runs: [r("a1", "A", { job: "held", admitted: true }), r("a2", "A")],
    next: {},
    holding: { A: "a1" },
  },
  {
    name: "a run Kueue let run, its status not written yet, holds nothing",
    runs: [r("a1", "A", { job: "running" }), r("a2", "A")],
    next: { A: "a2" },
    holding: {},
  },
  {
    name: "finished, cancelled or deleted runs hold nothing",
    runs: [r("a1", "A", { job: "held", live: false }), r("a2", "A", { handedOver: true, live: false }), r("a3", "A")],
    next: { A: "a3" },
    holding: {},
  },
  {
    name: "admitted runs and cancelled waiting ones are not handed over",
    runs: [r("a1", "A", { admitted: true }), r("a2", "A", { live: false }), r("a3", "A")],
    next: { A: "a3" },
    holding: {},
  },
  {
    name: "each account on its own: one held, the other's oldest goes",
    runs: [r("a1", "A", { job: "held" }), r("a2", "A"), r("b2", "B"), r("b1", "B")],
    next: { B: "b1" },
    holding: { A: "a1" },
  },
];

describe("planHandover", () => {
  it.each(cases)("$name", (c) => {
    const plan = planHandover(c.runs);
    expect(Object.fromEntries(plan.next)).toEqual(c.next);
    expect(Object.fromEntries(plan.holding)).toEqual(c.holding);
  });
});
