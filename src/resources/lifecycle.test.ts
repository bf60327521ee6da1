import { describe, expect, it } from "vitest";
import { ANALYSIS_LIFECYCLE, ANALYSIS_WORKLOAD } from "./analysis.ts";
import { defineLifecycle, idFromName, podLabelOf, resourceNameOf } from "./lifecycle.ts";
import { RUN_LIFECYCLE, RUN_WORKLOAD } from "./run.ts";

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

  it("refuses to rank a phase it does not have", () => {
    expect(() => l.rank("exploded")).toThrow(/not a phase/);
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
    live.forEach((p, i) => expect(lifecycle.rank(p)).toBe(i));
    for (const p of terminal) expect(lifecycle.rank(p)).toBe(lifecycle.terminalRank);
    expect([...lifecycle.terminal]).toEqual(terminal);
  });
});

describe("workload naming", () => {
  it.each([
    [RUN_WORKLOAD, "run-0190", "codeplane.dev/run"],
    [ANALYSIS_WORKLOAD, "analysis-0190", "codeplane.dev/analysis"],
  ])("$noun: resources are <noun>-<id>, pods carry codeplane.dev/<noun>", (w, name, label) => {
    expect(resourceNameOf(w, "0190")).toBe(name);
    expect(podLabelOf(w)).toBe(label);
    expect(idFromName(w, name)).toBe("0190");
  });

  it.each([
    ["analysis-0190", null],
    ["run-", null],
    ["runner-1", null],
    ["run-abc", "abc"],
  ])("the run kind reads the id of %s as %s", (name, id) => {
    expect(idFromName(RUN_WORKLOAD, name)).toBe(id);
  });
});
