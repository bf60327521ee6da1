import type { V1ContainerStatus, V1Job, V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import type { AnalyzerResult } from "@codeplane/analyzer";
import { FrameWriter } from "@codeplane/frames";
import type { AnalysisSpec, AnalysisStatus } from "../resources/analysis.ts";
import { checkAnalyzerResult, observeAnalysis, type AnalyzerOutput } from "./analysis-observation.ts";
import { parseAnalyzerOutput } from "./analyzer-output.ts";

const spec: AnalysisSpec = {
  analysisId: "0190b1c2-3d4e-7f00-8a1b-2c3d4e5f6a7b",
  accountId: "0190b1c2-0000-7000-8000-000000000001",
  repositoryId: "0190b1c2-0000-7000-8000-000000000002",
  repositoryUrl: "https://example.com/r.git",
  commitHash: "b".repeat(40),
  language: "en",
  timeoutSeconds: 600,
};
const now = new Date("2026-01-01T00:10:00Z");
const T0 = new Date("2026-01-01T00:09:51Z");
const T1 = new Date("2026-01-01T00:09:55Z");

const job = (...types: string[]): V1Job => ({
  status: {
    startTime: new Date("2026-01-01T00:09:50Z"),
    conditions: types.map((type) => ({ type, status: "True", ...(type === "Failed" && { reason: "BackoffLimitExceeded" }) })),
  },
});
const deadline: V1Job = {
  status: { startTime: new Date("2026-01-01T00:00:00Z"), conditions: [{ type: "Failed", status: "True", reason: "DeadlineExceeded" }] as never },
};
const cs = (name: string, state: V1ContainerStatus["state"]) =>
  ({ name, image: "codeplane:dev", imageID: "", ready: false, restartCount: 0, state }) as V1ContainerStatus;
const pod = (main?: V1ContainerStatus["state"], init?: V1ContainerStatus[]): V1Pod => ({
  status: {
    phase: "Running",
    initContainerStatuses: init ?? [],
    containerStatuses: main ? [cs("main", main)] : [],
    conditions: [{ type: "PodScheduled", status: "True" }],
  },
});
const exited = (exitCode: number) => ({ terminated: { exitCode, reason: exitCode ? "Error" : "Completed", startedAt: T0, finishedAt: T1 } });

const minimal: AnalyzerResult = {
  version: 1,
  repo_summary: {
    language: "en",
    text: "The repository is empty.",
    title: null,
    description: null,
    languages: [],
    file_count: 0,
    total_bytes: 0,
    license: null,
    manifests: [],
    frameworks: [],
    truncated: false,
    skipped: { binary: 0, too_large: 0, symlinks: 0, unparsable: 0 },
  },
  experiments: [],
  primary_ids: [],
  env_vars: [],
  stats: { files_scanned: 0, files_parsed: 0, duration_ms: 1 },
};
const good: AnalyzerOutput = { document: JSON.stringify(minimal), lastError: null };

describe("observeAnalysis", () => {
  it.each<[string, V1Job | null, V1Pod | null, AnalyzerOutput | "lost" | null, Partial<ReturnType<typeof observeAnalysis>>]>([
    ["no Job yet", null, null, null, { phase: "pending", needsOutput: false }],
    ["checking out", job(), pod(undefined, [cs("checkout", { running: { startedAt: T0 } })]), null, { phase: "running" }],
    ["analysing", job(), pod({ running: { startedAt: T0 } }), null, { phase: "running", startTime: T0.toISOString() }],
    ["finished, output not read yet", job("Complete"), pod(exited(0)), null, { phase: "running", needsOutput: true }],
    ["finished with a valid result", job("Complete"), pod(exited(0)), good, { phase: "completed", error: null, reason: "Completed", exitCode: 0 }],
    [
      "finished without a result",
      job("Complete"),
      pod(exited(0)),
      { document: null, lastError: null },
      { phase: "failed", reason: "InvalidResult", error: "the analyzer finished without writing a result" },
    ],
    [
      "finished with broken JSON",
      job("Complete"),
      pod(exited(0)),
      { document: "{", lastError: null },
      { phase: "failed", error: "the analyzer's result is not valid JSON" },
    ],
    ["finished, pod gone before the read", job("Complete"), null, "lost", { phase: "failed", reason: "OutputLost" }],
    [
      "the analyzer failed",
      job("Failed"),
      pod(exited(1)),
      { document: null, lastError: "analysis failed: EACCES" },
      { phase: "failed", error: "analysis failed: EACCES", exitCode: 1 },
    ],
    [
      "the analyzer failed silently",
      job("Failed"),
      pod(exited(2)),
      { document: null, lastError: null },
      { phase: "failed", error: "the analyzer exited with code 2" },
    ],
    ["the deadline passed", deadline, pod({ running: { startedAt: T0 } }), null, { phase: "failed", reason: "TimedOut", error: "timed out after 600s" }],
    [
      "the checkout failed",
      job("Failed"),
      pod(undefined, [cs("checkout", { terminated: { exitCode: 128, message: "fatal: repository not found", startedAt: T0, finishedAt: T1 } })]),
      null,
      { phase: "failed", reason: "PreprocessingFailed", error: "checkout failed: fatal: repository not found" },
    ],
  ])("%s", (_name, j, p, output, expected) => {
    expect(observeAnalysis(spec, undefined, j, p, now, output)).toMatchObject(expected);
  });

  it("carries the validated result on completion", () => {
    expect(observeAnalysis(spec, undefined, job("Complete"), pod(exited(0)), now, good).result).toEqual(minimal);
  });

  it("cancels and stops the Job when asked", () => {
    expect(observeAnalysis({ ...spec, cancelRequested: true }, undefined, job(), pod({ running: { startedAt: T0 } }), now, null)).toMatchObject({
      phase: "cancelled",
      stopJob: true,
    });
  });

  it("stays where it was while the Job has not said why its pod is gone (a deadline's pod goes before its condition)", () => {
    const gone: V1Job = { status: { startTime: new Date("2026-01-01T00:09:50Z"), failed: 1 } };
    const running: AnalysisStatus = { phase: "running", startTime: T0.toISOString() };
    expect(observeAnalysis(spec, running, gone, null, now, null)).toMatchObject({ phase: "running", reason: "AwaitingJobCondition", error: null });
    expect(observeAnalysis(spec, running, deadline, null, now, null)).toMatchObject({ phase: "failed", reason: "TimedOut" });
  });

  it("never moves a finished analysis", () => {
    const previous: AnalysisStatus = { phase: "completed", startTime: T0.toISOString(), completionTime: T1.toISOString() };
    expect(observeAnalysis(spec, previous, null, null, now, null)).toMatchObject({ phase: "completed", needsOutput: false });
  });
});

describe("checkAnalyzerResult", () => {
  it("refuses a result that breaks the schema, saying where", () => {
    const bad = { ...minimal, experiments: [{ id: "" }] };
    const check = checkAnalyzerResult(JSON.stringify(bad));
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.error).toMatch(/^the analyzer's result is invalid: .*experiments/s);
  });
});

describe("parseAnalyzerOutput", () => {
  it("takes the result pieces and the last stderr line out of a framed log with foreign lines", () => {
    let log = "some banner the image printed\n";
    const w = new FrameWriter((c) => (log += c));
    w.line("stdout", "listed 3 files");
    w.line("stderr", "warning: skipped a.bin");
    w.result(JSON.stringify(minimal), 100);
    w.exit(0);
    expect(parseAnalyzerOutput(log)).toEqual({ document: JSON.stringify(minimal), lastError: "warning: skipped a.bin" });
  });

  it("has no document when the log was cut inside the result", () => {
    let log = "";
    const w = new FrameWriter((c) => (log += c));
    w.result("x".repeat(1000), 100);
    expect(parseAnalyzerOutput(log.split("\n").slice(0, 5).join("\n")).document).toBeNull();
  });
});
