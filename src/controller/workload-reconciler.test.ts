import { describe, expect, it } from "vitest";
import type { AnalysisSpec, AnalysisStatus } from "../resources/analysis.ts";
import type { WorkloadSpec, WorkloadStatus } from "../resources/common.ts";
import type { RunSpec, RunStatus } from "../resources/run.ts";
import {
  aJob,
  ANALYSIS,
  analyzerLog,
  anAnalysis,
  anAnalyzerResult,
  aPod,
  aRun,
  completedStatus,
  EARLIER,
  MAIN_FINISHED,
  MAIN_STARTED,
  NAMESPACE,
  NOW,
  pendingStatus,
  RUN,
  runningStatus,
  type KindFacts,
  type ResourceBuilder,
} from "./testing/builders.ts";
import { analysisWorld, INSTALLATION, RETENTION_SECONDS, runWorld, type Given, type Recorded } from "./testing/fakes.ts";
import { LIVE_RESYNC_MS, UNTRACKED_RESYNC_MS, type ReconcileResult } from "./workload-reconciler.ts";
import type { EnvironmentBuilds } from "./environment-builds.ts";
import { ENVIRONMENT_POLL_MS } from "./run-workload.ts";
import type { EnvironmentRow } from "../db/schema.ts";
import { QUEUE_RESYNC_MS, type AdmissionDecision } from "./admission.ts";

// The generic reconciler, driven through fakes: each case is the world one
// reconcile sees (resource, Job and pods in the caches, pods only the API
// server has, the row, the archiver, the pod's log) and everything that
// reconcile did, in order, with what it asked to be requeued after.
// Expected actions may say {name}, {id} and {label} for the kind's own.

const LIVE = LIVE_RESYNC_MS;
const now = NOW.toISOString();

interface Case<Spec, Status> {
  name: string;
  given: Given<Spec, Status>;
  /** The name reconciled; the resource's (or the kind's) name when absent. */
  reconcile?: string;
  actions: string[];
  /** "retained": a finished workload, looked at again when its retention ends. */
  requeue: number | undefined | "retained";
  /** Matched (toMatchObject) against the last status patched. */
  status?: Partial<Status>;
}

// {launch}: what creating a workload's Job takes (its checkout token, its Secret, the Job).
// {release}: what a kind removes once its workload has started or ended (its Secret and checkout token).
const PLACEHOLDERS: Record<string, string[]> = {
  "{launch}": ["mintToken {noun} {id}", "createSecret {name}", "createJob {name}"],
  "{release}": ["deleteSecret {name}", "revokeTokens {noun} {id}"],
};

const expand = (k: KindFacts, actions: string[]) =>
  actions
    .flatMap((a) => PLACEHOLDERS[a] ?? [a])
    .map((a) => a.replaceAll("{noun}", k.noun).replaceAll("{name}", k.name).replaceAll("{id}", k.id).replaceAll("{label}", `${k.podLabel}=${k.id}`));

interface World<Status> {
  reconciler: { reconcile(name: string): Promise<ReconcileResult>; handles(name: string): boolean; giveUp(name: string, err: unknown): Promise<void> };
  recorded: Recorded<Status>;
}

async function check<Spec, Status>(k: KindFacts, world: (g: Given<Spec, Status>) => World<Status>, c: Case<Spec, Status>) {
  const { reconciler, recorded } = world(c.given);
  const result = await reconciler.reconcile(c.reconcile ?? k.name);
  expect(recorded.actions).toEqual(expand(k, c.actions));
  if (c.requeue === "retained") {
    expect(result.requeueAfterMs).toBeGreaterThan(RETENTION_SECONDS * 1000 - 3_600_000);
    expect(result.requeueAfterMs).toBeLessThanOrEqual(RETENTION_SECONDS * 1000);
  } else expect(result.requeueAfterMs).toBe(c.requeue);
  if (c.status) expect(recorded.patched.at(-1)).toMatchObject(c.status);
}

// ---------------------------------------------------------------------------
// What every kind does alike: one table, run for each descriptor.

interface KindUnderTest {
  k: KindFacts;
  resource(): ResourceBuilder<WorkloadSpec, WorkloadStatus>;
  world(g: Given): World<WorkloadStatus>;
  otherKindName: string;
}

const kinds: KindUnderTest[] = [
  {
    k: RUN,
    resource: () => aRun(),
    world: (g) => runWorld(g as Given<RunSpec, RunStatus>),
    otherKindName: ANALYSIS.name,
  },
  {
    k: ANALYSIS,
    resource: () => anAnalysis(),
    world: (g) => analysisWorld(g as Given<AnalysisSpec, AnalysisStatus>),
    otherKindName: RUN.name,
  },
];

const commonCases = ({ k, resource, otherKindName }: KindUnderTest): Case<WorkloadSpec, WorkloadStatus>[] => [
  {
    name: "resource gone: its row is told (kept readable, or removed after an API delete), nothing else",
    given: { resource: null, job: aJob(), pods: [aPod().running()] },
    actions: ["resourceGone {id} codeplane/{name}"],
    requeue: undefined,
  },
  {
    name: "a name of another kind: not ours, nothing",
    given: { resource: null },
    reconcile: otherKindName,
    actions: [],
    requeue: undefined,
  },
  {
    name: "being deleted (deletionTimestamp): nothing",
    given: { resource: resource().withStatus(runningStatus(k)).deleting().build(), job: aJob(), pods: [aPod().running()] },
    actions: [],
    requeue: undefined,
  },
  {
    name: "row hidden (deleted through the API): the resource is deleted, no Job",
    given: { resource: resource().build(), hidden: true },
    actions: ["delete {name}"],
    requeue: undefined,
  },
  {
    name: "row orphaned (this database has no row, repository or account for it): left alone, no Job, a Tracked=False condition, a Warning Event and a metric",
    given: { resource: resource().withStatus(runningStatus(k)).build(), job: aJob(), pods: [aPod().running()], orphaned: true },
    actions: [
      "mirror running",
      "metric untracked {noun}",
      "patchStatus {name} running",
      "event Warning UnknownToDatabase: this installation's database has no {noun}, repository or account for it: left alone (not started, stopped or deleted)",
    ],
    requeue: UNTRACKED_RESYNC_MS,
    status: {
      phase: "running",
      conditions: expect.arrayContaining([expect.objectContaining({ type: "Tracked", status: "False", reason: "UnknownToDatabase" })]),
    },
  },
  {
    name: "another installation's resource: not touched at all",
    given: { resource: resource().installation("inst-theirs").withStatus(runningStatus(k)).build(), job: aJob(), pods: [aPod().running()] },
    actions: [],
    requeue: undefined,
  },
  {
    name: "labelled with this installation: reconciled as usual",
    given: { resource: resource().installation(INSTALLATION).withStatus(runningStatus(k)).build(), job: aJob(), pods: [aPod().running()] },
    actions: ["mirror running", "mirror running", "archive {id} pod-a"],
    requeue: LIVE,
  },
  {
    name: "its row can never be stored (a NUL written by hand): failed at once with the reason, a Warning Event and a metric, no Job",
    given: { resource: resource().build(), unstorable: true },
    actions: [
      "mirror -",
      "metric unreconcilable {noun} Unstorable",
      "{release}",
      "patchStatus {name} failed",
      "event Warning Unstorable: its row cannot be stored: unsupported Unicode escape sequence",
      "mirror failed",
    ],
    requeue: undefined,
    status: {
      phase: "failed",
      error: "its row cannot be stored: unsupported Unicode escape sequence",
      completionTime: now,
      conditions: expect.arrayContaining([expect.objectContaining({ type: "Finished", status: "True", reason: "Unstorable" })]),
    },
  },
  {
    name: "finished longer ago than the retention: the resource is deleted (its row stays)",
    given: { resource: resource().withStatus(completedStatus(k)).build(), retentionSeconds: 5 },
    actions: ["mirror completed", "apiPods {label}", "markLogsComplete {id}", "delete {name}"],
    requeue: undefined,
  },
  {
    name: "untracked and already said so: nothing patched, no Event, looked at again later",
    given: {
      resource: resource()
        .withStatus({
          ...runningStatus(k),
          conditions: [
            ...runningStatus(k).conditions!,
            { type: "Tracked", status: "False", reason: "UnknownToDatabase", message: "m", lastTransitionTime: now },
          ],
        })
        .build(),
      job: aJob(),
      pods: [aPod().running()],
      orphaned: true,
    },
    actions: ["mirror running"],
    requeue: UNTRACKED_RESYNC_MS,
  },
  {
    name: "known to the database again (restored): Tracked turns True, the workload carries on",
    given: {
      resource: resource()
        .withStatus({
          ...runningStatus(k),
          conditions: [
            ...runningStatus(k).conditions!,
            { type: "Tracked", status: "False", reason: "UnknownToDatabase", message: "m", lastTransitionTime: now },
          ],
        })
        .build(),
      job: aJob(),
      pods: [aPod().running()],
    },
    actions: ["mirror running", "patchStatus {name} running", "mirror running", "archive {id} pod-a"],
    requeue: LIVE,
    status: { conditions: expect.arrayContaining([expect.objectContaining({ type: "Tracked", status: "True", reason: "Tracked" })]) },
  },
  {
    name: "new, no Job in cache: Job created, status pending, Event, mirrored before and after",
    given: { resource: resource().build() },
    actions: ["mirror -", "{launch}", "patchStatus {name} pending", `event Normal Pending: ${k.noun} is pending`, "mirror pending"],
    requeue: LIVE,
    // The Job was just made: it has not started, so a run's timeline has nothing yet.
    status: { ...withoutTimeline(pendingStatus(k)), conditions: pendingStatus(k).conditions!.map((c) => ({ ...c, lastTransitionTime: now })) },
  },
  {
    name: "Job in cache, no pod yet: no Job created",
    given: { resource: resource().build(), job: aJob() },
    actions: ["mirror -", "patchStatus {name} pending", `event Normal Pending: ${k.noun} is pending`, "mirror pending"],
    requeue: LIVE,
  },
  {
    name: "pending and nothing changed: no patch, no Event, still mirrored",
    given: { resource: resource().withStatus(pendingStatus(k)).build(), job: aJob() },
    actions: ["mirror pending", "mirror pending"],
    requeue: LIVE,
  },
  {
    name: "another workload's pod in the cache is not this one's",
    given: {
      resource: resource().withStatus(pendingStatus(k)).build(),
      job: aJob(),
      pods: [
        aPod("someone-else")
          .running()
          .build({ ...k, id: "other" }),
      ],
    },
    actions: ["mirror pending", "mirror pending"],
    requeue: LIVE,
  },
  {
    name: "main container running: status running with startTime, Event, archived",
    given: { resource: resource().withStatus(pendingStatus(k)).build(), job: aJob(), pods: [aPod().running()] },
    actions: [
      "mirror pending",
      "{release}",
      "patchStatus {name} running",
      `event Normal Running: ${k.noun} is running`,
      "mirror running",
      "archive {id} pod-a",
    ],
    requeue: LIVE,
    status: {
      phase: "running",
      podName: "pod-a",
      startTime: MAIN_STARTED,
      conditions: [
        { type: "Started", status: "True", reason: k.started.reason, message: k.started.message, lastTransitionTime: now },
        // Still False: its transition time holds (meta.SetStatusCondition).
        { type: "Finished", status: "False", reason: "Running", message: `the ${k.noun} is running`, lastTransitionTime: EARLIER },
      ],
    },
  },
  {
    name: "running and nothing changed: no patch, no Event, mirrored, still archived",
    given: { resource: resource().withStatus(runningStatus(k)).build(), job: aJob(), pods: [aPod().running()] },
    actions: ["mirror running", "mirror running", "archive {id} pod-a"],
    requeue: LIVE,
  },
  {
    name: "phase unchanged, podName changed (a newer pod): patch without Event",
    given: {
      resource: resource().withStatus(runningStatus(k, "pod-a")).build(),
      job: aJob(),
      pods: [aPod("pod-a").running(), aPod("pod-b").createdAt("2026-01-01T00:08:30.000Z").running()],
    },
    actions: ["mirror running", "patchStatus {name} running", "mirror running", "archive {id} pod-b"],
    requeue: LIVE,
    status: { podName: "pod-b" },
  },
  {
    name: "phase unchanged, spec generation changed: patch without Event",
    given: { resource: resource().withStatus(runningStatus(k)).generation(2).build(), job: aJob(), pods: [aPod().running()] },
    actions: ["mirror running", "patchStatus {name} running", "mirror running", "archive {id} pod-a"],
    requeue: LIVE,
    status: { observedGeneration: 2 },
  },
  {
    name: "patchStatus finds the resource gone: stop, no Event, no second mirror",
    given: { resource: resource().withStatus(pendingStatus(k)).build(), job: aJob(), pods: [aPod().running()], vanishes: true },
    actions: ["mirror pending", "{release}", "patchStatus {name} running"],
    requeue: undefined,
  },
  {
    name: "cancel requested with a Job: Job deleted, status cancelled, logs of the running pod archived",
    given: { resource: resource().withStatus(runningStatus(k)).cancelRequested().build(), job: aJob(), pods: [aPod().running()] },
    actions: [
      "mirror running",
      "deleteJob {name}",
      "patchStatus {name} cancelled",
      "event Normal Cancelled: cancelled by request",
      "mirror cancelled",
      "archive {id} pod-a",
    ],
    requeue: "retained",
    status: { phase: "cancelled", error: "cancelled by request", completionTime: now, podName: "pod-a" },
  },
  {
    name: "cancel requested before any Job: none created or deleted, cancelled, no pod anywhere so logs complete",
    given: { resource: resource().cancelRequested().build() },
    actions: [
      "mirror -",
      "{release}",
      "patchStatus {name} cancelled",
      "event Normal Cancelled: cancelled by request",
      "mirror cancelled",
      "apiPods {label}",
      "markLogsComplete {id}",
    ],
    requeue: "retained",
    status: { phase: "cancelled" },
  },
  {
    name: "terminal, pod gone from the cache but in the API server (restarted controller): asked once, archived from it, logs not complete",
    given: { resource: resource().withStatus(runningStatus(k)).cancelRequested().build(), job: aJob(), apiPods: [aPod().terminated(143)] },
    actions: [
      "mirror running",
      "deleteJob {name}",
      "patchStatus {name} cancelled",
      "event Normal Cancelled: cancelled by request",
      "mirror cancelled",
      "apiPods {label}",
      "archive {id} pod-a",
    ],
    requeue: "retained",
  },
  {
    name: "pod vanished before it finished (Job failed, no pod anywhere): failed, logs complete",
    given: { resource: resource().withStatus(runningStatus(k)).build(), job: aJob().failed() },
    // The message is observeRun's, which analyses reuse: it says "run" for both.
    actions: [
      "mirror running",
      "apiPods {label}",
      "patchStatus {name} failed",
      "event Warning PodLost: the run's pod was deleted before it finished",
      "mirror failed",
      "markLogsComplete {id}",
    ],
    requeue: "retained",
    status: { phase: "failed", error: "the run's pod was deleted before it finished", completionTime: now, startTime: MAIN_STARTED, podName: "pod-a" },
  },
  {
    // The Job controller deletes the pod at the deadline before the DeadlineExceeded condition arrives:
    // deciding then would call a timeout a lost pod, for good.
    name: "pod vanished, Job counted a failed pod but has no condition yet: still running, waiting for the Job's reason",
    given: { resource: resource().withStatus(runningStatus(k)).build(), job: aJob().failedPods(1) },
    actions: ["mirror running", "apiPods {label}", "patchStatus {name} running", "mirror running"],
    requeue: LIVE,
  },
  {
    name: "terminal, no pod anywhere but the archiver still at work: logs not marked complete",
    given: { resource: resource().withStatus(runningStatus(k)).build(), job: aJob().failed(), archiving: true },
    actions: [
      "mirror running",
      "apiPods {label}",
      "patchStatus {name} failed",
      "event Warning PodLost: the run's pod was deleted before it finished",
      "mirror failed",
    ],
    requeue: "retained",
  },
  {
    name: "finished, no Job in the cache: none created, no patch, no pod anywhere so logs complete",
    given: { resource: resource().withStatus(completedStatus(k)).build() },
    actions: ["mirror completed", "apiPods {label}", "markLogsComplete {id}"],
    requeue: "retained",
  },
  {
    name: "finished, then a cancel request: nothing stopped, no patch",
    given: { resource: resource().withStatus(completedStatus(k)).cancelRequested().build(), job: aJob().complete(), pods: [aPod().terminated(0)] },
    actions: ["mirror completed", "archive {id} pod-a"],
    requeue: "retained",
  },
  {
    name: "finished, no pod anywhere, archiver still at work: logs not marked complete",
    given: { resource: resource().withStatus(completedStatus(k)).build(), archiving: true },
    actions: ["mirror completed", "apiPods {label}"],
    requeue: "retained",
  },
  {
    name: "finished, then its spec edited: the new generation is acknowledged, nothing else changes, no Event",
    given: { resource: resource().withStatus(completedStatus(k)).generation(2).build(), job: aJob().complete(), pods: [aPod().terminated(0)] },
    actions: ["mirror completed", "patchStatus {name} completed", "archive {id} pod-a"],
    requeue: "retained",
    status: {
      phase: "completed",
      observedGeneration: 2,
      podName: "pod-a",
      conditions: [
        expect.objectContaining({ type: "Started", observedGeneration: 2 }),
        expect.objectContaining({ type: "Finished", reason: "Completed", observedGeneration: 2 }),
      ],
    },
  },
  {
    name: "repository deleted while the status was being written: left alone from then on, said once",
    given: { resource: resource().withStatus(pendingStatus(k)).build(), job: aJob(), pods: [aPod().running()], orphaned: "later" },
    actions: [
      "mirror pending",
      "{release}",
      "patchStatus {name} running",
      "event Normal Running: {noun} is running",
      "mirror running",
      "metric untracked {noun}",
      "patchStatus {name} pending",
      "event Warning UnknownToDatabase: this installation's database has no {noun}, repository or account for it: left alone (not started, stopped or deleted)",
    ],
    requeue: UNTRACKED_RESYNC_MS,
  },
  {
    name: "finished with its own reason, reconciled again: the reason and pod are kept, nothing patched",
    given: { resource: resource().withStatus(completedStatus(k)).build(), job: aJob().complete(), pods: [aPod().terminated(0)] },
    actions: ["mirror completed", "archive {id} pod-a"],
    requeue: "retained",
  },
  {
    name: "finished, then a running pod appears: no Job, no patch, the status keeps its pod",
    given: { resource: resource().withStatus(completedStatus(k)).build(), pods: [aPod("pod-c").running()] },
    actions: ["mirror completed", "archive {id} pod-c"],
    requeue: "retained",
  },
];

describe.each(kinds)("WorkloadReconciler, every kind alike: $k.noun", (kind) => {
  it.each(commonCases(kind))("$name", (c) => check(kind.k, kind.world, c));

  it("a spec edited by hand into something invalid: failed at once as InvalidSpec, never retried, nothing created", async () => {
    const { reconciler, recorded } = kind.world({ resource: kind.resource().withSpec({ timeoutSeconds: -5 }).build() });
    expect(await reconciler.reconcile(kind.k.name)).toEqual({});
    expect(recorded.actions.slice(0, 3)).toEqual(expand(kind.k, ["metric unreconcilable {noun} InvalidSpec", "{release}"]));
    expect(recorded.actions.some((a) => a.startsWith("createJob"))).toBe(false);
    expect(recorded.patched.at(-1)).toMatchObject({ phase: "failed", error: expect.stringMatching(/^its spec is invalid: .*timeoutSeconds/s) });
    expect(recorded.actions).toContainEqual(expect.stringMatching(/^event Warning InvalidSpec: its spec is invalid/));
  });

  it("giving up after repeated failures: the Job is stopped and the workload marked failed with the error, once", async () => {
    const { reconciler, recorded } = kind.world({ resource: kind.resource().withStatus(runningStatus(kind.k)).build(), job: aJob(), pods: [aPod().running()] });
    await reconciler.giveUp(kind.k.name, new TypeError("boom"));
    expect(recorded.actions).toEqual(
      expand(kind.k, [
        "metric unreconcilable {noun} Unreconcilable",
        "deleteJob {name}",
        "{release}",
        "patchStatus {name} failed",
        "event Warning Unreconcilable: the controller could not reconcile it: boom",
        "mirror failed",
      ]),
    );
  });

  it("giving up on a finished workload changes nothing", async () => {
    const { reconciler, recorded } = kind.world({ resource: kind.resource().withStatus(completedStatus(kind.k)).build() });
    await reconciler.giveUp(kind.k.name, new TypeError("boom"));
    expect(recorded.actions).toEqual([]);
  });

  it("handles only its own kind's names", () => {
    const { reconciler } = kind.world({ resource: null });
    expect(reconciler.handles(kind.k.name)).toBe(true);
    expect(reconciler.handles(kind.otherKindName)).toBe(false);
  });

  it("records the Event on the resource itself", async () => {
    const { reconciler, recorded } = kind.world({ resource: kind.resource().build() });
    await reconciler.reconcile(kind.k.name);
    expect(recorded.events.map((e) => e.subject)).toEqual([
      { kind: kind.k.noun === "run" ? "Run" : "Analysis", name: kind.k.name, namespace: NAMESPACE, uid: `uid-${kind.k.noun}` },
    ]);
  });

  it("archives the main container of the workload's pod", async () => {
    const { reconciler, recorded } = kind.world({ resource: kind.resource().withStatus(runningStatus(kind.k)).build(), job: aJob(), pods: [aPod().running()] });
    await reconciler.reconcile(kind.k.name);
    expect(recorded.archived).toEqual([{ id: kind.k.id, target: { namespace: NAMESPACE, pod: "pod-a", container: "main" } }]);
  });
});

// ---------------------------------------------------------------------------
// Runs: the Secret, exit codes, failures Kubernetes would retry forever.

const runCases: Case<RunSpec, RunStatus>[] = [
  {
    name: "new, the repository has variables: Secret created before the Job",
    given: { resource: aRun().build(), env: { API_TOKEN: "t0ken" } },
    actions: ["mirror -", "{launch}", "patchStatus {name} pending", "event Normal Pending: run is pending", "mirror pending"],
    requeue: LIVE,
  },
  {
    name: "a compute type this installation does not define: failed at once, no Secret, no Job",
    given: { resource: aRun().withSpec({ computeType: "gpu-x" }).build(), env: { API_TOKEN: "t0ken" } },
    actions: [
      "mirror -",
      "metric unreconcilable run UnknownComputeType",
      "{release}",
      "patchStatus {name} failed",
      "event Warning UnknownComputeType: compute type 'gpu-x' is not defined here (defined: cpu-general, cpu-memory, gpu-a10g)",
      "mirror failed",
    ],
    requeue: undefined,
  },
  {
    name: "a compute type named like an object's own property ('constructor'): failed at once, no Job",
    given: { resource: aRun().withSpec({ computeType: "constructor" }).build() },
    actions: [
      "mirror -",
      "metric unreconcilable run UnknownComputeType",
      "{release}",
      "patchStatus {name} failed",
      "event Warning UnknownComputeType: compute type 'constructor' is not defined here (defined: cpu-general, cpu-memory, gpu-a10g)",
      "mirror failed",
    ],
    requeue: undefined,
  },
  {
    name: "new, no variables: a Secret all the same, for the checkout token",
    given: { resource: aRun().build(), env: {} },
    actions: ["mirror -", "{launch}", "patchStatus {name} pending", "event Normal Pending: run is pending", "mirror pending"],
    requeue: LIVE,
  },
  {
    name: "pod scheduled, checkout still running: preprocessing",
    given: { resource: aRun().withStatus(pendingStatus<RunStatus>(RUN)).build(), job: aJob(), pods: [aPod().scheduled()] },
    actions: ["mirror pending", "patchStatus {name} preprocessing", "event Normal Preprocessing: run is preprocessing", "mirror preprocessing"],
    requeue: LIVE,
    status: { phase: "preprocessing", podName: "pod-a" },
  },
  {
    name: "completed with exit code 0",
    given: { resource: aRun().withStatus(runningStatus<RunStatus>(RUN)).build(), job: aJob().complete(), pods: [aPod().terminated(0)] },
    actions: ["mirror running", "patchStatus {name} completed", "event Normal Completed: run is completed", "mirror completed", "archive {id} pod-a"],
    requeue: "retained",
    status: {
      ...completedStatus<RunStatus>(RUN),
      conditions: [completedStatus<RunStatus>(RUN).conditions![0]!, { ...completedStatus<RunStatus>(RUN).conditions![1]!, lastTransitionTime: now }],
    },
  },
  {
    name: "completed, and its finished row cannot be stored: stays completed (not rewritten as failed), finished once",
    given: { resource: aRun().withStatus(runningStatus<RunStatus>(RUN)).build(), job: aJob().complete(), pods: [aPod().terminated(0)], unstorable: "finished" },
    actions: ["mirror running", "patchStatus {name} completed", "event Normal Completed: run is completed", "mirror completed"],
    requeue: undefined,
    status: { phase: "completed", exitCode: 0 },
  },
  {
    name: "failed with a non-zero exit code",
    given: { resource: aRun().withStatus(runningStatus<RunStatus>(RUN)).build(), job: aJob().failed(), pods: [aPod().terminated(3)] },
    actions: ["mirror running", "patchStatus {name} failed", "event Warning NonZeroExit: command exited with code 3", "mirror failed", "archive {id} pod-a"],
    requeue: "retained",
    status: { phase: "failed", exitCode: 3, error: "command exited with code 3", completionTime: MAIN_FINISHED },
  },
  {
    name: "OOMKilled: failed with the memory hint",
    given: { resource: aRun().withStatus(runningStatus<RunStatus>(RUN)).build(), job: aJob().failed(), pods: [aPod().terminated(137, "OOMKilled")] },
    actions: [
      "mirror running",
      "patchStatus {name} failed",
      "event Warning OOMKilled: the run ran out of memory (OOMKilled): raise the compute type's memory limit",
      "mirror failed",
      "archive {id} pod-a",
    ],
    requeue: "retained",
    status: { exitCode: 137 },
  },
  {
    name: "image cannot be pulled: the Job is stopped (Kubernetes would retry forever), failed, no logs to wait for",
    given: { resource: aRun().withStatus(pendingStatus<RunStatus>(RUN)).build(), job: aJob(), pods: [aPod().pullFailing()] },
    actions: [
      "mirror pending",
      "deleteJob {name}",
      "{release}",
      "patchStatus {name} failed",
      "event Warning ImagePullFailed: image pull failed for img: ErrImagePull (not found)",
      "mirror failed",
      "markLogsComplete {id}",
    ],
    requeue: "retained",
  },
  {
    name: "completed, pod only in the API server: asked once, archived from it, logs not complete",
    given: { resource: aRun().withStatus(runningStatus<RunStatus>(RUN)).build(), job: aJob().complete(), apiPods: [aPod().terminated(0)] },
    actions: [
      "mirror running",
      "apiPods {label}",
      "patchStatus {name} completed",
      "event Normal Completed: run is completed",
      "mirror completed",
      "archive {id} pod-a",
    ],
    requeue: "retained",
    status: { exitCode: 0, completionTime: MAIN_FINISHED, podName: "pod-a" },
  },
  {
    name: "failed while the cache lags behind its pod (controller restarted): the exit code comes from the API server's pod, not 'pod lost'",
    given: { resource: aRun().withStatus(runningStatus<RunStatus>(RUN)).build(), job: aJob().failed(), apiPods: [aPod().terminated(3)] },
    actions: [
      "mirror running",
      "apiPods {label}",
      "patchStatus {name} failed",
      "event Warning NonZeroExit: command exited with code 3",
      "mirror failed",
      "archive {id} pod-a",
    ],
    requeue: "retained",
    status: { phase: "failed", exitCode: 3, error: "command exited with code 3", podName: "pod-a" },
  },
];

const ADMITTED_AT = "2026-01-01T00:00:00.123Z";
const QUEUED: AdmissionDecision = { admitted: false, reason: "AccountConcurrency", message: "queued: the account has its limit of 2", position: 3 };
const admittedCondition = (status: "True" | "False", reason: string) => expect.arrayContaining([expect.objectContaining({ type: "Admitted", status, reason })]);

const admissionCases: Case<RunSpec, RunStatus>[] = [
  {
    name: "over its account's executing limit: no Job, pending with status.queue and Admitted=False, looked at again later",
    given: { resource: aRun().build(), admission: QUEUED },
    actions: ["mirror -", "admit {name} AccountConcurrency", "patchStatus {name} pending", "event Normal AccountConcurrency: run is pending", "mirror pending"],
    requeue: QUEUE_RESYNC_MS,
    status: { phase: "pending", queue: { reason: "AccountConcurrency" }, conditions: admittedCondition("False", "AccountConcurrency") },
  },
  {
    name: "queued, then admitted: its Job is created, Admitted=True and the queue field deleted (null in the merge patch)",
    given: {
      resource: aRun()
        .withStatus({ ...pendingStatus<RunStatus>(RUN), queue: { reason: "AccountConcurrency" } })
        .build(),
      admission: { admitted: true, at: new Date(ADMITTED_AT) },
    },
    actions: ["mirror pending", "admit {name} yes", "{launch}", "patchStatus {name} pending", "mirror pending"],
    requeue: LIVE,
    // The condition's time is the admission decision's, not this reconcile's.
    status: {
      phase: "pending",
      queue: null,
      conditions: expect.arrayContaining([expect.objectContaining({ type: "Admitted", status: "True", lastTransitionTime: ADMITTED_AT })]),
    } as unknown as Partial<RunStatus>,
  },
  {
    name: "cancelled while queued: never admitted, no Job created, cancelled and no longer queued",
    given: {
      resource: aRun()
        .withStatus({ ...pendingStatus<RunStatus>(RUN), queue: { reason: "AccountConcurrency" } })
        .cancelRequested()
        .build(),
      admission: { admitted: true, at: new Date(ADMITTED_AT) },
    },
    actions: [
      "mirror pending",
      "{release}",
      "patchStatus {name} cancelled",
      "event Normal Cancelled: cancelled by request",
      "mirror cancelled",
      "apiPods {label}",
      "markLogsComplete {id}",
    ],
    requeue: "retained",
    status: { phase: "cancelled", queue: null } as unknown as Partial<RunStatus>,
  },
  {
    name: "admitted earlier (Admitted=True), its Job not in the cache yet: not asked again, the Job made",
    given: {
      resource: aRun()
        .withStatus({
          ...pendingStatus<RunStatus>(RUN),
          conditions: [{ type: "Admitted", status: "True", reason: "Admitted", message: "x", observedGeneration: 1, lastTransitionTime: now }],
        })
        .build(),
      admission: QUEUED,
    },
    actions: ["mirror pending", "{launch}", "patchStatus {name} pending", "mirror pending"],
    requeue: LIVE,
    status: { conditions: admittedCondition("True", "Admitted") },
  },
  {
    name: "a Job exists already (made before admission existed, or before a restart wrote the status): not asked, Admitted=True",
    given: { resource: aRun().withStatus(pendingStatus<RunStatus>(RUN)).build(), job: aJob(), admission: QUEUED },
    actions: ["mirror pending", "patchStatus {name} pending", "mirror pending"],
    requeue: LIVE,
    status: { conditions: admittedCondition("True", "Admitted") },
  },
];

const CLUSTER_QUOTA: AdmissionDecision = {
  admitted: false,
  reason: "ClusterQuota",
  message: "queued: Kueue: insufficient unused quota",
  position: 1,
  recheckMs: 10_000,
};
const kueueQueued = (): RunStatus => ({
  ...pendingStatus<RunStatus>(RUN),
  queue: { reason: "KueuePending" },
  conditions: [{ type: "Admitted", status: "False", reason: "KueuePending", message: "x", observedGeneration: 1, lastTransitionTime: now }],
});

// An external engine (Kueue): the Job is made at once, suspended in the engine's queue, and the run
// waits until the engine says it admitted it; a cancel deletes the suspended Job, never admitted.
const externalCases: Case<RunSpec, RunStatus>[] = [
  {
    name: "a new run: its Job made at once as the engine prepares it, the run queued waiting for the engine and looked at again soon",
    given: { resource: aRun().build(), external: CLUSTER_QUOTA },
    actions: [
      "mirror -",
      "handOver {name} now",
      "mintToken {noun} {id}",
      "createSecret {name}",
      "prepare {name}",
      "createJob {name}",
      "patchStatus {name} pending",
      "event Normal KueuePending: run is pending",
      "mirror pending",
    ],
    requeue: 3000,
    status: { phase: "pending", queue: { reason: "KueuePending" }, conditions: admittedCondition("False", "KueuePending") },
  },
  {
    name: "not its account's turn (an earlier run is in Kueue's hands): nothing made, the run queued saying so",
    given: {
      resource: aRun().build(),
      external: CLUSTER_QUOTA,
      behind: { ...CLUSTER_QUOTA, message: "queued: behind the account's run x", recheckMs: undefined },
    },
    actions: ["mirror -", "handOver {name} ClusterQuota", "patchStatus {name} pending", "event Normal ClusterQuota: run is pending", "mirror pending"],
    requeue: QUEUE_RESYNC_MS,
    status: { phase: "pending", queue: { reason: "ClusterQuota" }, conditions: admittedCondition("False", "ClusterQuota") },
  },
  {
    name: "its environment built (preprocessing) and its turn not come: it stays preprocessing, queued (a phase never goes back)",
    given: {
      resource: aRun()
        .withStatus({ ...kueueQueued(), phase: "preprocessing" })
        .build(),
      external: CLUSTER_QUOTA,
      behind: CLUSTER_QUOTA,
    },
    actions: ["mirror preprocessing", "handOver {name} ClusterQuota", "patchStatus {name} preprocessing", "mirror preprocessing"],
    requeue: 10_000,
    status: { phase: "preprocessing", queue: { reason: "ClusterQuota" } },
  },
  {
    name: "its suspended Job held back by the engine: the engine's reason",
    given: { resource: aRun().withStatus(kueueQueued()).build(), job: aJob(), external: CLUSTER_QUOTA },
    actions: ["mirror pending", "observe {name} ClusterQuota", "patchStatus {name} pending", "mirror pending"],
    requeue: 10_000,
    status: { queue: { reason: "ClusterQuota" }, conditions: admittedCondition("False", "ClusterQuota") },
  },
  {
    name: "admitted by the engine: Admitted=True at the engine's time, no longer queued, no Job made",
    given: { resource: aRun().withStatus(kueueQueued()).build(), job: aJob(), external: { admitted: true, at: new Date(ADMITTED_AT) } },
    actions: ["mirror pending", "observe {name} yes", "patchStatus {name} pending", "mirror pending"],
    requeue: LIVE,
    status: {
      queue: null,
      conditions: expect.arrayContaining([expect.objectContaining({ type: "Admitted", status: "True", lastTransitionTime: ADMITTED_AT })]),
    } as unknown as Partial<RunStatus>,
  },
  {
    name: "cancelled while its suspended Job waits: the Job deleted, cancelled, never Admitted=True",
    given: { resource: aRun().withStatus(kueueQueued()).cancelRequested().build(), job: aJob(), external: CLUSTER_QUOTA },
    actions: [
      "mirror pending",
      "deleteJob {name}",
      "{release}",
      "patchStatus {name} cancelled",
      "event Normal Cancelled: cancelled by request",
      "mirror cancelled",
      "apiPods {label}",
      "markLogsComplete {id}",
    ],
    requeue: "retained",
    status: { phase: "cancelled", queue: null, conditions: admittedCondition("False", "KueuePending") } as unknown as Partial<RunStatus>,
  },
];

describe("WorkloadReconciler: runs", () => {
  it.each(runCases)("$name", (c) => check(RUN, runWorld, c));
  it.each(admissionCases)("admission: $name", (c) => check(RUN, runWorld, c));
  it.each(externalCases)("external admission: $name", (c) => check(RUN, runWorld, c));

  it("external admission: the Job is created suspended with the engine's queue label", async () => {
    const { reconciler, recorded } = runWorld({ resource: aRun().build(), external: CLUSTER_QUOTA });
    await reconciler.reconcile(RUN.name);
    expect(recorded.jobs[0]!.spec!.suspend).toBe(true);
    expect(recorded.jobs[0]!.metadata!.labels).toMatchObject({ "kueue.x-k8s.io/queue-name": "q" });
  });

  it("admission: queued and still over the limit: the same status, nothing written", async () => {
    const first = runWorld({ resource: aRun().build(), admission: QUEUED });
    await first.reconciler.reconcile(RUN.name);
    const queued = first.recorded.patched.at(-1)!;
    const again = runWorld({
      resource: aRun()
        .withStatus(JSON.parse(JSON.stringify(queued)) as RunStatus)
        .build(),
      admission: QUEUED,
    });
    expect(await again.reconciler.reconcile(RUN.name)).toEqual({ requeueAfterMs: QUEUE_RESYNC_MS });
    expect(again.recorded.actions).toEqual(expand(RUN, ["mirror pending", "admit {name} AccountConcurrency", "mirror pending"]));
  });

  it("the Job reads the run's variables by name from the Secret it owns, beside the checkout token", async () => {
    const { reconciler, recorded } = runWorld({ resource: aRun().build(), env: { API_TOKEN: "t0ken" } });
    await reconciler.reconcile(RUN.name);
    const [secret] = recorded.secrets;
    expect(secret).toMatchObject({
      metadata: { name: RUN.name, namespace: NAMESPACE, ownerReferences: [{ kind: "Run", name: RUN.name, uid: "uid-run", controller: true }] },
      immutable: true,
      stringData: { API_TOKEN: "t0ken", "codeplane-checkout-token": "cpg_test-token" },
    });
    const main = recorded.jobs[0]!.spec!.template.spec!.containers.find((c) => c.name === "main");
    expect(main!.env).toContainEqual({ name: "API_TOKEN", valueFrom: { secretKeyRef: { name: RUN.name, key: "API_TOKEN", optional: false } } });
    expect(JSON.stringify(main)).not.toContain("codeplane-checkout-token");
  });

  it("a run's terminal status is given to the metrics once: when it is written, not when a finished run is looked at again", async () => {
    const running = runWorld({ resource: aRun().withStatus(runningStatus<RunStatus>(RUN)).build(), job: aJob().complete(), pods: [aPod().terminated(0)] });
    await running.reconciler.reconcile(RUN.name);
    expect(running.recorded.patched.at(-1)?.phase).toBe("completed");
    expect(running.recorded.finished).toEqual([expect.objectContaining({ phase: "completed", computeType: "cpu-general", startTime: MAIN_STARTED })]);
    const again = runWorld({ resource: aRun().withStatus(completedStatus<RunStatus>(RUN)).build(), job: aJob().complete(), pods: [aPod().terminated(0)] });
    await again.reconciler.reconcile(RUN.name);
    expect(again.recorded.finished).toEqual([]);
  });

  it("a run failed because it can never be reconciled is given to the metrics once too", async () => {
    const { reconciler, recorded } = runWorld({ resource: aRun().build(), admission: QUEUED });
    await reconciler.reconcile(RUN.name);
    expect(recorded.finished).toEqual([]);
    const failing = runWorld({ resource: aRun().withSpec({ computeType: "no-such-type" }).build() });
    await failing.reconciler.reconcile(RUN.name);
    expect(failing.recorded.finished).toEqual([expect.objectContaining({ phase: "failed", computeType: "no-such-type" })]);
  });

  it("without variables the main container reads nothing from the Secret", async () => {
    const { reconciler, recorded } = runWorld({ resource: aRun().build() });
    await reconciler.reconcile(RUN.name);
    const main = recorded.jobs[0]!.spec!.template.spec!.containers.find((c) => c.name === "main");
    expect(main!.env!.filter((e) => e.valueFrom)).toEqual([]);
  });

  describe("with an environment", () => {
    const KEY = "e".repeat(64);
    const withEnv = () => {
      const run = aRun().build();
      run.spec.image = "codeplane-go:dev";
      run.spec.environment = {
        key: KEY,
        image: "codeplane-go:dev",
        steps: [{ name: "go mod download", run: "go mod download" }],
        cachePaths: [],
        warnings: [],
      };
      return run;
    };
    const builds = (state: Awaited<ReturnType<EnvironmentBuilds["ensure"]>>) => ({ ensure: async () => state });

    it("waits in preprocessing while its environment builds: no Job, looked at again soon", async () => {
      const { reconciler, recorded } = runWorld({ resource: withEnv(), environments: builds({ state: "waiting" }) });
      expect(await reconciler.reconcile(RUN.name)).toEqual({ requeueAfterMs: ENVIRONMENT_POLL_MS });
      expect(recorded.actions.some((a) => /^(mintToken|createSecret|createJob)/.test(a))).toBe(false);
      expect(recorded.patched.at(-1)).toMatchObject({ phase: "preprocessing" });
      expect(recorded.patched.at(-1)!.conditions!.find((c) => c.type === "Finished")).toMatchObject({ status: "False", reason: "EnvironmentBuilding" });
    });

    it("with Kueue: waits for its build before its turn, not admitted (so the next reconcile does not make its Job outside the queue)", async () => {
      const first = runWorld({ resource: withEnv(), environments: builds({ state: "waiting" }), external: CLUSTER_QUOTA });
      await first.reconciler.reconcile(RUN.name);
      const waited = first.recorded.patched.at(-1)!;
      expect(waited).toMatchObject({ phase: "preprocessing" });
      expect(waited.conditions!.find((c) => c.type === "Admitted")).toMatchObject({ status: "False", reason: "EnvironmentBuilding" });
      const resource = withEnv();
      resource.status = JSON.parse(JSON.stringify(waited)) as RunStatus;
      const again = runWorld({ resource, environments: builds({ state: "waiting" }), external: CLUSTER_QUOTA, behind: CLUSTER_QUOTA });
      await again.reconciler.reconcile(RUN.name);
      expect(again.recorded.actions.filter((a) => /^(handOver|createJob)/.test(a))).toEqual([`handOver ${RUN.name} ClusterQuota`]);
      expect(again.recorded.patched.at(-1)).toMatchObject({ phase: "preprocessing", queue: { reason: "ClusterQuota" } });
    });

    it("fails at once, quoting the build's failure, when its environment failed to build (a user's fault, not the installation's)", async () => {
      const { reconciler, recorded } = runWorld({
        resource: withEnv(),
        environments: builds({ state: "failed", error: "environment build failed in step: [1/1] go mod download (exit code 1)" }),
      });
      await reconciler.reconcile(RUN.name);
      expect(recorded.patched.at(-1)).toMatchObject({
        phase: "failed",
        error: expect.stringContaining(`go mod download (exit code 1)\n(the build's log: GET /v1/environments/${KEY})`),
      });
      expect(recorded.actions.some((a) => a.startsWith("createJob") || a.startsWith("metric unreconcilable"))).toBe(false);
    });

    it("runs in the environment's image once it is ready, restoring it first, and records a cache hit", async () => {
      const ready = { id: "env-1", completed_at: new Date("2025-12-31T00:00:00Z") } as unknown as EnvironmentRow;
      const { reconciler, recorded } = runWorld({ resource: withEnv(), environments: builds({ state: "ready", row: ready }) });
      await reconciler.reconcile(RUN.name);
      const pod = recorded.jobs[0]!.spec!.template.spec!;
      expect(pod.initContainers!.map((c) => c.name)).toEqual(["tools", "checkout", "environment"]);
      expect(pod.containers[0]!.image).toBe("codeplane-go:dev");
      expect(recorded.actions).toContain(`recordEnvironmentCache ${RUN.id} hit`);
    });
  });

  it("without CODEPLANE_INTERNAL_URL a run fails at once saying so, with no token, Secret or Job", async () => {
    const { reconciler, recorded } = runWorld({ resource: aRun().build(), internalUrl: null });
    await reconciler.reconcile(RUN.name);
    expect(recorded.actions.some((a) => /^(mintToken|createSecret|createJob)/.test(a))).toBe(false);
    expect(recorded.patched.at(-1)).toMatchObject({ phase: "failed", error: expect.stringContaining("CODEPLANE_INTERNAL_URL") });
  });
});

// ---------------------------------------------------------------------------
// Analyses: the analyzer's output, read back from its log once it finished.

const twoExperiments = analyzerLog({ document: JSON.stringify(anAnalyzerResult(2)) });

const analysisCases: Case<AnalysisSpec, AnalysisStatus>[] = [
  {
    name: "analyzer finished: log read, result saved BEFORE the status says completed",
    given: {
      resource: anAnalysis().withStatus(runningStatus<AnalysisStatus>(ANALYSIS)).build(),
      job: aJob().complete(),
      pods: [aPod().terminated(0)],
      logs: { "pod-a": twoExperiments },
    },
    actions: [
      "mirror running",
      "readPodLog pod-a main",
      "saveResult {id} 2",
      "patchStatus {name} completed",
      "event Normal Completed: analysis completed: 2 experiment(s)",
      "mirror completed",
      "archive {id} pod-a",
    ],
    requeue: "retained",
    status: { phase: "completed", experiments: 2, exitCode: 0, completionTime: MAIN_FINISHED },
  },
  {
    name: "analyzer finished, the cache lags (pod only in the API server): the API server asked once for both the output and the archive",
    given: {
      resource: anAnalysis().withStatus(runningStatus<AnalysisStatus>(ANALYSIS)).build(),
      job: aJob().complete(),
      apiPods: [aPod().terminated(0)],
      logs: { "pod-a": twoExperiments },
    },
    actions: [
      "mirror running",
      "apiPods {label}",
      "readPodLog pod-a main",
      "saveResult {id} 2",
      "patchStatus {name} completed",
      "event Normal Completed: analysis completed: 2 experiment(s)",
      "mirror completed",
      "archive {id} pod-a",
    ],
    requeue: "retained",
    status: { phase: "completed", experiments: 2, podName: "pod-a" },
  },
  {
    name: "result is not valid JSON: failed InvalidResult, nothing saved",
    given: {
      resource: anAnalysis().withStatus(runningStatus<AnalysisStatus>(ANALYSIS)).build(),
      job: aJob().complete(),
      pods: [aPod().terminated(0)],
      logs: { "pod-a": analyzerLog({ document: "{not json" }) },
    },
    actions: [
      "mirror running",
      "readPodLog pod-a main",
      "patchStatus {name} failed",
      "event Warning InvalidResult: the analyzer's result is not valid JSON",
      "mirror failed",
      "archive {id} pod-a",
    ],
    requeue: "retained",
    status: { phase: "failed", error: "the analyzer's result is not valid JSON", exitCode: 0 },
  },
  {
    name: "analyzer exited 0 without writing a result: failed InvalidResult",
    given: {
      resource: anAnalysis().withStatus(runningStatus<AnalysisStatus>(ANALYSIS)).build(),
      job: aJob().complete(),
      pods: [aPod().terminated(0)],
      logs: { "pod-a": analyzerLog({}) },
    },
    actions: [
      "mirror running",
      "readPodLog pod-a main",
      "patchStatus {name} failed",
      "event Warning InvalidResult: the analyzer finished without writing a result",
      "mirror failed",
      "archive {id} pod-a",
    ],
    requeue: "retained",
  },
  {
    name: "pod log gone (readPodLog null): failed OutputLost",
    given: { resource: anAnalysis().withStatus(runningStatus<AnalysisStatus>(ANALYSIS)).build(), job: aJob().complete(), pods: [aPod().terminated(0)] },
    actions: [
      "mirror running",
      "readPodLog pod-a main",
      "patchStatus {name} failed",
      "event Warning OutputLost: the analyzer's output was lost with its pod before it could be read",
      "mirror failed",
      "archive {id} pod-a",
    ],
    requeue: "retained",
    status: { phase: "failed", error: "the analyzer's output was lost with its pod before it could be read" },
  },
  {
    name: "Job complete, pod gone everywhere: OutputLost, the API server asked once, logs complete",
    given: { resource: anAnalysis().withStatus(runningStatus<AnalysisStatus>(ANALYSIS)).build(), job: aJob().complete() },
    actions: [
      "mirror running",
      "apiPods {label}",
      "patchStatus {name} failed",
      "event Warning OutputLost: the analyzer's output was lost with its pod before it could be read",
      "mirror failed",
      "markLogsComplete {id}",
    ],
    requeue: "retained",
  },
  {
    name: "analyzer exited non-zero: its last stderr line is the error, nothing saved",
    given: {
      resource: anAnalysis().withStatus(runningStatus<AnalysisStatus>(ANALYSIS)).build(),
      job: aJob().failed(),
      pods: [aPod().terminated(2)],
      logs: { "pod-a": analyzerLog({ stderr: "error: the checkout is empty", exitCode: 2 }) },
    },
    actions: [
      "mirror running",
      "readPodLog pod-a main",
      "patchStatus {name} failed",
      "event Warning NonZeroExit: error: the checkout is empty",
      "mirror failed",
      "archive {id} pod-a",
    ],
    requeue: "retained",
    status: { phase: "failed", exitCode: 2, error: "error: the checkout is empty" },
  },
  {
    name: "checkout running (pod scheduled): running, with the run's Preprocessing as the reason",
    given: { resource: anAnalysis().withStatus(pendingStatus<AnalysisStatus>(ANALYSIS)).build(), job: aJob(), pods: [aPod().scheduled()] },
    actions: ["mirror pending", "patchStatus {name} running", "event Normal Preprocessing: analysis is running", "mirror running"],
    requeue: LIVE,
  },
];

describe("WorkloadReconciler: analyses", () => {
  it.each(analysisCases)("$name", (c) => check(ANALYSIS, analysisWorld, c));

  it("saves the validated result", async () => {
    const { reconciler, recorded } = analysisWorld({
      resource: anAnalysis().withStatus(runningStatus<AnalysisStatus>(ANALYSIS)).build(),
      job: aJob().complete(),
      pods: [aPod().terminated(0)],
      logs: { "pod-a": twoExperiments },
    });
    await reconciler.reconcile(ANALYSIS.name);
    expect(recorded.saved).toEqual([{ id: ANALYSIS.id, result: anAnalyzerResult(2) }]);
  });
});

/** A status as written before the Job started: without the timeline a steady pending run has. */
function withoutTimeline<S extends object>(status: S): S {
  const { timeline: _, ...rest } = status as S & { timeline?: unknown };
  return rest as S;
}
