import { describe, expect, it } from "vitest";
import { formatSeconds, runPhases, waitsForBuild, type PhasedRun, type TimelineEvent, type TimelineEventName } from "./phases.ts";

// The run page's phases, read from timelines as the API writes them.

const T0 = Date.parse("2026-11-26T13:00:00.000Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
/** A timeline from [event, seconds after T0] pairs. */
const tl = (...evs: [TimelineEventName, number, ("hit" | "built")?][]): TimelineEvent[] =>
  evs.map(([event, s, cache]) => (cache ? { event, at: at(s), cache } : { event, at: at(s) }));
const ENV = (cache: "hit" | "built" | null) => ({ key: "k1", cache });

const FULL = tl(
  ["created", 0],
  ["admitted", 2],
  ["scheduled", 3],
  ["image_ready", 7],
  ["checked_out", 9],
  ["environment_ready", 12, "hit"],
  ["started", 12.5],
  ["first_output", 13.25],
  ["ended", 20],
);

interface Case {
  name: string;
  run: PhasedRun;
  now?: number;
  /** id:state:seconds (seconds "-" when null), in order. */
  phases: string[];
  headline: string;
  current?: { id: string; since: string } | null;
  labels?: Record<string, string>;
  notes?: Record<string, string>;
  total?: number;
  firstOutput?: [number | null, number | null];
}

const cases: Case[] = [
  {
    name: "a run just created is queued, counted from its creation; no environment, no environment phase",
    run: { status: "pending", created_at: at(0), environment: null, timeline: tl(["created", 0]) },
    now: T0 + 5000,
    phases: ["queued:current:-", "scheduling:upcoming:-", "image:upcoming:-", "checkout:upcoming:-", "command:upcoming:-"],
    headline: "Queued",
    current: { id: "queued", since: at(0) },
    total: 5,
    firstOutput: [null, null],
  },
  {
    name: "a preprocessing run with a key, no cache and no admitted event is building its environment",
    run: { status: "preprocessing", created_at: at(0), environment: ENV(null), timeline: tl(["created", 0]) },
    now: T0 + 30_000,
    phases: ["queued:current:-", "scheduling:upcoming:-", "image:upcoming:-", "checkout:upcoming:-", "environment:upcoming:-", "command:upcoming:-"],
    headline: "Building environment",
    current: { id: "queued", since: at(0) },
    notes: { environment: "restored once built" },
  },
  {
    name: "a pending run with a key is only queued (not yet waiting for a build)",
    run: { status: "pending", created_at: at(0), environment: ENV(null), timeline: tl(["created", 0]) },
    phases: ["queued:current:-", "scheduling:upcoming:-", "image:upcoming:-", "checkout:upcoming:-", "environment:upcoming:-", "command:upcoming:-"],
    headline: "Queued",
  },
  {
    name: "a run checking out: the current phase counts from the image's readiness",
    run: { status: "preprocessing", created_at: at(0), environment: null, timeline: tl(["created", 0], ["admitted", 2], ["scheduled", 3], ["image_ready", 7]) },
    now: T0 + 8000,
    phases: ["queued:done:2", "scheduling:done:1", "image:done:4", "checkout:current:-", "command:upcoming:-"],
    headline: "Checkout",
    current: { id: "checkout", since: at(7) },
  },
  {
    name: "a completed run restored from the cache: every phase with its duration, the environment labelled cached",
    run: { status: "completed", created_at: at(0), environment: ENV("hit"), timeline: FULL },
    phases: ["queued:done:2", "scheduling:done:1", "image:done:4", "checkout:done:2", "environment:done:3", "command:done:7.5"],
    headline: "completed",
    current: null,
    labels: { environment: "Environment (cached)" },
    total: 20,
    firstOutput: [0.75, 13.25],
  },
  {
    name: "a run that waited for its build: labelled built, the queue's note says why it was long",
    run: {
      status: "completed",
      created_at: at(0),
      environment: ENV("built"),
      timeline: tl(
        ["created", 0],
        ["admitted", 95],
        ["scheduled", 95],
        ["image_ready", 96],
        ["checked_out", 97],
        ["environment_ready", 99, "built"],
        ["started", 99],
        ["ended", 100],
      ),
    },
    phases: ["queued:done:95", "scheduling:done:0", "image:done:1", "checkout:done:1", "environment:done:2", "command:done:1"],
    headline: "completed",
    labels: { environment: "Environment (built)", queued: "Queued" },
    notes: { queued: "waited for its environment's build" },
    firstOutput: [null, null],
  },
  {
    name: "the cache named by the environment_ready event wins over a row not updated yet",
    run: { status: "running", created_at: at(0), environment: ENV(null), timeline: FULL.slice(0, 7) },
    now: T0 + 14_000,
    phases: ["queued:done:2", "scheduling:done:1", "image:done:4", "checkout:done:2", "environment:done:3", "command:current:-"],
    headline: "Command",
    current: { id: "command", since: at(12.5) },
    labels: { environment: "Environment (cached)" },
  },
  {
    name: "between the restore and the command's start, the command phase counts from the restore",
    run: { status: "preprocessing", created_at: at(0), environment: ENV("hit"), timeline: FULL.slice(0, 6) },
    now: T0 + 12_200,
    phases: ["queued:done:2", "scheduling:done:1", "image:done:4", "checkout:done:2", "environment:done:3", "command:current:-"],
    headline: "Command",
    current: { id: "command", since: at(12) },
  },
  {
    name: "a run that failed in its checkout: stopped there, timed to its end; later phases not reached",
    run: {
      status: "failed",
      created_at: at(0),
      environment: ENV("hit"),
      timeline: tl(["created", 0], ["admitted", 1], ["scheduled", 2], ["image_ready", 4], ["ended", 10]),
    },
    phases: ["queued:done:1", "scheduling:done:1", "image:done:2", "checkout:stopped:6", "environment:not-reached:-", "command:not-reached:-"],
    headline: "failed",
    current: null,
    total: 10,
  },
  {
    name: "a run cancelled while queued",
    run: { status: "cancelled", created_at: at(0), environment: null, timeline: tl(["created", 0], ["ended", 42]) },
    phases: ["queued:stopped:42", "scheduling:not-reached:-", "image:not-reached:-", "checkout:not-reached:-", "command:not-reached:-"],
    headline: "cancelled",
  },
  {
    name: "a step the cluster did not record: done, duration unknown on both sides of it",
    run: {
      status: "running",
      created_at: at(0),
      environment: null,
      timeline: tl(["created", 0], ["admitted", 2], ["image_ready", 7], ["checked_out", 9], ["started", 9]),
    },
    now: T0 + 10_000,
    phases: ["queued:done:2", "scheduling:done:-", "image:done:-", "checkout:done:2", "command:current:-"],
    headline: "Command",
  },
  {
    name: "whole-second container times never make a negative duration",
    run: {
      status: "completed",
      created_at: at(0.4),
      environment: null,
      timeline: tl(["created", 0.4], ["admitted", 0], ["scheduled", 1], ["image_ready", 1], ["checked_out", 2], ["started", 1.8], ["ended", 3]),
    },
    phases: ["queued:done:0", "scheduling:done:1", "image:done:0", "checkout:done:1", "command:done:1.2"],
    headline: "completed",
  },
  {
    name: "a server without the timeline: start and end from the run's columns, the steps before unknown",
    run: { status: "completed", created_at: at(0), start_time: at(5), close_time: at(8), environment: null },
    phases: ["queued:done:-", "scheduling:done:-", "image:done:-", "checkout:done:-", "command:done:3"],
    headline: "completed",
    total: 8,
  },
];

const fmt = (s: number | null) => (s === null ? "-" : String(Math.round(s * 1000) / 1000));

describe("runPhases", () => {
  it.each(cases)("$name", (c) => {
    const r = runPhases(c.run, c.now ?? T0 + 60_000);
    expect(r.phases.map((p) => `${p.id}:${p.state}:${fmt(p.seconds)}`)).toEqual(c.phases);
    expect(r.headline).toBe(c.headline);
    if (c.current !== undefined) expect(r.current && { id: r.current.id, since: r.current.since }).toEqual(c.current);
    for (const [id, label] of Object.entries(c.labels ?? {})) expect(r.phases.find((p) => p.id === id)?.label).toBe(label);
    for (const [id, note] of Object.entries(c.notes ?? {})) expect(r.phases.find((p) => p.id === id)?.note).toBe(note);
    if (c.total !== undefined) expect(r.totalSeconds).toBeCloseTo(c.total, 3);
    if (c.firstOutput) expect([r.firstOutputSeconds, r.firstOutputSinceCreatedSeconds]).toEqual(c.firstOutput);
  });
});

describe("waitsForBuild", () => {
  it.each([
    [{ status: "preprocessing", environment: ENV(null), timeline: tl(["created", 0]) }, true],
    [{ status: "preprocessing", environment: ENV(null), timeline: tl(["created", 0], ["admitted", 1]) }, false],
    [{ status: "preprocessing", environment: ENV("built"), timeline: tl(["created", 0]) }, false],
    [{ status: "preprocessing", environment: { key: null, cache: null }, timeline: tl(["created", 0]) }, false],
    [{ status: "pending", environment: ENV(null), timeline: tl(["created", 0]) }, false],
    [{ status: "preprocessing", environment: null }, false],
  ] as [Omit<PhasedRun, "created_at">, boolean][])("%j → %s", (run, expected) => {
    expect(waitsForBuild({ created_at: at(0), ...run })).toBe(expected);
  });
});

describe("formatSeconds", () => {
  it.each([
    [0, "0.0 s"],
    [0.75, "0.8 s"],
    [9.94, "9.9 s"],
    [12.7, "12 s"],
    [60, "1 min 00 s"],
    [125.2, "2 min 05 s"],
    [3600, "1 h 00 min"],
    [3725, "1 h 02 min"],
    [-1, "—"],
    [Number.NaN, "—"],
  ])("%s → %s", (s, text) => {
    expect(formatSeconds(s)).toBe(text);
  });
});
