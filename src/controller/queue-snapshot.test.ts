import { describe, expect, it } from "vitest";
import type { WorkloadSpec, WorkloadStatus } from "../resources/common.ts";
import { INSTALLATION_LABEL } from "../resources/labels.ts";
import { queueSnapshot } from "./queue-snapshot.ts";
import type { WorkloadResource } from "./workload.ts";

// The queue gauges' source with Kueue: runs by status and the runs waiting for admission, per account.

let seq = 0;
function run(account: string, status?: WorkloadStatus, extra: { cancelRequested?: boolean; installation?: string; deleting?: boolean } = {}) {
  const id = `0190b1c2-3d4e-7f00-8a1b-${String(++seq).padStart(12, "0")}`;
  return {
    metadata: {
      name: `run-${id}`,
      namespace: "ns",
      labels: extra.installation ? { [INSTALLATION_LABEL]: extra.installation } : {},
      ...(extra.deleting && { deletionTimestamp: new Date() }),
    },
    spec: { accountId: account, repositoryId: "r", repositoryUrl: "u", commitHash: "c", timeoutSeconds: 60, cancelRequested: extra.cancelRequested },
    ...(status && { status }),
  } as WorkloadResource<WorkloadSpec, WorkloadStatus>;
}
const queued: WorkloadStatus = {
  phase: "pending",
  conditions: [{ type: "Admitted", status: "False", reason: "ClusterQuota", message: "", lastTransitionTime: "2026-01-01T00:00:00Z" }],
};
const admitted = (phase: string): WorkloadStatus => ({
  phase,
  conditions: [{ type: "Admitted", status: "True", reason: "Admitted", message: "", lastTransitionTime: "2026-01-01T00:00:00Z" }],
});

describe("queueSnapshot", () => {
  it("counts runs by status and lists the live runs not admitted, leaving out other installations', cancelled and deleted ones", () => {
    const runs = [
      run("a", queued),
      run("a"),
      run("a", admitted("running")),
      run("b", queued),
      run("b", admitted("completed")),
      run("b", queued, { cancelRequested: true }),
      run("b", queued, { deleting: true }),
      run("c", queued, { installation: "other" }),
      // A retry waiting for Kueue again: running, no longer admitted.
      run("c", { ...queued, phase: "running" }, { installation: "inst" }),
    ];
    const s = queueSnapshot(runs, "inst");
    expect(Object.fromEntries(s.byPhase)).toEqual({ pending: 5, running: 2, completed: 1 });
    expect(s.waiting.map((w) => w.account)).toEqual(["a", "a", "b", "c"]);
    expect(s.used.size).toBe(0);
  });
});
