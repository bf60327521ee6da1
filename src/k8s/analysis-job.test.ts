import { describe, expect, it } from "vitest";
import { analyzerBudgetSeconds, analyzerThreads, buildAnalysisJob, cpuCount } from "./analysis-job.ts";
import { DEFAULT_COMPUTE_TYPES } from "../resources/compute-types.ts";
import type { AnalysisSpec } from "../resources/analysis.ts";

const spec: AnalysisSpec = {
  analysisId: "0190b1c2-3d4e-7f00-8a1b-2c3d4e5f6a7b",
  accountId: "0190b1c2-0000-7000-8000-000000000001",
  repositoryId: "0190b1c2-0000-7000-8000-000000000002",
  repositoryUrl: "https://example.com/org/repo.git",
  commitHash: "b".repeat(40),
  language: "ja",
  timeoutSeconds: 900,
};

describe("buildAnalysisJob", () => {
  const job = buildAnalysisJob({
    resource: { metadata: { name: `analysis-${spec.analysisId}`, namespace: "codeplane", uid: "uid-9" }, spec },
    images: { codeplane: "registry.example/codeplane:1.2.3", pullPolicy: "IfNotPresent" },
    compute: DEFAULT_COMPUTE_TYPES["cpu-general"]!,
    ttlSecondsAfterFinished: 600,
    checkout: {
      gitUrl: `http://10.0.0.5:8081/git/${spec.repositoryId}.git`,
      secretName: `analysis-${spec.analysisId}`,
      egress: "restricted",
      preprocessEnv: { PIP_INDEX_URL: "http://mirror/simple" },
    },
  });
  const pod = job.spec!.template.spec!;
  const all = [...pod.initContainers!, ...pod.containers];

  it("is named after the analysis and owned by it", () => {
    expect(job.metadata!.name).toBe(`analysis-${spec.analysisId}`);
    expect(job.metadata!.ownerReferences).toEqual([
      { apiVersion: "codeplane.dev/v1alpha1", kind: "Analysis", name: `analysis-${spec.analysisId}`, uid: "uid-9", controller: true, blockOwnerDeletion: true },
    ]);
    expect(job.metadata!.labels).toMatchObject({ "app.kubernetes.io/component": "analysis", "codeplane.dev/analysis": spec.analysisId });
    expect(job.spec!.template.metadata!.labels).toEqual(job.metadata!.labels);
  });

  it("runs only codeplane's own image, with no secrets, token or repository-provided code", () => {
    expect(all.map((c) => c.image)).toEqual(["registry.example/codeplane:1.2.3", "registry.example/codeplane:1.2.3"]);
    expect(all.every((c) => !c.envFrom?.length)).toBe(true);
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001 });
    for (const c of all)
      expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } });
    // The checkout installs nothing (no pip, no npm): analysing must not run the repository's code.
    expect(pod.initContainers![0]!.command!.join(" ")).not.toMatch(/pip|npm/);
    expect(JSON.stringify(pod)).not.toContain("PIP_INDEX_URL");
  });

  it("checks out from codeplane's git endpoint with the token in the checkout container only", () => {
    expect(JSON.stringify(pod)).not.toContain(spec.repositoryUrl);
    const holders = all.filter((c) => JSON.stringify(c).includes("codeplane-checkout-token")).map((c) => c.name);
    expect(holders).toEqual(["checkout"]);
    expect(pod.initContainers![0]!.env).toContainEqual({ name: "CODEPLANE_GIT_URL", value: `http://10.0.0.5:8081/git/${spec.repositoryId}.git` });
  });

  it("runs the analyzer with framed output, the requested language and a budget inside the deadline", () => {
    expect(pod.containers[0]!.command).toEqual([
      "node",
      "/app/bin/codeplane.mjs",
      "analyze",
      "/workspace/src",
      "--frames",
      "--language",
      "ja",
      "--time-budget-seconds",
      String(analyzerBudgetSeconds(900)),
      "--threads",
      "1",
    ]);
    expect(job.spec!.activeDeadlineSeconds).toBe(900);
    expect(job.spec!.backoffLimit).toBe(0);
  });

  it.each([
    [30, 10],
    [60, 18],
    [900, 690],
    [3600, 2850],
  ])("a %ss deadline leaves the analyzer %ss", (timeout, budget) => {
    expect(analyzerBudgetSeconds(timeout)).toBe(budget);
    expect(budget).toBeLessThan(timeout);
  });
});

describe("analyzer threads", () => {
  it.each<[string | undefined, number | null, 1 | 2]>([
    ["1", 1, 1],
    ["500m", 0.5, 1],
    ["1500m", 1.5, 1],
    ["2", 2, 2],
    ["4", 4, 2],
    ["2.5", 2.5, 2],
    [undefined, null, 1],
    ["lots", null, 1],
  ])("a CPU limit of %s is %s CPUs: %i thread(s)", (limit, cpus, threads) => {
    expect(cpuCount(limit)).toBe(cpus);
    const preset = { ...DEFAULT_COMPUTE_TYPES["cpu-general"]!, limits: { ...(limit !== undefined && { cpu: limit }), memory: "1Gi" } };
    expect(analyzerThreads(preset)).toBe(threads);
  });
});
