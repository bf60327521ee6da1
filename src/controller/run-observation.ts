import type { V1ContainerStatus, V1Job, V1Pod } from "@kubernetes/client-node";
import type { RunPhase, RunSpec, RunStatus } from "../resources/run.ts";
import { RUN_LIFECYCLE } from "../resources/run.ts";
import type { WorkloadObservation } from "./workload.ts";

// Pure: what the cluster says about a run (its Job and pod), turned into the
// run's phase, exit code and a human error. No I/O, so every failure mode
// (timeout, OOM, image pull, eviction, deleted pod, lost node) has a table
// test instead of a flaky cluster test.

export interface RunObservation extends WorkloadObservation {
  phase: RunPhase;
}

const IMAGE_PULL_REASONS = new Set(["ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"]);

const iso = (d: Date | string | undefined | null): string | undefined => (d ? new Date(d).toISOString() : undefined);

function jobCondition(job: V1Job, type: string) {
  return job.status?.conditions?.find((c) => c.type === type && c.status === "True");
}

function mainStatus(pod: V1Pod | null): V1ContainerStatus | undefined {
  return pod?.status?.containerStatuses?.find((c) => c.name === "main");
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

/** Why a pod went away or stopped without its container deciding to. */
function disruption(pod: V1Pod | null): string | null {
  if (!pod) return null;
  if (pod.status?.reason === "Evicted") return `pod was evicted: ${pod.status.message ?? "node under resource pressure"}`;
  if (pod.status?.reason === "NodeLost" || pod.status?.reason === "UnexpectedAdmissionError") {
    return `pod was lost with its node (${pod.status.reason})`;
  }
  const target = pod.status?.conditions?.find((c) => c.type === "DisruptionTarget" && c.status === "True");
  if (target) {
    const why: Record<string, string> = {
      DeletionByTaintManager: "its node became unavailable",
      DeletionByPodGC: "its node was lost",
      PreemptionByScheduler: "it was preempted by a higher-priority pod",
      TerminationByKubelet: "the kubelet terminated it",
      EvictionByEvictionAPI: "it was evicted",
    };
    return `pod was stopped because ${why[target.reason ?? ""] ?? (target.message || target.reason || "of a disruption")}`;
  }
  return null;
}

export function observeRun(
  spec: Pick<RunSpec, "cancelRequested" | "timeoutSeconds">,
  previous: RunStatus | undefined, job: V1Job | null, pod: V1Pod | null, now: Date): RunObservation {
  const main = mainStatus(pod);
  const terminated = main?.state?.terminated;
  const startTime = iso(main?.state?.running?.startedAt ?? terminated?.startedAt) ?? previous?.startTime;
  const base = { startTime, stopJob: false };
  const finish = (phase: RunPhase, reason: string, error: string | null, exitCode: number | null, stopJob = false): RunObservation => ({
    phase,
    reason,
    error,
    exitCode,
    startTime,
    completionTime: iso(terminated?.finishedAt) ?? iso(job?.status?.completionTime) ?? previous?.completionTime ?? now.toISOString(),
    stopJob,
  });

  // A finished run never changes again: an old or reordered event can't move it back.
  if (previous?.phase && RUN_LIFECYCLE.isTerminal(previous.phase)) {
    return {
      phase: previous.phase,
      reason: "Finished",
      error: previous.error ?? null,
      exitCode: previous.exitCode ?? null,
      startTime: previous.startTime,
      completionTime: previous.completionTime,
      stopJob: false,
    };
  }

  if (spec.cancelRequested) return finish("cancelled", "Cancelled", "cancelled by request", terminated?.exitCode ?? null, true);
  if (!job) return { ...base, phase: "pending", reason: "Pending", error: null, exitCode: null };

  const pull = imagePullFailure(pod);
  if (pull) return finish("failed", "ImagePullFailed", pull, null, true);

  if (jobCondition(job, "Complete") || jobCondition(job, "SuccessCriteriaMet")) {
    return finish("completed", "Completed", null, terminated?.exitCode ?? 0);
  }

  const failed = jobCondition(job, "Failed") ?? jobCondition(job, "FailureTarget");
  const deadline = failed?.reason === "DeadlineExceeded";
  if (deadline) return finish("failed", "TimedOut", `timed out after ${spec.timeoutSeconds}s`, terminated?.exitCode ?? null);

  if (terminated) {
    if (terminated.reason === "OOMKilled") {
      return finish("failed", "OOMKilled", "the run ran out of memory (OOMKilled): raise the compute type's memory limit", terminated.exitCode ?? 137);
    }
    if (terminated.exitCode === 0) return finish("completed", "Completed", null, 0);
    return finish("failed", "NonZeroExit", `command exited with code ${terminated.exitCode}`, terminated.exitCode ?? null);
  }

  const init = failedInit(pod);
  if (init) return finish("failed", "PreprocessingFailed", `preprocessing failed (${init.name}): ${init.detail}`, null);

  const disrupted = disruption(pod);
  if (disrupted && (failed || pod?.status?.phase === "Failed")) return finish("failed", "PodDisrupted", disrupted, null);

  if (failed) return finish("failed", "PodLost", disrupted ?? "the run's pod was deleted before it finished", null);
  // The pod is gone and counted as failed, but the Job has not said why yet:
  // its controller deletes the pod at the deadline before the condition that
  // says DeadlineExceeded reaches us, and a finished run never changes again,
  // so deciding now could call a timeout a lost pod. The condition follows
  // (backoffLimit 0); the backstop below ends the run if it never does.
  const awaitingCondition = !pod && (job.status?.failed ?? 0) > 0;

  // Backstop: if the cluster never reports the deadline (say, the Job
  // controller is down), the run still ends.
  const started = job.status?.startTime ? new Date(job.status.startTime).getTime() : null;
  if (started !== null && now.getTime() > started + (spec.timeoutSeconds + 120) * 1000) {
    return finish("failed", "TimedOut", `timed out after ${spec.timeoutSeconds}s`, null, true);
  }

  if (awaitingCondition) return { ...base, phase: previous?.phase ?? "pending", reason: "AwaitingJobCondition", error: null, exitCode: null };
  if (main?.state?.running) return { ...base, phase: "running", reason: "Running", error: null, exitCode: null };
  const scheduled = pod?.status?.conditions?.some((c) => c.type === "PodScheduled" && c.status === "True");
  if (scheduled) return { ...base, phase: "preprocessing", reason: "Preprocessing", error: null, exitCode: null };
  return { ...base, phase: "pending", reason: "Pending", error: null, exitCode: null };
}
