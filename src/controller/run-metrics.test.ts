import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { runDurations, runMetrics, type FinishedRun } from "./run-metrics.ts";

// The timeline's histograms: which durations a finished run's status gives,
// and the series they land in.

const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
const full: FinishedRun = {
  createdAt: at(0),
  computeType: "cpu-general",
  phase: "completed",
  timeline: { admitted: at(10), scheduled: at(11), imageReady: at(14), checkedOut: at(17), environmentReady: at(25) },
  startTime: at(26),
  completionTime: at(56),
};

describe("runDurations", () => {
  it.each([
    {
      name: "a run through every step",
      run: full,
      want: {
        queueWait: 10,
        podStart: 16,
        duration: 30,
        phases: { scheduling: 1, image: 3, checkout: 3, environment: 8, command_start: 1 },
      },
    },
    {
      name: "no environment: the command starts after the checkout",
      run: { ...full, timeline: { ...full.timeline, environmentReady: undefined } },
      want: { queueWait: 10, podStart: 16, duration: 30, phases: { scheduling: 1, image: 3, checkout: 3, command_start: 9 } },
    },
    {
      name: "cancelled while queued: nothing but what happened (no queue wait: never admitted)",
      run: { createdAt: at(0), computeType: "cpu-general", phase: "cancelled", completionTime: at(40) },
      want: { phases: {} },
    },
    {
      name: "failed at checkout: queue wait and the steps it reached, no pod start or duration",
      run: { ...full, phase: "failed", timeline: { admitted: at(10), scheduled: at(11), imageReady: at(14) }, startTime: undefined },
      want: { queueWait: 10, phases: { scheduling: 1, image: 3 } },
    },
    {
      name: "a warm pool's pod: its steps happened before the run; only the queue wait and command start count",
      run: { ...full, timeline: { admitted: at(10), scheduled: at(2), imageReady: at(3), checkedOut: at(4), warm: true }, startTime: at(11) },
      want: { queueWait: 10, podStart: 1, duration: 45, phases: { command_start: 1 } },
    },
    {
      name: "whole-second times out of order are left out, never negative",
      run: { ...full, timeline: { admitted: at(10), scheduled: at(9) }, startTime: at(12) },
      want: { queueWait: 10, podStart: 2, duration: 44, phases: {} },
    },
  ])("$name", ({ run, want }) => {
    expect(runDurations(run)).toEqual(want);
  });
});

describe("runMetrics", () => {
  it("observes a finished run once into the histograms, by status and compute type; an unknown compute type is 'other'", async () => {
    const registry = new Registry();
    const m = runMetrics(registry, ["cpu-general", "cpu-memory"]);
    m.finished(full);
    m.finished({ ...full, computeType: "made-up", phase: "failed" });
    const text = await registry.metrics();
    expect(text).toContain('codeplane_run_queue_wait_seconds_count{compute_type="cpu-general"} 1');
    expect(text).toContain('codeplane_run_queue_wait_seconds_sum{compute_type="cpu-general"} 10');
    expect(text).toContain('codeplane_run_startup_phase_seconds_sum{phase="environment",compute_type="cpu-general"} 8');
    expect(text).toContain('codeplane_run_startup_phase_seconds_count{phase="checkout",compute_type="other"} 1');
    expect(text).toContain('codeplane_run_pod_start_seconds_sum{compute_type="cpu-general"} 16');
    expect(text).toContain('codeplane_run_duration_seconds_count{status="completed",compute_type="cpu-general"} 1');
    expect(text).toContain('codeplane_run_duration_seconds_count{status="failed",compute_type="other"} 1');
    expect(text).not.toContain("made-up");
  });
});
