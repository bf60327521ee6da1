import type { WorkloadSpec, WorkloadStatus } from "../resources/common.ts";
import { INSTALLATION_LABEL } from "../resources/labels.ts";
import { RUN_LIFECYCLE } from "../resources/run.ts";
import { isAdmitted, type WaitingRun } from "./admission.ts";
import type { LimiterSnapshot } from "./limiter.ts";
import type { WorkloadResource } from "./workload.ts";

// What the queue gauges (codeplane_runs, codeplane_run_queue_length: limiter.ts)
// read when Kueue admits runs and the built-in limiter is not there to gather
// it: the installation's Run resources by status, and its runs waiting for
// admission (not finished, not being deleted or cancelled, not admitted for
// their current attempt). CPU and memory per account are the built-in caps'
// and are not reported: Kueue's quotas have Kueue's own metrics. Pure.

type Resource = WorkloadResource<WorkloadSpec, WorkloadStatus>;

export function queueSnapshot(runs: readonly Resource[], installation: string): LimiterSnapshot {
  const byPhase = new Map<string, number>();
  const waiting: WaitingRun[] = [];
  for (const run of runs) {
    const owner = run.metadata.labels?.[INSTALLATION_LABEL];
    if (owner !== undefined && owner !== installation) continue;
    const phase = run.status?.phase ?? "pending";
    byPhase.set(phase, (byPhase.get(phase) ?? 0) + 1);
    const live = !RUN_LIFECYCLE.isTerminal(run.status?.phase) && !run.metadata.deletionTimestamp && !run.spec.cancelRequested;
    if (live && !isAdmitted(run.status)) waiting.push({ name: run.metadata.name, account: run.spec.accountId, order: run.metadata.name.replace(/^run-/, "") });
  }
  return { byPhase, waiting, used: new Map() };
}
