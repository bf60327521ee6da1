import { describe, expect, it } from "vitest";
import { nextAttemptAt, retryDelaySeconds, schedule, type BackoffPolicy } from "./backoff.ts";

const DEFAULTS: BackoffPolicy = { baseSeconds: 10, maxDelaySeconds: 3600, jitter: 0.2 };

describe("the retry backoff", () => {
  it.each([
    { attempt: 1, random: 0.5, want: 10 },
    { attempt: 2, random: 0.5, want: 20 },
    { attempt: 3, random: 0.5, want: 40 },
    { attempt: 9, random: 0.5, want: 2560 },
    { attempt: 10, random: 0.5, want: 3600 }, // capped
    { attempt: 500, random: 0.5, want: 3600 }, // no overflow however many attempts
    { attempt: 1, random: 0, want: 8 }, // -20%
    { attempt: 1, random: 0.999999, want: 12 }, // +20%
    { attempt: 10, random: 0, want: 2880 },
    { attempt: 0, random: 0.5, want: 10 },
  ])("attempt $attempt failed, random $random: $want s", ({ attempt, random, want }) => {
    expect(retryDelaySeconds(attempt, DEFAULTS, random)).toBe(want);
  });

  it.each([
    { base: 1, max: 1, jitter: 0.2, random: 0 }, // never below one second
    { base: 1, max: 60, jitter: 1, random: 0 },
  ])("waits at least a second (base $base, jitter $jitter)", ({ base, max, jitter, random }) => {
    expect(retryDelaySeconds(1, { baseSeconds: base, maxDelaySeconds: max, jitter }, random)).toBeGreaterThanOrEqual(1);
  });

  it("stops once the next attempt would fall after the retry window", () => {
    const now = new Date("2026-01-01T00:00:00Z");
    const until = new Date(now.getTime() + 30_000);
    expect(nextAttemptAt(1, now, until, DEFAULTS, 0.5)).toEqual(new Date(now.getTime() + 10_000));
    expect(nextAttemptAt(2, now, until, DEFAULTS, 0.5)).toEqual(new Date(now.getTime() + 20_000));
    expect(nextAttemptAt(3, now, until, DEFAULTS, 0.5)).toBeNull();
  });

  it("retries for the whole 24 hours with the default settings", () => {
    const offsets = schedule(24 * 3600, { ...DEFAULTS, jitter: 0 });
    expect(offsets.slice(0, 5)).toEqual([0, 10, 30, 70, 150]);
    expect(offsets[offsets.length - 1]).toBeGreaterThan(23 * 3600);
    // Nine doublings, then hourly: 32 attempts in the first day.
    expect(offsets).toHaveLength(32);
  });
});
