import type { V1Job, V1Pod } from "@kubernetes/client-node";
import type { RunSpec, RunStatus } from "../resources/run.ts";
import { mergeTimeline, podTimeline } from "./run-timeline.ts";
import { iso, jobCondition, pending, RUN_RULES, WARM_RUN_RULES, type RunFacts, type RunObservation } from "./run-rules.ts";
import type { RunTimelineMarks } from "../resources/run.ts";

// Pure: what the cluster says about a run (its Job and pod), turned into the
// run's phase, exit code and a human error. No I/O, so every failure mode
// (timeout, OOM, image pull, eviction, deleted pod, lost node) has a table
// test instead of a flaky cluster test. The decisions themselves are the
// named rules of run-rules.ts, asked in order; this file gathers the facts.

export type { RunObservation } from "./run-rules.ts";

export function observeRun(
  spec: Pick<RunSpec, "cancelRequested" | "timeoutSeconds">,
  previous: RunStatus | undefined,
  job: V1Job | null,
  pod: V1Pod | null,
  now: Date,
): RunObservation {
  const main = pod?.status?.containerStatuses?.find((c) => c.name === "main");
  const terminated = main?.state?.terminated;
  const facts: RunFacts = {
    spec,
    previous,
    job,
    pod,
    now,
    main,
    terminated,
    startTime: iso(main?.state?.running?.startedAt ?? terminated?.startedAt) ?? previous?.startTime,
    failed: jobCondition(job, "Failed") ?? jobCondition(job, "FailureTarget"),
  };
  const timeline = mergeTimeline(previous?.timeline, podTimeline(job, pod));
  for (const rule of RUN_RULES) {
    const decided = rule(facts);
    if (decided) return { ...decided, timeline };
  }
  return { ...pending(facts), timeline };
}

/** What a warm run's claim row says (src/domain/pools/pool-pods.ts): when each step happened, as the agent reported it. */
export interface WarmProgress {
  pool: string;
  claimedAt: Date | null;
  checkedOutAt: Date | null;
  environmentReadyAt: Date | null;
  startedAt: Date | null;
}

/** The start-up of a run on a warm pod: admitted when it claimed the pod; the rest as its agent reported. */
export function warmTimeline(w: WarmProgress): RunTimelineMarks {
  const marks: RunTimelineMarks = { warm: true, pool: w.pool };
  if (w.claimedAt) marks.admitted = w.claimedAt.toISOString();
  if (w.checkedOutAt) marks.checkedOut = w.checkedOutAt.toISOString();
  if (w.environmentReadyAt) marks.environmentReady = w.environmentReadyAt.toISOString();
  return marks;
}

/**
 * observeRun for a run on a warm pool's pod (issue 33): its pod and main container are older than the
 * run, so the run's start is when the agent started the command, and its timeline is the claim's.
 */
export function observeWarmRun(
  spec: Pick<RunSpec, "cancelRequested" | "timeoutSeconds">,
  previous: RunStatus | undefined,
  job: V1Job | null,
  pod: V1Pod | null,
  now: Date,
  warm: WarmProgress,
): RunObservation {
  const main = pod?.status?.containerStatuses?.find((c) => c.name === "main");
  const terminated = main?.state?.terminated;
  const facts: RunFacts = {
    spec,
    previous,
    job,
    pod,
    now,
    main,
    terminated,
    startTime: iso(warm.startedAt) ?? previous?.startTime,
    failed: jobCondition(job, "Failed") ?? jobCondition(job, "FailureTarget"),
  };
  const timeline = mergeTimeline(previous?.timeline, warmTimeline(warm));
  for (const rule of WARM_RUN_RULES) {
    const decided = rule(facts);
    if (decided) return { ...decided, timeline };
  }
  return { ...pending(facts), timeline };
}
