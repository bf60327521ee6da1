import { describe, expect, it } from "vitest";
import { ANALYSIS_LIFECYCLE, ANALYSIS_WORKLOAD } from "./analysis.ts";
import { defineLifecycle, idFromName, podLabelOf, resourceNameOf, transitionsSince } from "./lifecycle.ts";
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

describe("transitionsSince", () => {
  const SEEN = new Date("2026-01-01T00:00:10.000Z");
  const START = new Date("2026-01-01T00:00:04.000Z");
  const END = new Date("2026-01-01T00:00:06.000Z");
  const facts = (phase: string, startTime: Date | null = null, endTime: Date | null = null) => ({ phase, startTime, endTime });
  const brief = (recorded: string[], f: ReturnType<typeof facts>) =>
    transitionsSince(RUN_LIFECYCLE, recorded, f, SEEN).map((t) => `${t.phase}${t.inferred ? "?" : ""}@${t.at.toISOString().slice(17, 19)}`);

  it.each<[string, string[], ReturnType<typeof facts>, string[]]>([
    ["the first status", [], facts("pending"), ["pending@10"]],
    ["the same phase again", ["pending"], facts("pending"), []],
    ["the next phase", ["pending"], facts("preprocessing"), ["preprocessing@10"]],
    ["running at its container's start", ["pending", "preprocessing"], facts("running", START), ["running@04"]],
    ["running seen before preprocessing was: the chain is filled in", ["pending"], facts("running", START), ["preprocessing?@04", "running@04"]],
    [
      "finished with its command started, never seen running (the defect)",
      ["pending", "preprocessing"],
      facts("completed", START, END),
      ["running?@04", "completed@06"],
    ],
    ["finished, seen first at the end", [], facts("failed", START, END), ["pending?@04", "preprocessing?@04", "running?@04", "failed@06"]],
    ["cancelled while pending: nothing else happened", ["pending"], facts("cancelled", null, END), ["cancelled@06"]],
    ["failed in preprocessing", ["pending", "preprocessing"], facts("failed", null, null), ["failed@10"]],
    ["an older status after a newer one: nothing", ["pending", "preprocessing", "running"], facts("preprocessing"), []],
    ["anything after a terminal phase: nothing", ["pending", "cancelled"], facts("completed", START, END), []],
  ])("%s", (_name, recorded, f, want) => {
    expect(brief(recorded, f)).toEqual(want);
  });

  it("fills an analysis's chain the same way", () => {
    expect(transitionsSince(ANALYSIS_LIFECYCLE, [], facts("completed", START, END), SEEN).map((t) => t.phase)).toEqual(["pending", "running", "completed"]);
  });
});
