import type { V1ContainerStatus, V1Job, V1Pod } from "@kubernetes/client-node";
import type { AnalyzerResult } from "@codeplane/analyzer";
import type { AnalysisSpec, AnalysisStatus } from "../../resources/analysis.ts";
import type { Condition, WorkloadStatus } from "../../resources/common.ts";
import type { RunSpec, RunStatus } from "../../resources/run.ts";
import { ANALYSIS_LABEL, RUN_LABEL } from "../../resources/labels.ts";
import { FrameWriter } from "@codeplane/frames";
import type { WorkloadResource } from "../workload.ts";

// Small builders for the reconciler's tests (JobSet style): a default that
// makes sense, and one method per fact a test cares about. Every time is
// fixed, so the statuses a test expects can be written down.

export const NAMESPACE = "codeplane";
export const NOW = new Date("2026-01-01T00:10:00.000Z");
/** When earlier reconciles wrote the conditions a given status carries. */
export const EARLIER = "2026-01-01T00:05:00.000Z";
export const CREATED = "2026-01-01T00:00:00.000Z";
export const JOB_STARTED = "2026-01-01T00:08:00.000Z";
export const MAIN_STARTED = "2026-01-01T00:09:00.000Z";
export const MAIN_FINISHED = "2026-01-01T00:09:50.000Z";

const ACCOUNT_ID = "0190b1c2-0000-7000-8000-000000000001";
const REPOSITORY_ID = "0190b1c2-0000-7000-8000-000000000002";

/** What a test needs to know about a workload kind to name and label its things. */
export interface KindFacts {
  readonly noun: "run" | "analysis";
  readonly id: string;
  /** The resource's name, also its Job's. */
  readonly name: string;
  readonly podLabel: string;
  readonly started: { reason: string; message: string };
  /** What else the kind's status says in a steady state: a run's timeline marks from its Job and pod. */
  readonly steady: { pending: object; running: object };
}

const RUN_ID = "0190b1c2-3d4e-7f00-8a1b-0000000000a1";
const ANALYSIS_ID = "0190b1c2-3d4e-7f00-8a1b-0000000000b2";

export const RUN: KindFacts = {
  noun: "run",
  id: RUN_ID,
  name: `run-${RUN_ID}`,
  podLabel: RUN_LABEL,
  started: { reason: "ContainerStarted", message: "the run's command started" },
  steady: {
    pending: { timeline: { admitted: JOB_STARTED } },
    running: { timeline: { admitted: JOB_STARTED, imageReady: MAIN_STARTED } },
  },
};

export const ANALYSIS: KindFacts = {
  noun: "analysis",
  id: ANALYSIS_ID,
  name: `analysis-${ANALYSIS_ID}`,
  podLabel: ANALYSIS_LABEL,
  started: { reason: "AnalyzerStarted", message: "the analyzer started" },
  steady: { pending: {}, running: {} },
};

export class ResourceBuilder<Spec, Status> {
  #r: WorkloadResource<Spec, Status>;

  constructor(kind: KindFacts, spec: Spec) {
    this.#r = {
      apiVersion: "codeplane.dev/v1alpha1",
      kind: kind.noun === "run" ? "Run" : "Analysis",
      metadata: { name: kind.name, namespace: NAMESPACE, uid: `uid-${kind.noun}`, generation: 1, creationTimestamp: new Date(CREATED) },
      spec,
    };
  }

  withStatus(status: Status | undefined): this {
    this.#r = { ...this.#r, status };
    return this;
  }

  cancelRequested(): this {
    this.#r = { ...this.#r, spec: { ...this.#r.spec, cancelRequested: true } };
    return this;
  }

  deleting(): this {
    this.#r = { ...this.#r, metadata: { ...this.#r.metadata, deletionTimestamp: new Date(NOW) } };
    return this;
  }

  /** Labelled with an installation (the API labels every resource it creates). */
  installation(id: string): this {
    this.#r = { ...this.#r, metadata: { ...this.#r.metadata, labels: { ...this.#r.metadata.labels, "codeplane.dev/installation": id } } };
    return this;
  }

  /** Fields changed by hand (kubectl edit), valid or not. */
  withSpec(changes: Record<string, unknown>): this {
    this.#r = { ...this.#r, spec: { ...this.#r.spec, ...changes } };
    return this;
  }

  generation(n: number): this {
    this.#r = { ...this.#r, metadata: { ...this.#r.metadata, generation: n } };
    return this;
  }

  build(): WorkloadResource<Spec, Status> {
    return structuredClone(this.#r);
  }
}

export const aRun = () =>
  new ResourceBuilder<RunSpec, RunStatus>(RUN, {
    runId: RUN.id,
    accountId: ACCOUNT_ID,
    repositoryId: REPOSITORY_ID,
    repositoryUrl: "https://example.com/r.git",
    commitHash: "a".repeat(40),
    command: ["python", "train.py"],
    computeType: "cpu-general",
    timeoutSeconds: 600,
  });

export const anAnalysis = () =>
  new ResourceBuilder<AnalysisSpec, AnalysisStatus>(ANALYSIS, {
    analysisId: ANALYSIS.id,
    accountId: ACCOUNT_ID,
    repositoryId: REPOSITORY_ID,
    repositoryUrl: "https://example.com/r.git",
    commitHash: "b".repeat(40),
    language: "en",
    timeoutSeconds: 600,
  });

export const condition = (
  type: "Started" | "Finished",
  status: "True" | "False",
  reason: string,
  message: string,
  lastTransitionTime = EARLIER,
): Condition => ({
  type,
  status,
  reason,
  message,
  observedGeneration: 1,
  lastTransitionTime,
});

/** The status a reconcile wrote while the Job was waiting for its pod. */
export const pendingStatus = <S extends WorkloadStatus = WorkloadStatus>(k: KindFacts): S =>
  ({
    phase: "pending",
    observedGeneration: 1,
    conditions: [condition("Started", "False", "Pending", `the ${k.noun} is pending`), condition("Finished", "False", "Pending", `the ${k.noun} is pending`)],
    jobName: k.name,
    ...k.steady.pending,
  }) as S;

/** The status a reconcile wrote once the main container of `pod` was running: a steady state. */
export const runningStatus = <S extends WorkloadStatus = WorkloadStatus>(k: KindFacts, pod = "pod-a"): S =>
  ({
    phase: "running",
    observedGeneration: 1,
    conditions: [condition("Started", "True", k.started.reason, k.started.message), condition("Finished", "False", "Running", `the ${k.noun} is running`)],
    jobName: k.name,
    podName: pod,
    startTime: MAIN_STARTED,
    ...k.steady.running,
  }) as S;

/** The status a reconcile wrote when the workload completed in `pod` with exit code 0. */
export const completedStatus = <S extends WorkloadStatus = WorkloadStatus>(k: KindFacts, pod = "pod-a"): S =>
  ({
    phase: "completed",
    observedGeneration: 1,
    conditions: [condition("Started", "True", k.started.reason, k.started.message), condition("Finished", "True", "Completed", `the ${k.noun} completed`)],
    jobName: k.name,
    podName: pod,
    exitCode: 0,
    startTime: MAIN_STARTED,
    completionTime: MAIN_FINISHED,
  }) as S;

/**
 * A completed workload's status as the reconciler leaves it once it has looked
 * at it again after the transition: the Finished condition's reason is then
 * the descriptors' "Finished" (see the observe functions' terminal branch).
 */
export class JobBuilder {
  #conditions: { type: string; status: string; reason?: string }[] = [];
  #failed = 0;
  #completionTime: Date | undefined;

  /** The Job controller says it succeeded. */
  complete(): this {
    this.#conditions.push({ type: "Complete", status: "True" });
    this.#completionTime = new Date(MAIN_FINISHED);
    return this;
  }

  /** The Job controller gave up (one attempt: backoffLimit 0). */
  failed(reason = "BackoffLimitExceeded"): this {
    this.#conditions.push({ type: "Failed", status: "True", reason });
    this.#failed = 1;
    return this;
  }

  /** The Job counted a failed pod but has no condition yet. */
  failedPods(n: number): this {
    this.#failed = n;
    return this;
  }

  build(k: KindFacts): V1Job {
    return {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: k.name, namespace: NAMESPACE, labels: { [k.podLabel]: k.id } },
      status: {
        startTime: new Date(JOB_STARTED),
        ...(this.#failed && { failed: this.#failed }),
        ...(this.#completionTime && { completionTime: this.#completionTime }),
        conditions: this.#conditions,
      },
    };
  }
}

export const aJob = () => new JobBuilder();

const mainStatus = (state: V1ContainerStatus["state"]): V1ContainerStatus => ({
  name: "main",
  image: "img",
  imageID: "",
  ready: false,
  restartCount: 0,
  state,
});

export class PodBuilder {
  readonly #name: string;
  #created = "2026-01-01T00:08:01.000Z";
  #phase = "Pending";
  #scheduled = false;
  #main: V1ContainerStatus["state"] | undefined;

  constructor(name: string) {
    this.#name = name;
  }

  createdAt(iso: string): this {
    this.#created = iso;
    return this;
  }

  scheduled(): this {
    this.#scheduled = true;
    return this;
  }

  running(startedAt = MAIN_STARTED): this {
    this.#scheduled = true;
    this.#phase = "Running";
    this.#main = { running: { startedAt: new Date(startedAt) } };
    return this;
  }

  /** The main container's image cannot be pulled. */
  pullFailing(): this {
    this.#scheduled = true;
    this.#main = { waiting: { reason: "ErrImagePull", message: "not found" } };
    return this;
  }

  terminated(exitCode: number, reason = exitCode === 0 ? "Completed" : "Error"): this {
    this.#scheduled = true;
    this.#phase = exitCode === 0 ? "Succeeded" : "Failed";
    this.#main = { terminated: { exitCode, reason, startedAt: new Date(MAIN_STARTED), finishedAt: new Date(MAIN_FINISHED) } };
    return this;
  }

  build(k: KindFacts): V1Pod {
    return {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: this.#name, namespace: NAMESPACE, labels: { [k.podLabel]: k.id }, creationTimestamp: new Date(this.#created) },
      status: {
        phase: this.#phase,
        conditions: this.#scheduled ? [{ type: "PodScheduled", status: "True" }] : [],
        containerStatuses: this.#main ? [mainStatus(this.#main)] : [],
      },
    };
  }
}

export const aPod = (name = "pod-a") => new PodBuilder(name);

/** A valid analyzer result with `experiments` experiments. */
export function anAnalyzerResult(experiments: number): AnalyzerResult {
  return {
    version: 1,
    repo_summary: {
      language: "en",
      text: "A small repository.",
      title: null,
      description: null,
      languages: [],
      file_count: 1,
      total_bytes: 10,
      license: null,
      manifests: [],
      frameworks: [],
      truncated: false,
      skipped: { binary: 0, too_large: 0, symlinks: 0, unparsable: 0 },
    },
    experiments: Array.from({ length: experiments }, (_, i) => ({
      id: `python:train${i}.py`,
      title: `train${i}`,
      description: null,
      entry_point: `python train${i}.py`,
      command: ["python", `train${i}.py`],
      language: "python",
      kind: "python-script" as const,
      path: `train${i}.py`,
      inputs: [],
      outputs: [],
      parameters: [],
    })),
    primary_ids: [],
    env_vars: [],
    stats: { files_scanned: 1, files_parsed: 1, duration_ms: 5 },
  };
}

/** What the analyzer writes to its log: progress, optionally a result document, its exit. */
export function analyzerLog(opts: { document?: string; stderr?: string; exitCode?: number }): string {
  let text = "";
  const w = new FrameWriter((chunk) => (text += chunk));
  w.line("stdout", "scanning 1 file");
  if (opts.stderr) w.line("stderr", opts.stderr);
  if (opts.document !== undefined) w.result(opts.document, 64);
  w.exit(opts.exitCode ?? 0);
  return text;
}
