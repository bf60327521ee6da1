import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import {
  decideRelease,
  MIN_GROWTH_BYTES,
  QUIET_INTERVALS,
  QUIET_UTILIZATION,
  obtainGcFunction,
  type HeapSample,
  type ReleaseState,
} from "./idle-memory-release.ts";

const MiB = 1024 * 1024;
const state = (quietIntervals: number, baselineMiB = 100, busySinceRelease = true): ReleaseState => ({
  quietIntervals,
  busySinceRelease,
  baselineBytes: baselineMiB * MiB,
});
const sample = (utilization: number, committedMiB: number): HeapSample => ({ utilization, committedBytes: committedMiB * MiB });
const grown = 100 + MIN_GROWTH_BYTES / MiB;

describe("decideRelease", () => {
  it.each<[string, ReleaseState, HeapSample, boolean, ReleaseState]>([
    ["busy: counts nothing, releases nothing", state(QUIET_INTERVALS - 1), sample(0.5, grown + 50), false, state(0)],
    ["at the quiet threshold counts as busy", state(QUIET_INTERVALS - 1), sample(QUIET_UTILIZATION, grown), false, state(0)],
    ["the first quiet interval is not yet idle", state(0), sample(0.01, grown), false, state(1)],
    ["quiet long enough, heap grown by the minimum: releases", state(QUIET_INTERVALS - 1), sample(0.01, grown), true, state(QUIET_INTERVALS)],
    ["quiet long enough, heap grown a little less: keeps it", state(QUIET_INTERVALS - 1), sample(0.01, grown - 1), false, state(QUIET_INTERVALS)],
    ["still quiet after that: keeps counting, still no release", state(QUIET_INTERVALS + 5), sample(0, 101), false, state(QUIET_INTERVALS + 6)],
    ["a heap V8 shrank itself lowers the baseline", state(0), sample(0.9, 60), false, state(0, 60)],
    [
      "never busy since the last release (light steady traffic): no release, however the heap grew",
      state(QUIET_INTERVALS - 1, 100, false),
      sample(0.04, grown + 50),
      false,
      state(QUIET_INTERVALS, 100, false),
    ],
    ["a busy interval arms it again", state(3, 100, false), sample(0.5, 110), false, state(0, 100, true)],
    [
      "growth is measured from the lowest heap seen",
      state(QUIET_INTERVALS - 1, 60),
      sample(0.01, 60 + MIN_GROWTH_BYTES / MiB),
      true,
      state(QUIET_INTERVALS, 60),
    ],
  ])("%s", (_label, before, s, release, after) => {
    expect(decideRelease(before, s)).toEqual({ release, state: after });
  });

  it("releases once per quiet period: traffic must come back and the heap grow again", () => {
    let st = state(0, 100, false);
    const releases: number[] = [];
    const samples = [sample(0.9, 180), sample(0.01, 180), sample(0.01, 180), sample(0.01, 110), sample(0.01, 111), sample(0.01, 111)];
    samples.forEach((s, i) => {
      const d = decideRelease(st, s);
      st = d.state;
      if (d.release) {
        releases.push(i);
        st = { quietIntervals: 0, busySinceRelease: false, baselineBytes: 110 * MiB }; // what the caller does after the collection
      }
    });
    expect(releases).toEqual([QUIET_INTERVALS]);
  });
});

describe("obtainGcFunction", () => {
  it("gives a working gc without defining one on the global object", async () => {
    const gc = obtainGcFunction();
    expect(typeof gc).toBe("function");
    expect("gc" in globalThis).toBe(false);
    await gc!({ type: "major", execution: "async", flavor: "last-resort" });
    expect(runInNewContext("typeof gc")).toBe("undefined");
  });
});
