import type { V1Job, V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { ATTEMPT_SEQ_STRIDE, type RunAttempt, type RunStatus } from "../resources/run.ts";
import { aJob, aPod, aRun, JOB_STARTED, MAIN_STARTED, NAMESPACE, NOW, RUN, runningStatus, type JobBuilder, type PodBuilder } from "./testing/builders.ts";
import { runWorld, type Given } from "./testing/fakes.ts";
import { RETRY_WAIT_MS } from "./workload-reconciler.ts";
import type { RunSpec } from "../resources/run.ts";

// The reconciler's side of a run's retry policy (run-retry.ts), through the
// fakes: the lost attempt's pod must have stopped before anything happens;
// then the next attempt is prepared (marker line, outputs and metrics
// dropped), recorded in the status with an Event, and only the next reconcile
// creates its Job, under its own name; the lost attempt's pod no longer counts.

const ATTEMPT2 = `${RUN.name}-attempt-2`;
const first: RunAttempt = { attempt: 1, jobName: RUN.name, createdAt: JOB_STARTED, startTime: MAIN_STARTED, logSeqOffset: 0 };
const second: RunAttempt = { attempt: 2, jobName: ATTEMPT2, createdAt: NOW.toISOString(), logSeqOffset: ATTEMPT_SEQ_STRIDE };
const withAttempts = (attempts: RunAttempt[], jobName = attempts.at(-1)!.jobName): RunStatus => ({ ...runningStatus<RunStatus>(RUN), attempts, jobName });

/** A Job of the run named `name` (a later attempt's), as the Job builder makes the first's. */
const jobNamed = (b: JobBuilder, name: string) =>
  ({ build: (k: typeof RUN): V1Job => ({ ...b.build(k), metadata: { ...b.build(k).metadata, name } }) }) as JobBuilder;
/** A pod of the Job `job`, labelled as the Job controller labels its pods. */
const podOf = (b: PodBuilder, job: string, extra: Partial<V1Pod["metadata"]> = {}): V1Pod => {
  const p = b.build(RUN);
  return { ...p, metadata: { ...p.metadata, labels: { ...p.metadata!.labels, "job-name": job }, ...extra } };
};

async function reconcile(given: Given<RunSpec, RunStatus>) {
  const { reconciler, recorded } = runWorld(given);
  const result = await reconciler.reconcile(RUN.name);
  return { result, recorded };
}

describe("a run with retries that loses its pod", () => {
  const run = (status: RunStatus, retries = 1) => aRun().withSpec({ retries }).withStatus(status).build();

  it("records the next attempt once the lost pod is gone: marker and cleanup first, then the status, an Event and the row; no Job yet", async () => {
    const { result, recorded } = await reconcile({ resource: run(withAttempts([first])), job: aJob().failed(), pods: [] });
    expect(recorded.actions).toEqual([
      "mirror running",
      `apiPods codeplane.dev/run=${RUN.id}`,
      `beginAttempt ${RUN.id} 2 ${ATTEMPT_SEQ_STRIDE}`,
      `patchStatus ${RUN.name} running`,
      `event Warning Retrying: attempt 2 of 2 started: attempt 1 failed (PodLost): the run's pod was deleted before it finished`,
      "mirror running",
    ]);
    expect(result.requeueAfterMs).toBe(250);
    const status = recorded.patched.at(-1)!;
    expect(status.jobName).toBe(ATTEMPT2);
    expect(status.attempts).toEqual([
      { ...first, completionTime: NOW.toISOString(), reason: "PodLost", message: "the run's pod was deleted before it finished" },
      second,
    ]);
  });

  it("waits while the lost pod is still stopping (it may still send lines or outputs)", async () => {
    const stopping = podOf(aPod().running(), RUN.name, { deletionTimestamp: new Date(NOW) });
    const { result, recorded } = await reconcile({ resource: run(withAttempts([first])), job: aJob().failed(), pods: [stopping] });
    expect(recorded.actions).toEqual(["mirror running", `archive ${RUN.id} pod-a`]);
    expect(result.requeueAfterMs).toBe(RETRY_WAIT_MS);
  });

  it("retries a pod that waits for an image forever at once (its command never ran), then stops the lost attempt's Job", async () => {
    const { recorded } = await reconcile({ resource: run(withAttempts([first])), job: aJob(), pods: [podOf(aPod().pullFailing(), RUN.name)] });
    expect(recorded.actions).toEqual([
      "mirror running",
      `beginAttempt ${RUN.id} 2 ${ATTEMPT_SEQ_STRIDE}`,
      `patchStatus ${RUN.name} running`,
      "event Warning Retrying: attempt 2 of 2 started: attempt 1 failed (ImagePullFailed): image pull failed for img: ErrImagePull (not found)",
      `deleteJob ${RUN.name}`,
      "mirror running",
    ]);
    expect(recorded.patched.at(-1)!.jobName).toBe(ATTEMPT2);
  });

  it("creates the recorded attempt's Job under its own name, its pods annotated with the attempt's log offset", async () => {
    const { recorded } = await reconcile({ resource: run(withAttempts([first, second])), pods: [podOf(aPod().terminated(137, "Error"), RUN.name)] });
    expect(recorded.actions.filter((a) => a.startsWith("createJob"))).toEqual([`createJob ${ATTEMPT2}`]);
    const job = recorded.jobs[0]!;
    expect(job.spec!.template.metadata!.annotations).toEqual({ "codeplane.dev/attempt": "2", "codeplane.dev/log-seq-offset": String(ATTEMPT_SEQ_STRIDE) });
    expect(job.metadata!.ownerReferences![0]).toMatchObject({ kind: "Run", name: RUN.name, controller: true });
    // The lost attempt's failed pod is not this attempt's: the run stays running, its start its first attempt's.
    expect(recorded.patched.at(-1)).toMatchObject({ phase: "running", startTime: MAIN_STARTED, jobName: ATTEMPT2 });
    expect(recorded.events).toEqual([]);
  });

  it("follows the new attempt's pod, numbered from its offset, and completes with both attempts recorded", async () => {
    const newPod = podOf(aPod("pod-b").createdAt("2026-01-01T00:09:30.000Z").terminated(0), ATTEMPT2, {
      annotations: { "codeplane.dev/log-seq-offset": String(ATTEMPT_SEQ_STRIDE) },
    });
    const lostPod = podOf(aPod().terminated(137, "Error"), RUN.name);
    const { recorded } = await reconcile({
      resource: run(withAttempts([{ ...first, completionTime: NOW.toISOString(), reason: "PodLost" }, second])),
      job: jobNamed(aJob().complete(), ATTEMPT2),
      pods: [lostPod, newPod],
    });
    expect(recorded.patched.at(-1)).toMatchObject({ phase: "completed", exitCode: 0, jobName: ATTEMPT2, podName: "pod-b" });
    expect(recorded.patched.at(-1)!.attempts!.map((a) => [a.attempt, a.reason])).toEqual([
      [1, "PodLost"],
      [2, "Completed"],
    ]);
    expect(recorded.archived.map((a) => a.target)).toEqual([
      { namespace: NAMESPACE, pod: "pod-b", container: "main", seqOffset: ATTEMPT_SEQ_STRIDE, seqLimit: ATTEMPT_SEQ_STRIDE },
    ]);
  });

  it("fails the last attempt's infrastructure failure, saying no retries are left", async () => {
    const { recorded } = await reconcile({ resource: run(withAttempts([first, second])), job: jobNamed(aJob().failed(), ATTEMPT2), apiPods: [] });
    expect(recorded.actions).not.toContain(`beginAttempt ${RUN.id} 3 ${2 * ATTEMPT_SEQ_STRIDE}`);
    expect(recorded.patched.at(-1)).toMatchObject({
      phase: "failed",
      error: "the run's pod was deleted before it finished (attempt 2 of 2: no retries left)",
    });
  });

  it("never retries after a cancel", async () => {
    const cancelled = aRun()
      .withSpec({ retries: 2 })
      .withStatus(withAttempts([first]))
      .cancelRequested()
      .build();
    const { recorded } = await reconcile({ resource: cancelled, job: aJob().failed(), apiPods: [] });
    expect(recorded.actions.some((a) => a.startsWith("beginAttempt"))).toBe(false);
    expect(recorded.patched.at(-1)).toMatchObject({ phase: "cancelled" });
  });

  it("a cancel between an attempt's record and its Job: no Job is made, the run is cancelled", async () => {
    const cancelled = aRun()
      .withSpec({ retries: 1 })
      .withStatus(withAttempts([first, second]))
      .cancelRequested()
      .build();
    const { recorded } = await reconcile({ resource: cancelled, apiPods: [] });
    expect(recorded.actions.filter((a) => a.startsWith("createJob") || a.startsWith("createSecret"))).toEqual([]);
    expect(recorded.patched.at(-1)).toMatchObject({ phase: "cancelled", jobName: ATTEMPT2 });
  });

  it("a restart after the attempt was recorded makes its Job once, under the same name, with a Secret of its own", async () => {
    const { recorded } = await reconcile({ resource: run(withAttempts([first, second])) });
    expect(recorded.actions.filter((a) => a.startsWith("createJob") || a.startsWith("createSecret"))).toEqual([
      `createSecret ${ATTEMPT2}`,
      `createJob ${ATTEMPT2}`,
    ]);
    expect(recorded.events).toEqual([]);
  });

  it("holds the logs open while the run may still retry, and not when it may not", async () => {
    const running = podOf(aPod().running(), RUN.name);
    const { recorded } = await reconcile({ resource: run(withAttempts([first])), job: aJob(), pods: [running] });
    expect(recorded.archived).toEqual([{ id: RUN.id, target: { namespace: NAMESPACE, pod: "pod-a", container: "main" }, holdCompletion: true }]);
    const noRetries = await reconcile({ resource: aRun().withStatus(runningStatus<RunStatus>(RUN)).build(), job: aJob(), pods: [running] });
    expect(noRetries.recorded.archived[0]!.target).toEqual({ namespace: NAMESPACE, pod: "pod-a", container: "main" });
  });
});

// With Kueue admitting, Kueue admitted the lost attempt's Job, not the next one's: the next attempt
// goes through the queue again (its Job suspended in the account's LocalQueue), and the run says it
// waits, keeping the phase and start it had.
describe("a run with retries that loses its pod, with Kueue admitting", () => {
  const run = (status: RunStatus) => aRun().withSpec({ retries: 1 }).withStatus(status).build();
  const admittedTrue = { type: "Admitted", status: "True" as const, reason: "Admitted", message: "x", lastTransitionTime: JOB_STARTED };
  const quota = { admitted: false as const, reason: "ClusterQuota" as const, message: "queued: Kueue: insufficient unused quota", position: 1 };

  it("records the next attempt as not admitted, queued waiting for Kueue: still running, no Job yet", async () => {
    const status = { ...withAttempts([first]), conditions: [...runningStatus<RunStatus>(RUN).conditions!, admittedTrue] };
    const { recorded } = await reconcile({ resource: run(status), job: aJob().failed(), pods: [], external: quota });
    expect(recorded.actions.filter((a) => /^(createJob|handOver)/.test(a))).toEqual([]);
    const written = recorded.patched.at(-1)!;
    expect(written).toMatchObject({ phase: "running", jobName: ATTEMPT2, queue: { reason: "KueuePending" } });
    expect(written.conditions!.find((c) => c.type === "Admitted")).toMatchObject({ status: "False", reason: "KueuePending", message: /^attempt 2 queued/ });
  });

  it("makes the attempt's Job suspended in the queue on its turn, and stays running with the queue's reason", async () => {
    const requeued: RunStatus = {
      ...withAttempts([first, second]),
      queue: { reason: "KueuePending" },
      conditions: [
        ...runningStatus<RunStatus>(RUN).conditions!,
        { ...admittedTrue, status: "False", reason: "KueuePending", message: "attempt 2 queued", lastTransitionTime: NOW.toISOString() },
      ],
    };
    const { recorded } = await reconcile({ resource: run(requeued), external: quota });
    expect(recorded.actions.filter((a) => /^(createJob|handOver|prepare)/.test(a))).toEqual([
      `handOver ${RUN.name} now`,
      `prepare ${RUN.name}`,
      `createJob ${ATTEMPT2}`,
    ]);
    expect(recorded.jobs[0]!.spec!.suspend).toBe(true);
    expect(recorded.patched.at(-1)).toMatchObject({ phase: "running", startTime: MAIN_STARTED, queue: { reason: "KueuePending" } });
    expect(recorded.patched.at(-1)!.conditions!.find((c) => c.type === "Started")).toMatchObject({ status: "True" });
  });

  it("once Kueue admits the attempt's Job: Admitted=True again, no longer queued", async () => {
    const requeued: RunStatus = {
      ...withAttempts([first, second]),
      queue: { reason: "ClusterQuota" },
      conditions: [
        ...runningStatus<RunStatus>(RUN).conditions!,
        { ...admittedTrue, status: "False", reason: "ClusterQuota", message: "queued", lastTransitionTime: NOW.toISOString() },
      ],
    };
    const at = new Date(NOW.getTime() - 1000);
    const { recorded } = await reconcile({ resource: run(requeued), job: jobNamed(aJob(), ATTEMPT2), external: { admitted: true, at } });
    const written = recorded.patched.at(-1)! as RunStatus & { queue: unknown };
    expect(written.queue).toBeNull();
    expect(written.conditions!.find((c) => c.type === "Admitted")).toMatchObject({ status: "True", lastTransitionTime: at.toISOString() });
  });
});
