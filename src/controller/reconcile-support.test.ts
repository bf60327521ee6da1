import { describe, expect, it } from "vitest";
import { lifecycleConditions, sameStatus } from "./reconcile-support.ts";

const now = new Date("2026-01-01T00:00:10Z");
const base = { noun: "analysis", reason: "Pending", error: null, started: { reason: "AnalyzerStarted", message: "the analyzer started" }, generation: 2 };

describe("lifecycleConditions", () => {
  it.each([
    ["pending", { phase: "pending", terminal: false }, ["False", "Pending", "the analysis is pending"], ["False", "Pending", "the analysis is pending"]],
    [
      "started",
      { phase: "running", terminal: false, reason: "Running", startTime: "2026-01-01T00:00:05Z" },
      ["True", "AnalyzerStarted", "the analyzer started"],
      ["False", "Running", "the analysis is running"],
    ],
    [
      "completed",
      { phase: "completed", terminal: true, reason: "Completed", startTime: "2026-01-01T00:00:05Z" },
      ["True", "AnalyzerStarted", "the analyzer started"],
      ["True", "Completed", "the analysis completed"],
    ],
    [
      "failed before starting",
      { phase: "failed", terminal: true, reason: "ImagePullFailed", error: "image pull failed" },
      ["False", "ImagePullFailed", "the analysis is failed"],
      ["True", "ImagePullFailed", "image pull failed"],
    ],
  ])("%s", (_name, facts, started, finished) => {
    const [s, f] = lifecycleConditions(undefined, { ...base, ...facts }, now);
    expect([s!.type, s!.status, s!.reason, s!.message, s!.observedGeneration]).toEqual(["Started", ...started, 2]);
    expect([f!.type, f!.status, f!.reason, f!.message, f!.observedGeneration]).toEqual(["Finished", ...finished, 2]);
  });

  it("keeps lastTransitionTime while a condition's status holds", () => {
    const first = lifecycleConditions(undefined, { ...base, phase: "pending", terminal: false }, new Date("2026-01-01T00:00:00Z"));
    const again = lifecycleConditions(first, { ...base, phase: "running", terminal: false, reason: "Running" }, now);
    expect(again.find((c) => c.type === "Finished")!.lastTransitionTime).toBe("2026-01-01T00:00:00.000Z");
  });
});

describe("sameStatus", () => {
  it("compares meaning, not key order or undefined fields", () => {
    expect(sameStatus({ a: 1, b: { c: 2 } }, { b: { c: 2 }, a: 1, d: undefined })).toBe(true);
    expect(sameStatus(undefined, {})).toBe(true);
    expect(sameStatus({ a: 1 }, { a: 2 })).toBe(false);
  });
});
