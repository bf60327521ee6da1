import type { V1Job, V1Pod } from "@kubernetes/client-node";
import { z } from "zod";
import { analyzerResultSchema, type AnalyzerResult } from "@codeplane/analyzer";
import type { AnalysisPhase, AnalysisSpec, AnalysisStatus } from "../resources/analysis.ts";
import { observeRun, type RunObservation } from "./run-observation.ts";
import type { WorkloadObservation } from "./workload.ts";

// Pure: what the cluster says about an analysis (its Job and pod) and what
// the analyzer wrote to its log, turned into the analysis's phase and error.
// The Job side is the run's (same Job shape, same failure modes); on top of
// it, "completed" needs a valid result.

/** What the controller read back from the analyzer's log once it had finished. */
export interface AnalyzerOutput {
  /** The result document, null when the analyzer wrote none (or not all of it). */
  document: string | null;
  /** The last stderr line, which says why when the analyzer failed. */
  lastError: string | null;
}

export interface AnalysisObservation extends WorkloadObservation {
  phase: AnalysisPhase;
  /** The analyzer has finished: read its output and observe again with it. */
  needsOutput: boolean;
  result?: AnalyzerResult;
}

export type ResultCheck = { ok: true; result: AnalyzerResult } | { ok: false; error: string };

/** The analyzer ran in a pod that read someone else's repository: its output is checked like any untrusted input. */
export function checkAnalyzerResult(document: string | null): ResultCheck {
  if (document === null) return { ok: false, error: "the analyzer finished without writing a result" };
  let json: unknown;
  try {
    json = JSON.parse(document);
  } catch {
    return { ok: false, error: "the analyzer's result is not valid JSON" };
  }
  const parsed = analyzerResultSchema.safeParse(json);
  if (!parsed.success) return { ok: false, error: `the analyzer's result is invalid: ${z.prettifyError(parsed.error).slice(0, 1000)}` };
  return { ok: true, result: parsed.data };
}

type Base = Omit<AnalysisObservation, "phase" | "error">;

/** A finished analysis never changes again: an old or reordered event can't move it back. */
function stillFinished(previous: AnalysisStatus | undefined): AnalysisObservation | undefined {
  const prev = previous?.phase;
  if (prev !== "completed" && prev !== "failed" && prev !== "cancelled") return undefined;
  return {
    phase: prev,
    reason: "Finished",
    error: previous?.error ?? null,
    exitCode: previous?.exitCode ?? null,
    startTime: previous?.startTime,
    completionTime: previous?.completionTime,
    stopJob: false,
    needsOutput: false,
  };
}

/** Why a failed analysis failed, in the analyzer's words where it said any. */
function failure(r: RunObservation, out: AnalyzerOutput | null): string | null {
  if (r.reason === "NonZeroExit") return out?.lastError ?? `the analyzer exited with code ${r.exitCode}`;
  if (r.reason === "PreprocessingFailed") return (r.error ?? "").replace(/^preprocessing failed \(checkout\)/, "checkout failed");
  if (r.reason === "OOMKilled") return "the analyzer ran out of memory (OOMKilled): raise CODEPLANE_ANALYSIS_COMPUTE_TYPE's memory limit";
  return r.error;
}

/** The run's phase as the analysis's, once the analyzer's output (if it finished) has been read. */
function fromRunPhase(r: RunObservation, base: Base, out: AnalyzerOutput | null): AnalysisObservation {
  switch (r.phase) {
    case "pending":
      return { ...base, phase: "pending", error: null };
    case "preprocessing":
    case "running":
      return { ...base, phase: "running", error: null };
    case "cancelled":
      return { ...base, phase: "cancelled", error: r.error };
    case "completed": {
      const check = checkAnalyzerResult(out?.document ?? null);
      if (!check.ok) return { ...base, phase: "failed", reason: "InvalidResult", error: check.error };
      return { ...base, phase: "completed", error: null, result: check.result };
    }
    case "failed":
      return { ...base, phase: "failed", error: failure(r, out) };
  }
}

export function observeAnalysis(
  spec: AnalysisSpec,
  previous: AnalysisStatus | undefined,
  job: V1Job | null,
  pod: V1Pod | null,
  now: Date,
  output: AnalyzerOutput | "lost" | null,
): AnalysisObservation {
  const finished = stillFinished(previous);
  if (finished) return finished;
  const r = observeRun(spec, previous?.startTime ? { startTime: previous.startTime } : undefined, job, pod, now);
  const base: Base = {
    reason: r.reason,
    exitCode: r.exitCode,
    startTime: r.startTime,
    completionTime: r.completionTime,
    stopJob: r.stopJob,
    needsOutput: false,
  };
  const analyzerFinished = r.phase === "completed" || r.reason === "NonZeroExit";
  if (analyzerFinished && output === null) return { ...base, phase: "running", error: null, completionTime: undefined, needsOutput: true };
  if (analyzerFinished && output === "lost") {
    return { ...base, phase: "failed", reason: "OutputLost", error: "the analyzer's output was lost with its pod before it could be read" };
  }
  // Undecided until the Job says why its pod is gone (run-observation.ts): the analysis stays where it was.
  if (r.reason === "AwaitingJobCondition") return { ...base, phase: previous?.phase ?? "pending", error: null };
  return fromRunPhase(r, base, output === "lost" ? null : output);
}
