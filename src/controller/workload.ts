import type { V1Job, V1Pod } from "@kubernetes/client-node";
import type { LogLine } from "@codeplane/frames";
import type { z } from "zod";
import { Unreconcilable } from "../domain/workloads/unreconcilable.ts";
import type { ClusterActions } from "../k8s/cluster-actions.ts";
import type { ComputePreset, ComputeTypes } from "../resources/compute-types.ts";
import type { WorkloadSpec, WorkloadStatus } from "../resources/common.ts";
import type { WorkloadKind } from "../resources/lifecycle.ts";
import type { CustomResource } from "../k8s/custom-resources.ts";

// A workload is something codeplane runs as a Kubernetes Job on behalf of a
// user: a run, an analysis, and whatever comes next. One reconciler
// (workload-reconciler.ts) drives every kind through the same lifecycle; what
// differs between kinds is said here, in a descriptor, so a new kind is a new
// descriptor and not a copy of the loop.

export type WorkloadResource<Spec, Status> = CustomResource<Spec, Status>;

/** What a descriptor's observe decided: the pure part of a reconcile. */
export interface WorkloadObservation {
  phase: string;
  /** Machine-readable cause, used as the condition reason and the Event reason. */
  reason: string;
  error: string | null;
  exitCode: number | null;
  startTime?: string | undefined;
  completionTime?: string | undefined;
  /** The Job should be deleted now (a failure Kubernetes would otherwise retry forever, or a cancel). */
  stopJob: boolean;
  /** Look again this soon even without an event (a warm run's start is reported to codeplane, not seen on its pod). */
  requeueAfterMs?: number;
}

export interface ObserveInput<Spec, Status> {
  resource: WorkloadResource<Spec, Status>;
  /** From the informer cache: null when there is none (yet). */
  job: V1Job | null;
  /** The newest pod of the workload in the informer cache. */
  pod: V1Pod | null;
  now: Date;
  /** The pod, asked of the API server when the cache has none (at most once per reconcile). */
  podNow: () => Promise<V1Pod | null>;
  cluster: ClusterActions;
}

/**
 * The Job cannot be made yet: what it needs is on its way (a run's
 * environment being built). The workload shows `phase` with `reason` and is
 * looked at again after retryAfterMs.
 */
export interface NotReady {
  readonly notReady: true;
  phase: string;
  reason: string;
  retryAfterMs: number;
}

/** Another attempt of a workload: the status that records it (before its Job exists) and the Event that says so. */
export interface RetryPlan<Status> {
  status: Status;
  /** The Event's reason and note on the resource. */
  reason: string;
  note: string;
  /** The attempt's number, and its line of the log saying why it began. */
  attempt: number;
  marker: LogLine;
}

export const notReady = (phase: string, reason: string, retryAfterMs: number): NotReady => ({ notReady: true, phase, reason, retryAfterMs });
export const isNotReady = (v: V1Job | NotReady | Adopted): v is NotReady => "notReady" in v;

/** The workload needs no new Job: it was given one that exists (a warm pool's pod's, issue 33). */
export interface Adopted {
  readonly adopted: true;
  jobName: string;
}

export const adopted = (jobName: string): Adopted => ({ adopted: true, jobName });
export const isAdopted = (v: V1Job | NotReady | Adopted): v is Adopted => "adopted" in v;

export interface Workload<
  Spec extends WorkloadSpec,
  Status extends WorkloadStatus,
  Obs extends WorkloadObservation = WorkloadObservation,
> extends WorkloadKind {
  /** The spec's schema (the CRD's): a resource written by hand or by an older version is checked before anything acts on it. */
  readonly specSchema: z.ZodType<Spec>;
  /** Started condition's reason and message once the main container has started. */
  readonly started: { reason: string; message: string };
  idOf(spec: Spec): string;
  /**
   * The Job to create, with whatever it needs created first (the run's
   * Secret). Called only when the cache has no Job, so expensive steps
   * (decrypting variables) happen only then.
   */
  job(resource: WorkloadResource<Spec, Status>, cluster: ClusterActions): Promise<V1Job | NotReady | Adopted>;
  /** Decide what the workload's state is. Pure for runs; analyses read the finished analyzer's output. */
  observe(input: ObserveInput<Spec, Status>): Promise<Obs>;
  /** Act on what observe found before the status says so (an analysis stores its result first). */
  persist?(resource: WorkloadResource<Spec, Status>, obs: Obs): Promise<void>;
  /**
   * Removes what the workload needed only to start (the run's Secret of
   * environment values), once its main container has started or it has
   * finished, so secrets do not sit in etcd.
   */
  release?(resource: WorkloadResource<Spec, Status>, cluster: ClusterActions): Promise<void>;
  /** Status fields only this kind has; `job`: whether the workload's current Job exists (or is being created by this reconcile). */
  extraStatus?(obs: Obs, previous: Status | undefined, ctx: { resource: WorkloadResource<Spec, Status>; job: boolean; now: Date }): Partial<Status>;
  /** The name of the workload's current Job (a retry's, or one it adopted); absent: the resource's own name (one Job per workload). */
  jobName?(resource: WorkloadResource<Spec, Status>): string;
  /**
   * Pure: whether a failure observe found starts another attempt (a run's retry policy,
   * run-retry.ts). null: it does not, and the observation stands.
   */
  retry?(resource: WorkloadResource<Spec, Status>, obs: Obs, now: Date): RetryPlan<Status> | null;
  /**
   * Prepares the next attempt before its status is written (a run's marker line, the lost
   * attempt's outputs and metrics dropped); idempotent, as a restart may do it again.
   */
  beginAttempt?(resource: WorkloadResource<Spec, Status>, plan: RetryPlan<Status>): Promise<void>;
  /** A later attempt's command started (`release` is due again: the retry made what it needed anew). */
  attemptStarted?(previous: Status | undefined, next: Status): boolean;
  /** The workload may go on in another pod after the current one: its logs are not complete when that pod's end. */
  mayContinue?(resource: WorkloadResource<Spec, Status>): boolean;
  /** Its terminal status was just written (once per workload): the run's timeline histograms (run-metrics.ts). */
  finished?(resource: WorkloadResource<Spec, Status>, status: Status): void;
  /** The Event's note when the phase changes. */
  eventNote(status: Status): string;
}

/** The compute preset a workload asks for; one this installation does not define can never be run. */
export function presetFor(types: ComputeTypes, name: string): ComputePreset {
  // Own keys only: "constructor" or "toString" must not pass for a preset.
  const preset = Object.hasOwn(types, name) ? types[name] : undefined;
  if (!preset) throw new Unreconcilable("UnknownComputeType", `compute type '${name}' is not defined here (defined: ${Object.keys(types).join(", ")})`);
  return preset;
}
