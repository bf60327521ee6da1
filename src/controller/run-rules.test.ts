import type { V1Job, V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import {
  awaitingJobCondition,
  cancelRequested,
  deadlineBackstop,
  deadlineExceeded,
  finishedStaysFinished,
  imagePullFailed,
  jobCompleted,
  mainExited,
  mainRunning,
  noJobYet,
  podDisrupted,
  podLost,
  podScheduled,
  preprocessingFailed,
  RUN_RULES,
  runnerTimedOut,
  type RunFacts,
  type RunRule,
} from "./run-rules.ts";

// One table per rule of the chain: when it decides, what it decides, and when
// it passes (undefined) to the next. The chain as a whole, in order, is tested
// through observeRun (run-observation.test.ts).

const now = new Date("2026-01-01T00:10:00Z");
const T1 = "2026-01-01T00:00:05Z";
const job = (status: NonNullable<V1Job["status"]> = {}): V1Job => ({ status });
const cond = (type: string, reason?: string) => ({ type, status: "True", reason });
const pod = (status: NonNullable<V1Pod["status"]>): V1Pod => ({ status });
const facts = (over: Partial<RunFacts> = {}): RunFacts => ({
  spec: { timeoutSeconds: 60 },
  previous: undefined,
  job: job(),
  pod: null,
  now,
  main: undefined,
  terminated: undefined,
  startTime: undefined,
  failed: undefined,
  ...over,
});

type Case = [name: string, facts: Partial<RunFacts>, expected: Record<string, unknown> | undefined];

const table: [rule: RunRule, cases: Case[]][] = [
  [
    finishedStaysFinished,
    [
      ["no previous status", {}, undefined],
      ["still running", { previous: { phase: "running" } }, undefined],
      [
        "completed stays completed",
        { previous: { phase: "completed", exitCode: 0 } },
        { phase: "completed", reason: "Finished", exitCode: 0, error: null, stopJob: false },
      ],
      ["failed keeps its error", { previous: { phase: "failed", exitCode: 2, error: "boom" } }, { phase: "failed", error: "boom", exitCode: 2 }],
    ],
  ],
  [
    cancelRequested,
    [
      ["not requested", {}, undefined],
      [
        "requested",
        { spec: { timeoutSeconds: 60, cancelRequested: true } },
        { phase: "cancelled", reason: "Cancelled", error: "cancelled by request", exitCode: null, stopJob: true },
      ],
      [
        "requested after the container exited",
        { spec: { timeoutSeconds: 60, cancelRequested: true }, terminated: { exitCode: 143 } },
        { phase: "cancelled", exitCode: 143 },
      ],
    ],
  ],
  [
    noJobYet,
    [
      ["a Job", {}, undefined],
      ["no Job", { job: null }, { phase: "pending", reason: "Pending", stopJob: false }],
    ],
  ],
  [
    imagePullFailed,
    [
      ["no pod", {}, undefined],
      [
        "main waiting to start",
        {
          pod: pod({
            containerStatuses: [{ name: "main", image: "i", imageID: "", ready: false, restartCount: 0, state: { waiting: { reason: "ContainerCreating" } } }],
          }),
        },
        undefined,
      ],
      [
        "init image missing",
        {
          pod: pod({
            initContainerStatuses: [
              { name: "tools", image: "t:1", imageID: "", ready: false, restartCount: 0, state: { waiting: { reason: "ErrImagePull" } } },
            ],
          }),
        },
        { phase: "failed", reason: "ImagePullFailed", error: "image pull failed for t:1: ErrImagePull", stopJob: true },
      ],
    ],
  ],
  [
    jobCompleted,
    [
      ["no condition", {}, undefined],
      ["Complete", { job: job({ conditions: [cond("Complete")] }) }, { phase: "completed", exitCode: 0 }],
      ["SuccessCriteriaMet", { job: job({ conditions: [cond("SuccessCriteriaMet")] }) }, { phase: "completed", reason: "Completed" }],
      ["condition not True", { job: job({ conditions: [{ type: "Complete", status: "False" }] }) }, undefined],
    ],
  ],
  [
    deadlineExceeded,
    [
      ["not failed", {}, undefined],
      ["failed for another reason", { failed: cond("Failed", "BackoffLimitExceeded") }, undefined],
      ["deadline", { failed: cond("Failed", "DeadlineExceeded") }, { phase: "failed", reason: "TimedOut", error: "timed out after 60s", stopJob: false }],
    ],
  ],
  [
    runnerTimedOut,
    [
      ["ended by itself", { terminated: { exitCode: 1, message: "boom" } }, undefined],
      ["not ended", {}, undefined],
      [
        "stopped by the runner at the timeout",
        { terminated: { exitCode: 143, message: "codeplane: timed out after 60s" } },
        { phase: "failed", reason: "TimedOut", error: "timed out after 60s", exitCode: 143, stopJob: false },
      ],
    ],
  ],
  [
    mainExited,
    [
      ["still running", {}, undefined],
      ["exit 0", { terminated: { exitCode: 0, finishedAt: new Date(T1) } }, { phase: "completed", exitCode: 0, completionTime: new Date(T1).toISOString() }],
      ["exit 3", { terminated: { exitCode: 3 } }, { phase: "failed", reason: "NonZeroExit", error: "command exited with code 3", exitCode: 3 }],
      ["OOM-killed", { terminated: { exitCode: 137, reason: "OOMKilled" } }, { phase: "failed", reason: "OOMKilled", exitCode: 137 }],
    ],
  ],
  [
    preprocessingFailed,
    [
      ["no pod", {}, undefined],
      [
        "init succeeded",
        {
          pod: pod({
            initContainerStatuses: [{ name: "checkout", image: "", imageID: "", ready: false, restartCount: 0, state: { terminated: { exitCode: 0 } } }],
          }),
        },
        undefined,
      ],
      [
        "init failed without a message",
        {
          pod: pod({
            initContainerStatuses: [{ name: "checkout", image: "", imageID: "", ready: false, restartCount: 0, state: { terminated: { exitCode: 128 } } }],
          }),
        },
        { phase: "failed", reason: "PreprocessingFailed", error: "preprocessing failed (checkout): exit code 128" },
      ],
    ],
  ],
  [
    podDisrupted,
    [
      ["no pod", { failed: cond("Failed") }, undefined],
      ["evicted but the Job has not failed", { pod: pod({ phase: "Running", reason: "Evicted" }) }, undefined],
      [
        "evicted, pod failed",
        { pod: pod({ phase: "Failed", reason: "Evicted" }) },
        { phase: "failed", reason: "PodDisrupted", error: "pod was evicted: node under resource pressure" },
      ],
      ["node lost, Job failed", { failed: cond("Failed"), pod: pod({ reason: "NodeLost" }) }, { error: "pod was lost with its node (NodeLost)" }],
      [
        "preempted",
        { failed: cond("Failed"), pod: pod({ conditions: [cond("DisruptionTarget", "PreemptionByScheduler")] }) },
        { error: "pod was stopped because it was preempted by a higher-priority pod" },
      ],
      [
        "unknown disruption",
        { failed: cond("Failed"), pod: pod({ conditions: [cond("DisruptionTarget", "Other")] }) },
        { error: "pod was stopped because Other" },
      ],
    ],
  ],
  [
    podLost,
    [
      ["Job not failed", {}, undefined],
      [
        "Job failed, pod gone",
        { failed: cond("Failed", "BackoffLimitExceeded") },
        { phase: "failed", reason: "PodLost", error: "the run's pod was deleted before it finished" },
      ],
    ],
  ],
  [
    deadlineBackstop,
    [
      ["Job not started", {}, undefined],
      ["within timeout and grace", { job: job({ startTime: new Date("2026-01-01T00:07:00Z") }) }, undefined],
      ["past timeout and grace", { job: job({ startTime: new Date("2026-01-01T00:06:59Z") }) }, { phase: "failed", reason: "TimedOut", stopJob: true }],
    ],
  ],
  [
    awaitingJobCondition,
    [
      ["nothing failed", {}, undefined],
      ["pod present", { job: job({ failed: 1 }), pod: pod({}) }, undefined],
      ["pod gone, Job counts a failure", { job: job({ failed: 1 }) }, { phase: "pending", reason: "AwaitingJobCondition", error: null }],
      ["keeps the phase it had", { job: job({ failed: 1 }), previous: { phase: "running" } }, { phase: "running" }],
    ],
  ],
  [
    mainRunning,
    [
      ["no main container", {}, undefined],
      [
        "main running",
        { main: { name: "main", image: "", imageID: "", ready: true, restartCount: 0, state: { running: {} } } },
        { phase: "running", reason: "Running" },
      ],
    ],
  ],
  [
    podScheduled,
    [
      ["no pod", {}, undefined],
      ["not scheduled", { pod: pod({ conditions: [{ type: "PodScheduled", status: "False" }] }) }, undefined],
      ["scheduled", { pod: pod({ conditions: [cond("PodScheduled")] }) }, { phase: "preprocessing", reason: "Preprocessing" }],
    ],
  ],
];

describe.each(table.map(([rule, cases]) => [rule.name, rule, cases] as const))("%s", (_rule, rule, cases) => {
  it.each(cases)("%s", (_name, over, expected) => {
    const decided = rule(facts(over));
    if (expected === undefined) expect(decided).toBeUndefined();
    else expect(decided).toMatchObject(expected);
  });
});

it("every rule of the chain has a table", () => {
  expect(new Set(table.map(([rule]) => rule))).toEqual(new Set(RUN_RULES));
});
