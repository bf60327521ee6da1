import { describe, expect, it } from "vitest";
import { ATTEMPT_SEQ_STRIDE, type RunAttempt, type RunStatus } from "../resources/run.ts";
import {
  attemptJobName,
  attemptNumber,
  attemptSeqOffset,
  decideRetry,
  mayRetry,
  RETRYABLE_REASONS,
  retriedStatus,
  trackAttempts,
  type AttemptOutcome,
  type RetryInput,
} from "./run-retry.ts";
import { acrossAttempts, asAttempt } from "./run-workload.ts";
import type { RunObservation } from "./run-rules.ts";
import type { V1Job, V1Pod } from "@kubernetes/client-node";

// The retry policy as tables: which endings start another attempt, with what
// record, Event and marker line, and which never do.

const NAME = "run-0190b1c2-3d4e-7f00-8a1b-0000000000a1";
const NOW = new Date("2026-01-01T00:10:00Z");
const T0 = "2026-01-01T00:00:00.000Z";

const first: RunAttempt = { attempt: 1, jobName: NAME, createdAt: T0, startTime: T0, logSeqOffset: 0 };
const second: RunAttempt = { attempt: 2, jobName: `${NAME}-attempt-2`, createdAt: T0, logSeqOffset: ATTEMPT_SEQ_STRIDE };
const failed = (reason: string, error: string | null = `${reason} happened`): AttemptOutcome => ({ phase: "failed", reason, error });
const input = (outcome: AttemptOutcome, over: Partial<RetryInput> = {}): RetryInput => ({
  runName: NAME,
  retries: 1,
  cancelRequested: false,
  status: { attempts: [first] },
  outcome,
  now: NOW,
  ...over,
});

describe("decideRetry", () => {
  const none: [string, RetryInput][] = [
    ["still running", input({ phase: "running", reason: "Running", error: null })],
    ["completed", input({ phase: "completed", reason: "Completed", error: null })],
    ["the command exited non-zero", input(failed("NonZeroExit"))],
    ["the command ran out of memory", input(failed("OOMKilled"))],
    ["the run timed out", input(failed("TimedOut"))],
    ["checkout or environment failed (codeplane's own steps)", input(failed("PreprocessingFailed"))],
    ["cancelled", input({ phase: "cancelled", reason: "Cancelled", error: "cancelled by request" })],
    ["a lost pod after a cancel was asked", input(failed("PodLost"), { cancelRequested: true })],
    ["still waiting for the Job's condition", input({ phase: "running", reason: "AwaitingJobCondition", error: null })],
  ];
  it.each(none)("%s: nothing to do", (_name, i) => {
    expect(decideRetry(i)).toEqual({ kind: "none" });
  });

  const exhausted: [string, RetryInput, string][] = [
    [
      "no retries asked (absent): the error as it always was",
      input(failed("PodLost", "the run's pod was deleted"), { retries: undefined }),
      "the run's pod was deleted",
    ],
    ["retries: 0", input(failed("PodDisrupted", "pod was evicted"), { retries: 0 }), "pod was evicted"],
    [
      "the last attempt of one retry",
      input(failed("PodLost", "gone"), { retries: 1, status: { attempts: [first, second] } }),
      "gone (attempt 2 of 2: no retries left)",
    ],
    [
      "the last attempt of five retries",
      input(failed("ImagePullFailed", "no image"), {
        retries: 5,
        status: { attempts: [1, 2, 3, 4, 5, 6].map((n) => ({ ...first, attempt: n, jobName: attemptJobName(NAME, n), logSeqOffset: attemptSeqOffset(n) })) },
      }),
      "no image (attempt 6 of 6: no retries left)",
    ],
    ["an error without words: its reason", input(failed("PodLost", null), { retries: 0 }), "PodLost"],
  ];
  it.each(exhausted)("%s: the run fails, saying why it was not retried", (_name, i, error) => {
    expect(decideRetry(i)).toEqual({ kind: "exhausted", error });
  });

  const retried: [string, RetryInput, number, number][] = [
    ["a deleted pod, first attempt, one retry", input(failed("PodLost")), 2, 2],
    ["an evicted pod", input(failed("PodDisrupted")), 2, 2],
    ["an image that could not be pulled", input(failed("ImagePullFailed")), 2, 2],
    ["no attempt recorded yet counts as the first", input(failed("PodLost"), { status: undefined, retries: 3 }), 2, 4],
    ["the second attempt of three retries", input(failed("PodLost"), { retries: 3, status: { attempts: [first, second] } }), 3, 4],
  ];
  it.each(retried)("%s: another attempt, recorded before its Job", (_name, i, n, of) => {
    const d = decideRetry(i);
    expect(d.kind).toBe("retry");
    if (d.kind !== "retry") return;
    expect(d.next).toEqual({ attempt: n, jobName: `${NAME}-attempt-${n}`, createdAt: NOW.toISOString(), logSeqOffset: (n - 1) * ATTEMPT_SEQ_STRIDE });
    expect(d.ended).toEqual({ reason: i.outcome.reason, message: i.outcome.error });
    expect(d.note).toBe(`attempt ${n} of ${of} started: attempt ${n - 1} failed (${i.outcome.reason}): ${i.outcome.error}`);
    expect(d.marker).toEqual({ seq: (n - 1) * ATTEMPT_SEQ_STRIDE, stream: "stderr", ts: NOW.toISOString(), line: `[codeplane] ${d.note}` });
  });

  it("retries only the infrastructure's failures", () => {
    expect([...RETRYABLE_REASONS].sort()).toEqual(["ImagePullFailed", "PodDisrupted", "PodLost"]);
  });
});

describe("attempt names and numbering", () => {
  it.each([
    [1, NAME, 0],
    [2, `${NAME}-attempt-2`, ATTEMPT_SEQ_STRIDE],
    [6, `${NAME}-attempt-6`, 5 * ATTEMPT_SEQ_STRIDE],
  ])("attempt %i: Job %s, lines from seq %i", (n, job, offset) => {
    expect(attemptJobName(NAME, n)).toBe(job);
    expect(job.length).toBeLessThanOrEqual(63);
    expect(attemptSeqOffset(n)).toBe(offset);
  });

  it("keeps every attempt's seq a safe integer", () => {
    expect(Number.isSafeInteger(attemptSeqOffset(6) + ATTEMPT_SEQ_STRIDE)).toBe(true);
  });

  it.each([
    [undefined, 1],
    [{ attempts: [] }, 1],
    [{ attempts: [first] }, 1],
    [{ attempts: [first, second] }, 2],
  ] as [RunStatus | undefined, number][])("attemptNumber(%j) = %i", (status, n) => {
    expect(attemptNumber(status)).toBe(n);
  });

  it.each([
    [undefined, undefined, false, false],
    [1, undefined, false, true],
    [1, { attempts: [first] }, false, true],
    [1, { attempts: [first, second] }, false, false],
    [2, { attempts: [first, second] }, false, true],
    [2, { attempts: [first] }, true, false],
  ] as [number | undefined, RunStatus | undefined, boolean, boolean][])("mayRetry(retries %s, %j, cancel %s) = %s", (retries, status, cancel, expected) => {
    expect(mayRetry(retries, status, cancel)).toBe(expected);
  });
});

describe("trackAttempts", () => {
  const base = { runName: NAME, now: NOW, attemptStart: undefined, ended: null };
  it("records nothing before the first Job, unless the run ended", () => {
    expect(trackAttempts(undefined, { ...base, jobExists: false })).toBeUndefined();
    expect(trackAttempts(undefined, { ...base, jobExists: false, ended: { at: T0, reason: "Cancelled", message: "cancelled by request" } })).toEqual([
      { attempt: 1, jobName: NAME, createdAt: NOW.toISOString(), logSeqOffset: 0, completionTime: T0, reason: "Cancelled", message: "cancelled by request" },
    ]);
  });

  it("records the first attempt once its Job exists, from when its Job started when known", () => {
    expect(trackAttempts(undefined, { ...base, jobExists: true, firstCreatedAt: T0 })).toEqual([{ attempt: 1, jobName: NAME, createdAt: T0, logSeqOffset: 0 }]);
  });

  it("gives the current attempt its start once, then its end once", () => {
    const started = trackAttempts([first, second], { ...base, jobExists: true, attemptStart: "2026-01-01T00:05:00.000Z" })!;
    expect(started[1]).toEqual({ ...second, startTime: "2026-01-01T00:05:00.000Z" });
    expect(started[0]).toBe(first);
    const again = trackAttempts(started, { ...base, jobExists: true, attemptStart: "2026-01-01T00:06:00.000Z" })!;
    expect(again[1]!.startTime).toBe("2026-01-01T00:05:00.000Z");
    const ended = trackAttempts(again, { ...base, jobExists: true, ended: { at: "2026-01-01T00:09:00.000Z", reason: "Completed", message: null } })!;
    expect(ended[1]).toEqual({ ...second, startTime: "2026-01-01T00:05:00.000Z", completionTime: "2026-01-01T00:09:00.000Z", reason: "Completed" });
    const later = trackAttempts(ended, { ...base, jobExists: true, ended: { at: "2026-01-01T00:10:00.000Z", reason: "Finished", message: "x" } })!;
    expect(later).toEqual(ended);
  });
});

describe("retriedStatus", () => {
  it("ends the lost attempt and adds the next, whose Job becomes the run's", () => {
    const d = decideRetry(input(failed("PodLost", "the run's pod was deleted before it finished")));
    if (d.kind !== "retry") throw new Error("expected a retry");
    const previous: RunStatus = { phase: "running", startTime: T0, jobName: NAME, podName: "pod-a", attempts: [first] };
    expect(retriedStatus(previous, d, NOW, NAME)).toEqual({
      ...previous,
      jobName: `${NAME}-attempt-2`,
      attempts: [
        { ...first, completionTime: NOW.toISOString(), reason: "PodLost", message: "the run's pod was deleted before it finished" },
        { attempt: 2, jobName: `${NAME}-attempt-2`, createdAt: NOW.toISOString(), logSeqOffset: ATTEMPT_SEQ_STRIDE },
      ],
    });
  });
});

describe("acrossAttempts: a later attempt's observation as the run's", () => {
  const spec = { runId: "r", retries: 1, cancelRequested: false } as never;
  const obs = (over: Partial<RunObservation>): RunObservation => ({
    phase: "pending",
    reason: "Pending",
    error: null,
    exitCode: null,
    stopJob: false,
    ...over,
  });
  const running = (startedAt: string): V1Pod => ({
    status: { containerStatuses: [{ name: "main", state: { running: { startedAt: new Date(startedAt) } } } as never] },
  });

  it("keeps the run's phase and start while the next attempt starts over", () => {
    const previous: RunStatus = { phase: "running", startTime: T0, attempts: [first, second] };
    expect(acrossAttempts(spec, previous, obs({ phase: "preprocessing", reason: "Preprocessing" }), null)).toMatchObject({ phase: "running" });
    const out = acrossAttempts(spec, previous, obs({ phase: "running", startTime: "2026-01-01T00:05:00.000Z" }), running("2026-01-01T00:05:00Z"));
    expect(out).toMatchObject({ phase: "running", startTime: T0, attemptStartTime: "2026-01-01T00:05:00.000Z" });
  });

  it("leaves the first attempt as observed", () => {
    const previous: RunStatus = { phase: "preprocessing", attempts: [first] };
    expect(acrossAttempts(spec, previous, obs({ phase: "pending" }), null)).toMatchObject({ phase: "pending" });
  });

  it("says why the last attempt's infrastructure failure is not retried", () => {
    const previous: RunStatus = { phase: "running", startTime: T0, attempts: [first, second] };
    const out = acrossAttempts(spec, previous, obs({ phase: "failed", reason: "PodLost", error: "gone" }), null);
    expect(out.error).toBe("gone (attempt 2 of 2: no retries left)");
  });
});

describe("asAttempt: the Job of one attempt", () => {
  const job: V1Job = { metadata: { name: NAME, labels: { a: "b" } }, spec: { template: { metadata: { labels: { a: "b" } }, spec: { containers: [] } } } };
  it.each([
    [1, NAME, "0"],
    [3, `${NAME}-attempt-3`, String(2 * ATTEMPT_SEQ_STRIDE)],
  ])("attempt %i: named %s, its pods annotated with the offset %s", (n, name, offset) => {
    const made = asAttempt(job, NAME, n);
    expect(made.metadata).toEqual({ name, labels: { a: "b" } });
    expect(made.spec!.template.metadata).toEqual({
      labels: { a: "b" },
      annotations: { "codeplane.dev/attempt": String(n), "codeplane.dev/log-seq-offset": offset },
    });
    expect(job.metadata!.name).toBe(NAME);
  });
});
