import type { LogLine } from "@codeplane/frames";
import { ATTEMPT_SEQ_STRIDE, type RunAttempt, type RunStatus } from "../resources/run.ts";

// Pure: a run's retry policy (design.md, Results: `retries`, 0..5, infrastructure
// failures only). A run may ask for up to five more attempts when the
// infrastructure loses its pod: the pod evicted, deleted or preempted, its node
// lost, its image not pulled. The command's own failure (a non-zero exit, the
// OOM killer, a timeout) and a cancel are never retried, nor are failures in
// codeplane's own steps (checkout, environment).
//
// Each attempt is a Job of its own (the first is named after the Run, later ones
// `<run>-attempt-<n>`), recorded in the Run's status before its Job is created,
// so a controller that restarts between the two creates the same Job once.
// Each attempt's lines keep their own range of the run's log: the pod's seq
// plus (attempt - 1) * ATTEMPT_SEQ_STRIDE, with a line of codeplane's own at the
// start of the range saying why the attempt began.

/** The failure reasons (run-rules.ts) an attempt may be retried after: the infrastructure's, not the command's. */
export const RETRYABLE_REASONS: ReadonlySet<string> = new Set(["PodLost", "PodDisrupted", "ImagePullFailed"]);

/** The Job of a run's attempt: the first keeps the Run's own name (as every run had before retries). */
export const attemptJobName = (runName: string, attempt: number): string => (attempt === 1 ? runName : `${runName}-attempt-${attempt}`);

/** Where an attempt's lines begin in the run's log; its marker line takes this seq, its pod's lines the ones after. */
export const attemptSeqOffset = (attempt: number): number => (attempt - 1) * ATTEMPT_SEQ_STRIDE;

/** The attempt under way (or the last one, once the run ended); undefined before the first Job. */
export const currentAttempt = (status: Pick<RunStatus, "attempts"> | undefined): RunAttempt | undefined => status?.attempts?.at(-1);

/** The number of the attempt under way: 1 until a retry was recorded. */
export const attemptNumber = (status: Pick<RunStatus, "attempts"> | undefined): number => currentAttempt(status)?.attempt ?? 1;

/** What an observation says, as far as retrying is concerned. */
export interface AttemptOutcome {
  phase: string;
  reason: string;
  error: string | null;
}

export type RetryDecision =
  /** Nothing to do with retries: the run goes on, or ends as observed. */
  | { kind: "none" }
  /** An infrastructure failure with an attempt left: record `next` (before its Job), and end the current one as `ended`. */
  | { kind: "retry"; next: RunAttempt; ended: { reason: string; message: string }; note: string; marker: LogLine }
  /** An infrastructure failure with no attempt left: the run fails, and its error says why it was not retried. */
  | { kind: "exhausted"; error: string };

export interface RetryInput {
  runName: string;
  retries: number | undefined;
  cancelRequested: boolean | undefined;
  status: Pick<RunStatus, "attempts"> | undefined;
  outcome: AttemptOutcome;
  now: Date;
}

export function decideRetry(i: RetryInput): RetryDecision {
  const { outcome } = i;
  if (outcome.phase !== "failed" || i.cancelRequested || !RETRYABLE_REASONS.has(outcome.reason)) return { kind: "none" };
  const retries = i.retries ?? 0;
  const attempt = attemptNumber(i.status);
  const why = outcome.error ?? outcome.reason;
  // A run that asked for no retries fails as every run always did: the error says what happened, nothing about retrying.
  if (retries === 0) return { kind: "exhausted", error: why };
  if (attempt > retries) return { kind: "exhausted", error: `${why} (attempt ${attempt} of ${retries + 1}: no retries left)` };
  const n = attempt + 1;
  const at = i.now.toISOString();
  const note = `attempt ${n} of ${retries + 1} started: attempt ${attempt} failed (${outcome.reason}): ${why}`;
  return {
    kind: "retry",
    next: { attempt: n, jobName: attemptJobName(i.runName, n), createdAt: at, logSeqOffset: attemptSeqOffset(n) },
    ended: { reason: outcome.reason, message: why.slice(0, 4096) },
    note,
    marker: { seq: attemptSeqOffset(n), stream: "stderr", ts: at, line: `[codeplane] ${note}` },
  };
}

/**
 * The attempts as a status records them after an observation: the first
 * recorded once its Job exists, the current one given its start and, once
 * the run ended, its end and how.
 */
export function trackAttempts(
  previous: readonly RunAttempt[] | undefined,
  facts: {
    runName: string;
    /** Record the first attempt now (its Job exists): otherwise only once the run ended. */
    jobExists: boolean;
    /** When the first attempt began, when it is recorded late (the Job's start); default now. */
    firstCreatedAt?: string | Date | undefined;
    now: Date;
    attemptStart: string | undefined;
    ended: { at: string; reason: string; message: string | null } | null;
  },
): RunAttempt[] | undefined {
  let attempts = previous ? [...previous] : [];
  if (attempts.length === 0) {
    if (!facts.jobExists && !facts.ended) return undefined;
    const createdAt = facts.firstCreatedAt ? new Date(facts.firstCreatedAt).toISOString() : facts.now.toISOString();
    attempts = [{ attempt: 1, jobName: attemptJobName(facts.runName, 1), createdAt, logSeqOffset: 0 }];
  }
  const last = attempts.length - 1;
  let current = attempts[last]!;
  if (facts.attemptStart && !current.startTime) current = { ...current, startTime: facts.attemptStart };
  if (facts.ended && !current.completionTime) {
    current = {
      ...current,
      completionTime: facts.ended.at,
      reason: facts.ended.reason,
      ...(facts.ended.message && { message: facts.ended.message.slice(0, 4096) }),
    };
  }
  attempts[last] = current;
  return attempts;
}

/** The status that records a retry: the lost attempt ended, the next one added (its Job not created yet). */
export function retriedStatus(previous: RunStatus, d: Extract<RetryDecision, { kind: "retry" }>, now: Date, runName: string): RunStatus {
  const before =
    trackAttempts(previous.attempts, {
      runName,
      jobExists: true,
      now,
      attemptStart: undefined,
      ended: { at: now.toISOString(), reason: d.ended.reason, message: d.ended.message },
    }) ?? [];
  return { ...previous, attempts: [...before, d.next], jobName: d.next.jobName };
}

/** A run may still start another attempt after the current one: its log must not be declared complete when the current pod's ends. */
export function mayRetry(retries: number | undefined, status: Pick<RunStatus, "attempts"> | undefined, cancelRequested: boolean | undefined): boolean {
  return !cancelRequested && attemptNumber(status) <= (retries ?? 0);
}
