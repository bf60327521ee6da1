import type { V1ContainerStatus, V1Job, V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import type { RunSpec, RunStatus } from "../resources/run.ts";
import { observeRun } from "./run-observation.ts";

const spec: RunSpec = {
  runId: "0190b1c2-3d4e-7f00-8a1b-2c3d4e5f6a7b",
  accountId: "0190b1c2-0000-7000-8000-000000000001",
  repositoryId: "0190b1c2-0000-7000-8000-000000000002",
  repositoryUrl: "https://example.com/r.git",
  commitHash: "b".repeat(40),
  command: ["true"],
  computeType: "cpu-general",
  timeoutSeconds: 60,
};
const now = new Date("2026-01-01T00:10:00Z");
const T0 = "2026-01-01T00:00:00Z";
const T1 = "2026-01-01T00:00:05Z";

const job = (conditions: { type: string; reason?: string }[] = [], status: V1Job["status"] = {}): V1Job => ({
  status: { startTime: new Date("2026-01-01T00:09:50Z"), ...status, conditions: conditions.map((c) => ({ ...c, status: "True" })) },
});
const cs = (name: string, state: V1ContainerStatus["state"]): V1ContainerStatus => ({
  name,
  image: `${name}:img`,
  imageID: "",
  ready: false,
  restartCount: 0,
  state,
});
const pod = (p: {
  init?: V1ContainerStatus[];
  main?: V1ContainerStatus["state"];
  phase?: string;
  reason?: string;
  message?: string;
  scheduled?: boolean;
  disruption?: string;
}): V1Pod => ({
  status: {
    phase: p.phase ?? "Pending",
    reason: p.reason,
    message: p.message,
    initContainerStatuses: p.init ?? [],
    containerStatuses: p.main ? [cs("main", p.main)] : [],
    conditions: [
      ...(p.scheduled === false ? [] : [{ type: "PodScheduled", status: "True" }]),
      ...(p.disruption ? [{ type: "DisruptionTarget", status: "True", reason: p.disruption }] : []),
    ],
  },
});
const running = { running: { startedAt: new Date(T0) } };
const exited = (exitCode: number, reason = exitCode === 0 ? "Completed" : "Error") => ({
  terminated: { exitCode, reason, startedAt: new Date(T0), finishedAt: new Date(T1) },
});

type Case = [name: string, args: { spec?: Partial<RunSpec>; prev?: RunStatus; job?: V1Job | null; pod?: V1Pod | null }, expected: Record<string, unknown>];

const cases: Case[] = [
  ["no Job yet", { job: null }, { phase: "pending", exitCode: null, error: null }],
  ["Job without a pod", { job: job(), pod: null }, { phase: "pending" }],
  ["pod not scheduled", { job: job(), pod: pod({ scheduled: false }) }, { phase: "pending" }],
  ["checkout running", { job: job(), pod: pod({ init: [cs("tools", exited(0)), cs("checkout", { running: {} })] }) }, { phase: "preprocessing" }],
  ["main running", { job: job(), pod: pod({ phase: "Running", main: running }) }, { phase: "running", startTime: new Date(T0).toISOString() }],
  [
    "exit 0",
    { job: job([{ type: "Complete" }]), pod: pod({ phase: "Succeeded", main: exited(0) }) },
    { phase: "completed", exitCode: 0, error: null, completionTime: new Date(T1).toISOString() },
  ],
  [
    "exit 3 before the Job noticed",
    { job: job(), pod: pod({ phase: "Failed", main: exited(3) }) },
    { phase: "failed", exitCode: 3, error: "command exited with code 3", reason: "NonZeroExit" },
  ],
  [
    "exit 3",
    { job: job([{ type: "Failed", reason: "BackoffLimitExceeded" }]), pod: pod({ phase: "Failed", main: exited(3) }) },
    { phase: "failed", exitCode: 3 },
  ],
  [
    "OOM-killed",
    { job: job([{ type: "Failed", reason: "BackoffLimitExceeded" }]), pod: pod({ phase: "Failed", main: exited(137, "OOMKilled") }) },
    { phase: "failed", exitCode: 137, reason: "OOMKilled", error: expect.stringContaining("out of memory") },
  ],
  ["timeout", { job: job([{ type: "Failed", reason: "DeadlineExceeded" }]), pod: null }, { phase: "failed", reason: "TimedOut", error: "timed out after 60s" }],
  [
    "timeout the cluster never reported",
    { job: job([], { startTime: new Date("2026-01-01T00:00:00Z") }), pod: pod({ phase: "Running", main: running }) },
    { phase: "failed", reason: "TimedOut", stopJob: true },
  ],
  [
    "image pull failure",
    { job: job(), pod: pod({ main: { waiting: { reason: "ImagePullBackOff", message: "not found" } } }) },
    { phase: "failed", reason: "ImagePullFailed", error: "image pull failed for main:img: ImagePullBackOff (not found)", stopJob: true },
  ],
  [
    "checkout failure",
    {
      job: job([{ type: "Failed", reason: "BackoffLimitExceeded" }]),
      pod: pod({
        phase: "Failed",
        init: [cs("tools", exited(0)), cs("checkout", { terminated: { exitCode: 128, message: "fatal: repository not found\n" } })],
      }),
    },
    { phase: "failed", reason: "PreprocessingFailed", error: "preprocessing failed (checkout): fatal: repository not found" },
  ],
  [
    "evicted",
    { job: job([{ type: "Failed", reason: "BackoffLimitExceeded" }]), pod: pod({ phase: "Failed", reason: "Evicted", message: "low on memory" }) },
    { phase: "failed", reason: "PodDisrupted", error: "pod was evicted: low on memory" },
  ],
  [
    "node lost",
    { job: job([{ type: "Failed" }]), pod: pod({ phase: "Failed", disruption: "DeletionByPodGC" }) },
    { phase: "failed", error: "pod was stopped because its node was lost" },
  ],
  [
    "pod deleted",
    { job: job([{ type: "Failed", reason: "BackoffLimitExceeded" }], { failed: 1 }), pod: null },
    { phase: "failed", reason: "PodLost", error: "the run's pod was deleted before it finished" },
  ],
  // The Job controller deletes the pod at the deadline before its DeadlineExceeded condition reaches the informer: wait for it.
  [
    "pod deleted before the Job's condition: undecided until it comes",
    { job: job([], { failed: 1, startTime: new Date(now) }), pod: null },
    { phase: "pending", reason: "AwaitingJobCondition", error: null },
  ],
  [
    "the same while the run was running: stays running",
    { prev: { phase: "running" }, job: job([], { failed: 1, startTime: new Date(now) }), pod: null },
    { phase: "running", reason: "AwaitingJobCondition" },
  ],
  [
    "the same when the condition never comes: the backstop ends it",
    { job: job([], { failed: 1, startTime: new Date("2026-01-01T00:00:00Z") }), pod: null },
    { phase: "failed", reason: "TimedOut", stopJob: true },
  ],
  [
    "cancel requested",
    { spec: { cancelRequested: true }, job: job(), pod: pod({ phase: "Running", main: running }) },
    { phase: "cancelled", error: "cancelled by request", stopJob: true },
  ],
  [
    "a finished run stays finished",
    { prev: { phase: "completed", exitCode: 0 }, job: job([{ type: "Failed" }]), pod: null },
    { phase: "completed", exitCode: 0 },
  ],
  [
    "cancel after completion changes nothing",
    { spec: { cancelRequested: true }, prev: { phase: "failed", exitCode: 2, error: "command exited with code 2" }, job: null },
    { phase: "failed", exitCode: 2, stopJob: false },
  ],
];

describe("observeRun", () => {
  it.each(cases)("%s", (_name, { spec: over, prev, job: j, pod: p }, expected) => {
    expect(observeRun({ ...spec, ...over }, prev, j === undefined ? job() : j, p ?? null, now)).toMatchObject(expected);
  });
});
