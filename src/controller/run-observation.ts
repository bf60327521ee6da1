import type { V1Job, V1Pod } from "@kubernetes/client-node";
import type { RunSpec, RunStatus } from "../resources/run.ts";
import { mergeTimeline, podTimeline } from "./run-timeline.ts";
import { iso, jobCondition, pending, RUN_RULES, WARM_RUN_RULES, type RunFacts, type RunObservation, type RunRule } from "./run-rules.ts";
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
  const main = mainContainer(pod);
  const facts = runFacts(spec, previous, job, pod, now, iso(main?.state?.running?.startedAt ?? main?.state?.terminated?.startedAt));
  return decide(RUN_RULES, facts, mergeTimeline(previous?.timeline, podTimeline(job, pod)));
}

const mainContainer = (pod: V1Pod | null) => pod?.status?.containerStatuses?.find((c) => c.name === "main");

/** What the rules look at; `started`: when the command started, as far as this observation can tell. */
function runFacts(
  spec: Pick<RunSpec, "cancelRequested" | "timeoutSeconds">,
  previous: RunStatus | undefined,
  job: V1Job | null,
  pod: V1Pod | null,
  now: Date,
  started: string | undefined,
): RunFacts {
  const main = mainContainer(pod);
  return {
    spec,
    previous,
    job,
    pod,
    now,
    main,
    terminated: main?.state?.terminated,
    startTime: started ?? previous?.startTime,
    failed: jobCondition(job, "Failed") ?? jobCondition(job, "FailureTarget"),
  };
}

/** The first rule that decides, else pending; with the run's timeline. */
function decide(rules: readonly RunRule[], facts: RunFacts, timeline: RunObservation["timeline"]): RunObservation {
  for (const rule of rules) {
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
  return decide(WARM_RUN_RULES, runFacts(spec, previous, job, pod, now, iso(warm.startedAt)), mergeTimeline(previous?.timeline, warmTimeline(warm)));
}
