import { Histogram, type Registry } from "prom-client";
import type { RunTimelineMarks } from "../resources/run.ts";

// The start-up timeline in Prometheus (design.md, Environments; docs/operators/metrics.md):
// when a run finishes, the times its status recorded become observations of
// histograms: how long it queued, each start-up step, its pod's start (from
// admission to the command's start) and how long its command ran, by status
// and compute type. Observed once, by the controller's leader, when the run's
// terminal status is written (the reconciler's `finished` hook), so a run is
// counted once whatever the number of replicas. The durations are pure
// (runDurations, table-tested); the compute type label is one of the
// operator's compute types or "other", so its cardinality is bounded by the
// configuration.

/** A start-up step: from the mark before it to its own. */
export const STARTUP_PHASES = ["scheduling", "image", "checkout", "environment", "command_start"] as const;
export type StartupPhase = (typeof STARTUP_PHASES)[number];

/** What a finished run's status says, as far as its metrics go. */
export interface FinishedRun {
  createdAt: string | undefined;
  computeType: string | undefined;
  phase: string;
  timeline?: RunTimelineMarks | undefined;
  startTime?: string | undefined;
  completionTime?: string | undefined;
}

export interface RunDurations {
  /** Created → admitted (its Job started); absent: it was never admitted (e.g. cancelled while queued). */
  queueWait?: number;
  /** Each start-up step that happened, in seconds. */
  phases: Partial<Record<StartupPhase, number>>;
  /** Admitted → the command started: the pod's start (scheduling, images, checkout, environment). */
  podStart?: number;
  /** The command started → the run ended; absent: the command never started. */
  duration?: number;
}

const ms = (iso: string | undefined) => (iso ? Date.parse(iso) : NaN);
/** Seconds from a to b, when both are known and b is not before a (container times have whole seconds). */
function between(a: string | undefined, b: string | undefined): number | undefined {
  const d = (ms(b) - ms(a)) / 1000;
  return Number.isFinite(d) && d >= 0 ? d : undefined;
}

/** The durations a finished run's status records; a step that did not happen (no environment, say) is left out. */
export function runDurations(r: FinishedRun): RunDurations {
  const t = r.timeline ?? {};
  const out: RunDurations = { phases: {} };
  const set = <K extends keyof RunDurations>(key: K, v: RunDurations[K] | undefined) => {
    if (v !== undefined) out[key] = v;
  };
  // A warm pool's run claimed a pod already scheduled and checked out: only its queue wait and command start count.
  set("queueWait", between(r.createdAt, t.admitted));
  set("podStart", between(t.admitted, r.startTime));
  set("duration", between(r.startTime, r.completionTime));
  if (!t.warm) {
    const steps: [StartupPhase, string | undefined, string | undefined][] = [
      ["scheduling", t.admitted, t.scheduled],
      ["image", t.scheduled, t.imageReady],
      ["checkout", t.imageReady, t.checkedOut],
      ["environment", t.checkedOut, t.environmentReady],
      ["command_start", t.environmentReady ?? t.checkedOut, r.startTime],
    ];
    for (const [phase, a, b] of steps) {
      const d = between(a, b);
      if (d !== undefined) out.phases[phase] = d;
    }
  } else {
    const d = between(t.admitted, r.startTime);
    if (d !== undefined) out.phases.command_start = d;
  }
  return out;
}

export interface RunMetrics {
  /** A run's terminal status was written. */
  finished(run: FinishedRun): void;
}

const BUCKETS = [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600];

/** The histograms, on the process's registry; `computeTypes`: the operator's (any other is labelled "other"). */
export function runMetrics(registry: Registry, computeTypes: readonly string[]): RunMetrics {
  const known = new Set(computeTypes);
  const typeOf = (t: string | undefined) => (t && known.has(t) ? t : "other");
  const queueWait = new Histogram({
    name: "codeplane_run_queue_wait_seconds",
    help: "Finished runs: from creation to admission (the Job started), by compute type.",
    labelNames: ["compute_type"],
    buckets: BUCKETS,
    registers: [registry],
  });
  const phase = new Histogram({
    name: "codeplane_run_startup_phase_seconds",
    help: "Finished runs: each start-up step (scheduling, image, checkout, environment, command_start), by compute type.",
    labelNames: ["phase", "compute_type"],
    buckets: BUCKETS,
    registers: [registry],
  });
  const podStart = new Histogram({
    name: "codeplane_run_pod_start_seconds",
    help: "Finished runs: from admission to the command's start (the pod's scheduling, images, checkout and environment), by compute type.",
    labelNames: ["compute_type"],
    buckets: BUCKETS,
    registers: [registry],
  });
  const duration = new Histogram({
    name: "codeplane_run_duration_seconds",
    help: "Finished runs whose command started: from the command's start to the run's end, by status and compute type.",
    labelNames: ["status", "compute_type"],
    buckets: [1, 5, 10, 30, 60, 300, 600, 1800, 3600, 4 * 3600, 12 * 3600, 24 * 3600],
    registers: [registry],
  });
  return {
    finished(run) {
      const compute_type = typeOf(run.computeType);
      const d = runDurations(run);
      if (d.queueWait !== undefined) queueWait.observe({ compute_type }, d.queueWait);
      for (const [p, v] of Object.entries(d.phases)) phase.observe({ phase: p, compute_type }, v);
      if (d.podStart !== undefined) podStart.observe({ compute_type }, d.podStart);
      if (d.duration !== undefined) duration.observe({ status: run.phase, compute_type }, d.duration);
    },
  };
}
