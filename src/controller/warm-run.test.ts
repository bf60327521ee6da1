import type { V1Job, V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { Unreconcilable } from "../domain/workloads/unreconcilable.ts";
import type { PoolAssignment } from "../domain/pools/pool-pods.ts";
import { POOL_LABEL } from "../resources/warm-pools.ts";
import type { RunStatus } from "../resources/run.ts";
import { aPod, aRun, NAMESPACE, RUN } from "./testing/builders.ts";
import { runWorld } from "./testing/fakes.ts";
import type { ClaimRequest, WarmClaim } from "./warm-pools.ts";
import type { WarmProgress } from "./run-observation.ts";
import { WARM_STARTING_POLL_MS } from "./run-workload.ts";

// A run on a warm pool's pod (issue 33), through the reconciler with fakes:
// it claims instead of creating a Job and a Secret, follows the pool Job it
// was given, and reads its start from the claim, not from its pod.

const POOL_JOB = "warm-py-0123456789ab";
const CLAIMED = new Date("2026-01-01T00:09:30.000Z");
const STARTED = new Date("2026-01-01T00:09:31.000Z");

const poolJob = (): V1Job => ({
  apiVersion: "batch/v1",
  kind: "Job",
  metadata: { name: POOL_JOB, namespace: NAMESPACE, labels: { [POOL_LABEL]: "py", "codeplane.dev/run": RUN.id } },
  spec: { template: {}, activeDeadlineSeconds: 700 },
  status: { active: 1, startTime: new Date("2026-01-01T00:01:00.000Z") },
});

/** Warm pools that claim (or not) and report progress as given, recording what they were asked. */
function warm(claim: WarmClaim | null | Error, progress: Partial<WarmProgress> | null = null) {
  const asked: { requests: ClaimRequest[]; assignments: PoolAssignment[] } = { requests: [], assignments: [] };
  return {
    asked,
    pools: {
      async claim(r: ClaimRequest) {
        asked.requests.push(r);
        if (claim instanceof Error) throw claim;
        if (claim) asked.assignments.push(await r.assignment());
        return claim;
      },
      async progress() {
        return (
          progress && { pool: "py", state: "assigned" as const, claimedAt: CLAIMED, checkedOutAt: null, environmentReadyAt: null, startedAt: null, ...progress }
        );
      },
    },
  };
}

const warmPod = (): V1Pod => {
  const pod = aPod("warm-py-0123456789ab-x").running("2026-01-01T00:01:05.000Z").build(RUN);
  // The Job controller labels a Job's pods with its name: the pool Job's, which the run adopted.
  pod.metadata!.labels = { ...pod.metadata!.labels, [POOL_LABEL]: "py", "job-name": POOL_JOB };
  return pod;
};

describe("a run on a warm pool's pod", () => {
  it("claims a waiting pod instead of making a Job or a Secret, and follows the pool's Job from then on", async () => {
    const w = warm({ jobName: POOL_JOB, pool: "py", poolPodId: "pp-1" });
    const { reconciler, recorded } = runWorld({ resource: aRun().build(), env: { API_TOKEN: "t0ken" }, warm: w.pools, otherJob: poolJob() });
    await reconciler.reconcile(RUN.name);
    expect(recorded.actions.some((a) => /^(createSecret|createJob)/.test(a))).toBe(false);
    expect(recorded.patched.at(-1)).toMatchObject({ jobName: POOL_JOB });
    // The Run becomes the Job's owner, with the run's labels.
    expect(w.asked.requests[0]).toMatchObject({
      runId: RUN.id,
      owner: { kind: "Run", name: RUN.name, uid: "uid-run" },
      labels: { "codeplane.dev/run": RUN.id, "app.kubernetes.io/component": "run" },
    });
    // The assignment is what a cold pod gets from its spec and Secret.
    expect(w.asked.assignments[0]).toMatchObject({
      run_id: RUN.id,
      checkout_token: "cpg_test-token",
      env: { API_TOKEN: "t0ken" },
      git_url: expect.stringMatching(/\/git\/.+\.git$/),
    });
    expect(recorded.actions).toContain(`mintToken run ${RUN.id}`);
  });

  it("starts the ordinary way, with no error, when the pool has no waiting pod", async () => {
    const w = warm(null);
    const { reconciler, recorded } = runWorld({ resource: aRun().build(), warm: w.pools });
    await reconciler.reconcile(RUN.name);
    expect(recorded.jobs.map((j) => j.metadata!.name)).toEqual([RUN.name]);
    expect(recorded.patched.at(-1)).toMatchObject({ jobName: RUN.name });
    expect(recorded.patched.at(-1)!.error).toBeUndefined();
  });

  it("fails with the claim's reason, starting nothing, when its pod went away after taking the run", async () => {
    const w = warm(new Unreconcilable("WarmPodLost", "the warm pod went away after it had received the run", { expected: true }));
    const { reconciler, recorded } = runWorld({ resource: aRun().build(), warm: w.pools });
    await reconciler.reconcile(RUN.name);
    expect(recorded.actions.some((a) => a.startsWith("createJob"))).toBe(false);
    expect(recorded.patched.at(-1)).toMatchObject({ phase: "failed", error: expect.stringContaining("went away after it had received the run") });
  });

  const adopted = (status: Partial<RunStatus> = {}) =>
    aRun()
      .withStatus({ phase: "pending", jobName: POOL_JOB, ...status })
      .build();

  it("is preprocessing, not running, while its agent checks out (its main container ran before the run existed), and looks again soon", async () => {
    const w = warm(null, {});
    const { reconciler, recorded } = runWorld({ resource: adopted(), warm: w.pools, otherJob: poolJob(), pods: [warmPod()] });
    expect(await reconciler.reconcile(RUN.name)).toEqual({ requeueAfterMs: WARM_STARTING_POLL_MS });
    const status = recorded.patched.at(-1)!;
    expect(status).toMatchObject({ phase: "preprocessing", jobName: POOL_JOB, timeline: { warm: true, pool: "py", admitted: CLAIMED.toISOString() } });
    expect(status.startTime).toBeUndefined();
    // Neither the pod's scheduling nor its image: both happened before the run.
    expect(status.timeline!.scheduled).toBeUndefined();
    expect(status.timeline!.imageReady).toBeUndefined();
    expect(w.asked.requests).toEqual([]);
  });

  it("is running from when its agent started the command", async () => {
    const w = warm(null, { startedAt: STARTED, checkedOutAt: STARTED });
    const { reconciler, recorded } = runWorld({ resource: adopted(), warm: w.pools, otherJob: poolJob(), pods: [warmPod()] });
    await reconciler.reconcile(RUN.name);
    expect(recorded.patched.at(-1)).toMatchObject({ phase: "running", startTime: STARTED.toISOString(), timeline: { checkedOut: STARTED.toISOString() } });
    // What it needed only to start goes then, as for a cold run.
    expect(recorded.actions).toContain(`revokeTokens run ${RUN.id}`);
  });

  it("fails in preprocessing, quoting its agent, when the checkout failed", async () => {
    const pod = warmPod();
    pod.status!.phase = "Failed";
    pod.status!.containerStatuses![0]!.state = {
      terminated: { exitCode: 3, reason: "Error", message: "codeplane: preprocessing failed: checkout: git fetch exited with code 128" },
    };
    const w = warm(null, {});
    const { reconciler, recorded } = runWorld({ resource: adopted(), warm: w.pools, otherJob: poolJob(), pods: [pod] });
    await reconciler.reconcile(RUN.name);
    expect(recorded.patched.at(-1)).toMatchObject({
      phase: "failed",
      error: "checkout: git fetch exited with code 128",
      conditions: expect.arrayContaining([expect.objectContaining({ reason: "PreprocessingFailed" })]),
    });
  });

  it("stops the pool's Job, not one named after the run, when cancelled", async () => {
    const w = warm(null, { startedAt: STARTED });
    const { reconciler, recorded } = runWorld({
      resource: aRun().withStatus({ phase: "running", jobName: POOL_JOB }).cancelRequested().build(),
      warm: w.pools,
      otherJob: poolJob(),
      pods: [warmPod()],
    });
    await reconciler.reconcile(RUN.name);
    expect(recorded.actions).toContain(`deleteJob ${POOL_JOB}`);
    expect(recorded.patched.at(-1)).toMatchObject({ phase: "cancelled" });
  });
});
