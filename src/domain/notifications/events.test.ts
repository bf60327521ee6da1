import { describe, expect, it } from "vitest";
import { ANALYSIS_LIFECYCLE } from "../../resources/analysis.ts";
import { RUN_LIFECYCLE } from "../../resources/run.ts";
import { eventFor, NOTIFICATION_EVENTS } from "./events.ts";

describe("which event a status fires", () => {
  it.each([
    { kind: "run", phase: "completed", want: "run.completed" },
    { kind: "run", phase: "failed", want: "run.failed" },
    { kind: "run", phase: "cancelled", want: "run.cancelled" },
    { kind: "run", phase: "pending", want: null },
    { kind: "run", phase: "preprocessing", want: null },
    { kind: "run", phase: "running", want: null },
    { kind: "analysis", phase: "completed", want: "analysis.completed" },
    { kind: "analysis", phase: "failed", want: "analysis.failed" },
    { kind: "analysis", phase: "cancelled", want: null },
    { kind: "analysis", phase: "running", want: null },
    { kind: "run", phase: "bogus", want: null },
  ] as const)("$kind $phase: $want", ({ kind, phase, want }) => {
    expect(eventFor(kind, phase)).toBe(want);
  });

  it("every event is a terminal phase of its kind's lifecycle", () => {
    for (const e of NOTIFICATION_EVENTS) {
      const [kind, phase] = e.split(".") as ["run" | "analysis", string];
      expect((kind === "run" ? RUN_LIFECYCLE : ANALYSIS_LIFECYCLE).isTerminal(phase), e).toBe(true);
    }
  });
});
