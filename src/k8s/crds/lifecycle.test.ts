import { describe, expect, it } from "vitest";
import { ANALYSIS_LIFECYCLE } from "./analysis.ts";
import { defineLifecycle } from "./lifecycle.ts";
import { RUN_LIFECYCLE } from "./run.ts";

describe("defineLifecycle", () => {
  const l = defineLifecycle(["pending", "running"], ["done", "failed"]);

  it.each([
    ["pending", 0, false],
    ["running", 1, false],
    ["done", 2, true],
    ["failed", 2, true],
  ] as const)("%s has rank %i, terminal %s", (phase, rank, terminal) => {
    expect(l.rank(phase)).toBe(rank);
    expect(l.isTerminal(phase)).toBe(terminal);
  });

  it("knows its first phase and the rank all terminal phases share", () => {
    expect(l.initial).toBe("pending");
    expect(l.terminalRank).toBe(2);
    expect(l.phases).toEqual(["pending", "running", "done", "failed"]);
  });

  it("treats an unknown or missing phase as live", () => {
    expect(l.isTerminal(undefined)).toBe(false);
    expect(l.isTerminal(null)).toBe(false);
    expect(l.isTerminal("exploded")).toBe(false);
  });
});

describe("the workloads' lifecycles", () => {
  it.each([
    ["run", RUN_LIFECYCLE, ["pending", "preprocessing", "running"], ["completed", "failed", "cancelled"]],
    ["analysis", ANALYSIS_LIFECYCLE, ["pending", "running"], ["completed", "failed", "cancelled"]],
  ] as const)("%s: ranks rise through the live phases and every terminal phase ranks above them", (_kind, lifecycle, live, terminal) => {
    live.forEach((p, i) => expect((lifecycle.rank as (p: string) => number)(p)).toBe(i));
    for (const p of terminal) expect((lifecycle.rank as (p: string) => number)(p)).toBe(lifecycle.terminalRank);
    expect([...lifecycle.terminal]).toEqual(terminal);
  });
});
