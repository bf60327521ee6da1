import { describe, expect, it } from "vitest";
import { runTimeline, type TimelineSources } from "./run-timeline.ts";

const d = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const at = (s: number) => d(s).toISOString();
const base: TimelineSources = { created_at: d(0), timeline: null, start_time: null, first_output_at: null, close_time: null, cache: null };

describe("runTimeline", () => {
  it.each([
    { name: "just created", row: base, want: [{ event: "created", at: at(0) }] },
    {
      name: "waiting for its environment's build: created only",
      row: { ...base, cache: null },
      want: [{ event: "created", at: at(0) }],
    },
    {
      name: "a whole run with a cache hit, in the steps' order",
      row: {
        created_at: d(0),
        timeline: { admitted: at(1), scheduled: at(1), imageReady: at(3), checkedOut: at(5), environmentReady: at(6) },
        start_time: d(7),
        first_output_at: d(7),
        close_time: d(9),
        cache: "hit" as const,
      },
      want: [
        { event: "created", at: at(0) },
        { event: "admitted", at: at(1) },
        { event: "scheduled", at: at(1) },
        { event: "image_ready", at: at(3) },
        { event: "checked_out", at: at(5) },
        { event: "environment_ready", at: at(6), cache: "hit" },
        { event: "started", at: at(7) },
        { event: "first_output", at: at(7) },
        { event: "ended", at: at(9) },
      ],
    },
    {
      name: "no environment: no environment_ready, and a run that printed nothing has no first_output",
      row: { ...base, timeline: { admitted: at(1), checkedOut: at(4) }, start_time: d(5), close_time: d(6) },
      want: [
        { event: "created", at: at(0) },
        { event: "admitted", at: at(1) },
        { event: "checked_out", at: at(4) },
        { event: "started", at: at(5) },
        { event: "ended", at: at(6) },
      ],
    },
    {
      name: "cancelled while waiting: created and ended",
      row: { ...base, close_time: d(30) },
      want: [
        { event: "created", at: at(0) },
        { event: "ended", at: at(30) },
      ],
    },
  ])("$name", ({ row, want }) => {
    expect(runTimeline(row)).toEqual(want);
  });
});
