import type { V1ContainerState, V1ContainerStatus, V1Job, V1JobCondition, V1Pod } from "@kubernetes/client-node";
import type { RunPhase, RunSpec, RunStatus, RunTimelineMarks } from "../resources/run.ts";
import { RUN_LIFECYCLE } from "../resources/run.ts";
import type { WorkloadObservation } from "./workload.ts";

// The rules that turn what the cluster says about a run into its phase, as a
// chain (cert-manager's policy chain is the model): each rule is a small pure
// function that either decides or passes (undefined), and run-observation.ts
// asks them in the order of RUN_RULES. The order is the policy: a finished run
// never moves, a cancel beats everything else, a container's own exit beats
// what the pod's disappearance suggests, and so on down to "pending".

export interface RunObservation extends WorkloadObservation {
  phase: RunPhase;
  /** The start-up steps known so far (run-timeline.ts), the previous status's merged in; set by observeRun. */
  timeline?: RunTimelineMarks;
  /** When the current attempt's command started (a retried run's startTime stays its first attempt's); set by run-workload.ts. */
  attemptStartTime?: string;
}

/** Everything a rule may look at, gathered once per observation. */
export interface RunFacts {
  spec: Pick<RunSpec, "cancelRequested" | "timeoutSeconds">;
  previous: RunStatus | undefined;
  /** Null only until the Job exists; every rule after noJobYet sees one. */
  job: V1Job | null;
  pod: V1Pod | null;
  now: Date;
  /** The main container's status, once the pod has one. */
  main: V1ContainerStatus | undefined;
  terminated: NonNullable<V1ContainerState["terminated"]> | undefined;
  startTime: string | undefined;
  /** The Job's Failed (or FailureTarget) condition, when it has one. */
  failed: V1JobCondition | undefined;
}

export type RunRule = (facts: RunFacts) => RunObservation | undefined;

const IMAGE_PULL_REASONS = new Set(["ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"]);

export const iso = (d: Date | string | undefined | null): string | undefined => (d ? new Date(d).toISOString() : undefined);

export function jobCondition(job: V1Job | null, type: string): V1JobCondition | undefined {
  return job?.status?.conditions?.find((c) => c.type === type && c.status === "True");
}

/** A decided, final observation: the run stops here. */
function finish(f: RunFacts, phase: RunPhase, reason: string, error: string | null, exitCode: number | null, stopJob = false): RunObservation {
  const completionTime = iso(f.terminated?.finishedAt) ?? iso(f.job?.status?.completionTime) ?? f.previous?.completionTime ?? f.now.toISOString();
  return { phase, reason, error, exitCode, startTime: f.startTime, completionTime, stopJob };
}

/** A run still on its way: no error, no exit code, no completion time. */
function ongoing(f: RunFacts, phase: RunPhase, reason: string): RunObservation {
  return { startTime: f.startTime, stopJob: false, phase, reason, error: null, exitCode: null };
}

function imagePullFailure(pod: V1Pod | null): string | null {
  for (const s of [...(pod?.status?.initContainerStatuses ?? []), ...(pod?.status?.containerStatuses ?? [])]) {
    const w = s.state?.waiting;
    if (w?.reason && IMAGE_PULL_REASONS.has(w.reason)) {
      return `image pull failed for ${s.image}: ${w.reason}${w.message ? ` (${w.message})` : ""}`;
    }
  }
  return null;
}

function failedInit(pod: V1Pod | null): { name: string; detail: string } | null {
  for (const s of pod?.status?.initContainerStatuses ?? []) {
    const t = s.state?.terminated;
    if (t && t.exitCode !== 0) {
      const detail = (t.message ?? "").trim().split("\n").slice(-5).join("\n") || `exit code ${t.exitCode}`;
      return { name: s.name, detail };
    }
  }
  return null;
}

const DISRUPTION_CAUSES: Record<string, string> = {
  DeletionByTaintManager: "its node became unavailable",
  DeletionByPodGC: "its node was lost",
  PreemptionByScheduler: "it was preempted by a higher-priority pod",
  TerminationByKubelet: "the kubelet terminated it",
  EvictionByEvictionAPI: "it was evicted",
};

/** Why a pod went away or stopped without its container deciding to. */
export function disruption(pod: V1Pod | null): string | null {
  const reason = pod?.status?.reason;
  if (reason === "Evicted") return `pod was evicted: ${pod?.status?.message ?? "node under resource pressure"}`;
  if (reason === "NodeLost" || reason === "UnexpectedAdmissionError") return `pod was lost with its node (${reason})`;
  const target = pod?.status?.conditions?.find((c) => c.type === "DisruptionTarget" && c.status === "True");
  if (!target) return null;
  return `pod was stopped because ${DISRUPTION_CAUSES[target.reason ?? ""] ?? (target.message || target.reason || "of a disruption")}`;
}

/** A finished run never changes again: an old or reordered event can't move it back. */
export const finishedStaysFinished: RunRule = ({ previous }) => {
  if (!previous?.phase || !RUN_LIFECYCLE.isTerminal(previous.phase)) return undefined;
  return {
    phase: previous.phase,
    reason: "Finished",
    error: previous.error ?? null,
    exitCode: previous.exitCode ?? null,
    startTime: previous.startTime,
    completionTime: previous.completionTime,
    stopJob: false,
  };
};

export const cancelRequested: RunRule = (f) =>
  f.spec.cancelRequested ? finish(f, "cancelled", "Cancelled", "cancelled by request", f.terminated?.exitCode ?? null, true) : undefined;

export const noJobYet: RunRule = (f) => (f.job ? undefined : ongoing(f, "pending", "Pending"));

export const imagePullFailed: RunRule = (f) => {
  const pull = imagePullFailure(f.pod);
  return pull ? finish(f, "failed", "ImagePullFailed", pull, null, true) : undefined;
};

export const jobCompleted: RunRule = (f) =>
  jobCondition(f.job, "Complete") || jobCondition(f.job, "SuccessCriteriaMet")
    ? finish(f, "completed", "Completed", null, f.terminated?.exitCode ?? 0)
    : undefined;

export const deadlineExceeded: RunRule = (f) =>
  f.failed?.reason === "DeadlineExceeded"
    ? finish(f, "failed", "TimedOut", `timed out after ${f.spec.timeoutSeconds}s`, f.terminated?.exitCode ?? null)
    : undefined;

/**
 * What the runner (packages/runner/src/entrypoint.ts) writes to the main container's termination
 * message when it stopped the command at the run's timeout itself, to collect its outputs before the
 * Job's deadline (which is later by CODEPLANE_RUN_OUTPUT_COLLECT_SECONDS).
 */
export const RUNNER_TIMED_OUT = "codeplane: timed out";

/** The runner stopped the command at the run's timeout (and then sent its outputs): a timeout, as the Job's deadline would be. */
export const runnerTimedOut: RunRule = (f) =>
  f.terminated?.message?.startsWith(RUNNER_TIMED_OUT)
    ? finish(f, "failed", "TimedOut", `timed out after ${f.spec.timeoutSeconds}s`, f.terminated.exitCode ?? null)
    : undefined;

/** The main container ended by itself: its exit code (or the OOM killer) decides. */
export const mainExited: RunRule = (f) => {
  const t = f.terminated;
  if (!t) return undefined;
  if (t.reason === "OOMKilled") {
    return finish(f, "failed", "OOMKilled", "the run ran out of memory (OOMKilled): raise the compute type's memory limit", t.exitCode ?? 137);
  }
  if (t.exitCode === 0) return finish(f, "completed", "Completed", null, 0);
  return finish(f, "failed", "NonZeroExit", `command exited with code ${t.exitCode}`, t.exitCode ?? null);
};

export const preprocessingFailed: RunRule = (f) => {
  const init = failedInit(f.pod);
  return init ? finish(f, "failed", "PreprocessingFailed", `preprocessing failed (${init.name}): ${init.detail}`, null) : undefined;
};

export const podDisrupted: RunRule = (f) => {
  const disrupted = disruption(f.pod);
  return disrupted && (f.failed || f.pod?.status?.phase === "Failed") ? finish(f, "failed", "PodDisrupted", disrupted, null) : undefined;
};

export const podLost: RunRule = (f) =>
  f.failed ? finish(f, "failed", "PodLost", disruption(f.pod) ?? "the run's pod was deleted before it finished", null) : undefined;

/**
 * Backstop: if the cluster never reports the deadline (say, the Job
 * controller is down), the run still ends.
 */
export const deadlineBackstop: RunRule = (f) => {
  const started = f.job?.status?.startTime ? new Date(f.job.status.startTime).getTime() : null;
  // The Job's own deadline: the run's timeout, plus the output collection margin when the Job has one.
  const deadline = f.job?.spec?.activeDeadlineSeconds ?? f.spec.timeoutSeconds;
  if (started === null || f.now.getTime() <= started + (Math.max(deadline, f.spec.timeoutSeconds) + 120) * 1000) return undefined;
  return finish(f, "failed", "TimedOut", `timed out after ${f.spec.timeoutSeconds}s`, null, true);
};

/**
 * The pod is gone and counted as failed, but the Job has not said why yet:
 * its controller deletes the pod at the deadline before the condition that
 * says DeadlineExceeded reaches us, and a finished run never changes again,
 * so deciding now could call a timeout a lost pod. The condition follows
 * (backoffLimit 0); deadlineBackstop ends the run if it never does.
 */
export const awaitingJobCondition: RunRule = (f) =>
  !f.pod && (f.job?.status?.failed ?? 0) > 0 ? ongoing(f, f.previous?.phase ?? "pending", "AwaitingJobCondition") : undefined;

export const mainRunning: RunRule = (f) => (f.main?.state?.running ? ongoing(f, "running", "Running") : undefined);

export const podScheduled: RunRule = (f) =>
  f.pod?.status?.conditions?.some((c) => c.type === "PodScheduled" && c.status === "True") ? ongoing(f, "preprocessing", "Preprocessing") : undefined;

/** The last word: nothing said otherwise, so the run waits for its pod. */
export const pending = (f: RunFacts): RunObservation => ongoing(f, "pending", "Pending");

/**
 * What the warm agent (packages/runner/src/warm.ts) writes to the main container's termination message
 * when the checkout or the environment's restore failed, before any command ran.
 */
export const WARM_PREPROCESSING_FAILED = "codeplane: preprocessing failed";

/** A warm pod's agent could not check out or restore: the run failed in preprocessing, as a cold one's init container would. */
export const warmPreprocessingFailed: RunRule = (f) =>
  f.terminated?.message?.startsWith(WARM_PREPROCESSING_FAILED)
    ? finish(f, "failed", "PreprocessingFailed", f.terminated.message.slice(WARM_PREPROCESSING_FAILED.length + 2).trim() || "preprocessing failed", null)
    : undefined;

/**
 * A warm pod's main container runs from before the run existed: the run is running once its agent
 * said the command started (startTime), and preprocessing until then.
 */
export const warmMainRunning: RunRule = (f) =>
  f.main?.state?.running ? (f.startTime ? ongoing(f, "running", "Running") : ongoing(f, "preprocessing", "WarmPreprocessing")) : undefined;

/** The chain, in the order it is asked. */
export const RUN_RULES: readonly RunRule[] = [
  finishedStaysFinished,
  cancelRequested,
  noJobYet,
  imagePullFailed,
  jobCompleted,
  deadlineExceeded,
  runnerTimedOut,
  mainExited,
  preprocessingFailed,
  podDisrupted,
  podLost,
  deadlineBackstop,
  awaitingJobCondition,
  mainRunning,
  podScheduled,
];

/** The chain for a run on a warm pool's pod: the same, but for the agent's preprocessing and when it started. */
export const WARM_RUN_RULES: readonly RunRule[] = RUN_RULES.flatMap((rule) =>
  rule === mainExited ? [warmPreprocessingFailed, mainExited] : rule === mainRunning ? [warmMainRunning] : [rule],
);
