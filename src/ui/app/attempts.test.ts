import { describe, expect, it } from "vitest";
import { attemptNote, attemptsKey, type AttemptsOfRun, type RunAttempt } from "./attempts.ts";

const attempt = (n: number, over: Partial<RunAttempt> = {}): RunAttempt => ({
  attempt: n,
  started_at: null,
  ended_at: null,
  reason: null,
  error: null,
  first_seq: n === 1 ? 1 : (n - 1) * 1e9,
  ...over,
});
const run = (retries: number | undefined, attempts: RunAttempt[] | undefined): AttemptsOfRun => ({
  run_id: "r",
  run_config: retries === undefined ? {} : { retries },
  ...(attempts && { attempts }),
});

describe("attemptNote", () => {
  it.each([
    ["no retries, one attempt", run(0, [attempt(1)]), null],
    ["no retries, none yet", run(0, []), null],
    ["a run older than retries", run(undefined, undefined), null],
    ["retries, before its first Job", run(2, []), "attempt 1 of 3"],
    ["retries, on its first attempt", run(2, [attempt(1)]), "attempt 1 of 3"],
    ["retried once", run(2, [attempt(1, { reason: "PodLost" }), attempt(2)]), "attempt 2 of 3"],
    ["out of retries", run(1, [attempt(1), attempt(2)]), "attempt 2 of 2"],
    // Attempts recorded beyond the policy (it cannot shrink, but the count never reads "3 of 2").
    ["more attempts than the policy", run(0, [attempt(1), attempt(2)]), "attempt 2 of 2"],
  ])("%s → %s", (_name, r, note) => {
    expect(attemptNote(r)).toBe(note);
  });
});

describe("attemptsKey", () => {
  it("changes when an attempt does, and is empty for a run that shows no attempts", () => {
    const one = run(2, [attempt(1)]);
    expect(attemptsKey(one)).not.toBe(attemptsKey(run(2, [attempt(1, { ended_at: "2026-11-22T10:00:00Z", reason: "PodLost" })])));
    expect(attemptsKey(run(0, [attempt(1)]))).toBe("");
  });
});
