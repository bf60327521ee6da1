import type { V1ContainerStatus, V1Job, V1Pod } from "@kubernetes/client-node";
import type { RunTimelineMarks } from "../resources/run.ts";

// Pure: when a run passed each start-up step the cluster can tell about
// (design.md, Environments: the run's `timeline`), read from its Job and pod.
// Every mark comes from a time Kubernetes recorded, not from when codeplane
// happened to look, so a run observed only once, after it ended, still gets
// the whole timeline while its pod exists. Container times have whole-second
// precision (the kubelet's RFC 3339 timestamps).

const iso = (d: Date | string | undefined | null): string | undefined => (d ? new Date(d).toISOString() : undefined);

function startedAt(s: V1ContainerStatus): string | undefined {
  return iso(s.state?.running?.startedAt ?? s.state?.terminated?.startedAt);
}

/** An init container that finished successfully: when. */
function finished(pod: V1Pod | null, name: string): string | undefined {
  const t = pod?.status?.initContainerStatuses?.find((c) => c.name === name)?.state?.terminated;
  return t && t.exitCode === 0 ? iso(t.finishedAt) : undefined;
}

export function podTimeline(job: V1Job | null, pod: V1Pod | null): RunTimelineMarks {
  const marks: RunTimelineMarks = {};
  // Admitted: the Job controller started the Job (a Job created suspended, as Kueue does, only when resumed).
  const admitted = iso(job?.status?.startTime);
  if (admitted) marks.admitted = admitted;
  const scheduled = pod?.status?.conditions?.find((c) => c.type === "PodScheduled" && c.status === "True");
  if (scheduled?.lastTransitionTime) marks.scheduled = iso(scheduled.lastTransitionTime)!;
  // The first container to start had its image on the node: the pod stopped waiting for images.
  const starts = [...(pod?.status?.initContainerStatuses ?? []), ...(pod?.status?.containerStatuses ?? [])]
    .map(startedAt)
    .filter((t): t is string => t !== undefined)
    .sort();
  if (starts[0]) marks.imageReady = starts[0];
  const checkedOut = finished(pod, "checkout");
  if (checkedOut) marks.checkedOut = checkedOut;
  const environmentReady = finished(pod, "environment");
  if (environmentReady) marks.environmentReady = environmentReady;
  return marks;
}

/** A mark once known never moves: the previous value wins (a replaced pod does not rewrite the start-up). */
export function mergeTimeline(previous: RunTimelineMarks | undefined, next: RunTimelineMarks): RunTimelineMarks {
  return { ...next, ...previous };
}
