import type { V1Job } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import type { V1ContainerStatus, V1Pod } from "@kubernetes/client-node";
import type { EnvironmentDefinitionJson } from "../db/schema.ts";
import type { RunEnvironmentSpec } from "../resources/run.ts";
import { decideBuild, describeReservation, failureMessage, podFailure, tail, type BuildDecision, type EnvironmentDescription } from "./environment-builds.ts";

const NOW = new Date("2026-11-26T12:00:00Z");
const job = (conditions: { type: string; reason?: string }[] = []): V1Job => ({ status: { conditions: conditions.map((c) => ({ ...c, status: "True" })) } });
const row = (over: Partial<{ status: "building" | "ready" | "failed"; started_at: Date | null; build_deadline: Date | null; created_at: Date }> = {}) => ({
  status: "building" as const,
  started_at: null,
  build_deadline: null,
  created_at: new Date(NOW.getTime() - 120_000),
  ...over,
});

describe("decideBuild", () => {
  const cases: [string, ReturnType<typeof row>, V1Job | null, BuildDecision][] = [
    ["ready: restore it", row({ status: "ready" }), null, { do: "ready" }],
    ["failed stays failed (no rebuild per run)", row({ status: "failed" }), null, { do: "failed" }],
    ["never started: start", row(), null, { do: "start" }],
    [
      "claimed a moment ago, its Job not made yet: wait (another waiter is making it)",
      row({ started_at: new Date(NOW.getTime() - 1000) }),
      null,
      { do: "wait" },
    ],
    [
      "started, Job gone before its deadline (deleted by hand): start again",
      row({ started_at: new Date(NOW.getTime() - 60_000), build_deadline: new Date(NOW.getTime() + 600_000) }),
      null,
      { do: "start" },
    ],
    [
      "started, Job gone well after its deadline: failed, its log gone",
      row({ started_at: new Date(NOW.getTime() - 7200_000), build_deadline: new Date(NOW.getTime() - 3600_000) }),
      null,
      { do: "fail", why: "the build's Job ended without storing the environment, and its log is gone" },
    ],
    [
      "its Job keeps vanishing or cannot be made, for longer than two budgets: failed, not retried forever",
      row({ created_at: new Date(NOW.getTime() - 4000_000), started_at: new Date(NOW.getTime() - 120_000), build_deadline: new Date(NOW.getTime() + 600_000) }),
      null,
      { do: "fail", why: "the build's Job could not be kept running for 3600s (it was lost or could not be created)" },
    ],
    ["running: wait", row({ started_at: NOW }), job(), { do: "wait" }],
    ["Job failed: fail with its log", row({ started_at: NOW }), job([{ type: "Failed", reason: "BackoffLimitExceeded" }]), { do: "fail", why: "" }],
    [
      "Job past its deadline: fail naming the budget",
      row({ started_at: NOW }),
      job([{ type: "Failed", reason: "DeadlineExceeded" }]),
      { do: "fail", why: "the build took longer than 1800s (CODEPLANE_ENVIRONMENT_BUILD_TIMEOUT_SECONDS)" },
    ],
    [
      "Job complete but nothing stored: fail",
      row({ started_at: NOW }),
      job([{ type: "Complete" }]),
      { do: "fail", why: "the build finished without storing the environment" },
    ],
  ];
  it.each(cases)("%s", (_name, r, j, want) => {
    expect(decideBuild(r, j, NOW, 1800)).toEqual(want);
  });
});

describe("failureMessage", () => {
  const pipLog = [
    "==> [1/2] python venv",
    "==> [2/2] pip install -r requirements.txt",
    "Looking in indexes: http://10.244.0.1:3141/simple/",
    "Collecting click==8.1.7",
    "ERROR: Could not find a version that satisfies the requirement nonexistent-pkg==9.9 (from versions: none)",
    "ERROR: No matching distribution found for nonexistent-pkg==9.9",
    "environment build failed in step: [2/2] pip install -r requirements.txt (exit code 1)",
    "if it could not reach a package index: ...",
  ].join("\n");

  it("leads with the failing step and quotes the lines that name the package", () => {
    const msg = failureMessage(pipLog, "");
    expect(msg.split("\n")[0]).toBe("environment build failed in step: [2/2] pip install -r requirements.txt (exit code 1)");
    expect(msg).toContain("No matching distribution found for nonexistent-pkg==9.9");
    expect(msg).not.toContain("==> [1/2]");
    expect(msg.split("\n").at(-1)).toBe("if it could not reach a package index: ...");
  });
  it("says why when the reason is not in the log", () => {
    expect(failureMessage(null, "the build took longer than 60s")).toBe("environment build failed: the build took longer than 60s");
  });
  it("says the log is gone when it is", () => {
    expect(failureMessage(null, "")).toMatch(/log is gone/);
  });
  it("quotes the end of a log with no step line (the checkout failed)", () => {
    expect(failureMessage("a\nb\ncheckout failed: could not fetch", "")).toMatch(/could not fetch$/);
  });
});

describe("podFailure", () => {
  const status = (name: string, state: V1ContainerStatus["state"]): V1ContainerStatus => ({
    name,
    state,
    image: "i",
    imageID: "",
    ready: false,
    restartCount: 0,
  });
  const pod = (init: V1ContainerStatus[], main: V1ContainerStatus[] = []): V1Pod => ({ status: { initContainerStatuses: init, containerStatuses: main } });
  const ok = status("checkout", { terminated: { exitCode: 0 } });
  it.each<[string, V1Pod, boolean, string | RegExp]>([
    [
      "the checkout failed: its message",
      pod([
        status("checkout", { terminated: { exitCode: 1, message: "checkout failed: could not fetch abc" } }),
        status("install", { waiting: { reason: "PodInitializing" } }),
      ]),
      false,
      "the checkout step failed (exit code 1): checkout failed: could not fetch abc",
    ],
    ["the install failed and its log says why: nothing more", pod([ok, status("install", { terminated: { exitCode: 1 } })]), true, ""],
    [
      "the install ran out of memory",
      pod([ok, status("install", { terminated: { exitCode: 137, reason: "OOMKilled" } })]),
      true,
      /install step ran out of memory \(OOMKilled\)/,
    ],
    [
      "the image cannot be pulled",
      pod([ok, status("install", { waiting: { reason: "ErrImagePull", message: "not found" } })]),
      false,
      "the install step could not start: ErrImagePull (not found)",
    ],
    [
      "the save was refused (too large)",
      pod(
        [ok, status("install", { terminated: { exitCode: 0 } })],
        [
          status("main", {
            terminated: {
              exitCode: 1,
              message: "codeplane: codeplane refused the environment (413): The environment's archive is larger than 4294967296 bytes",
            },
          }),
        ],
      ),
      true,
      /^the save step failed \(exit code 1\): codeplane: codeplane refused the environment \(413\)/,
    ],
    ["nothing failed that the pod shows", pod([ok]), false, ""],
  ])("%s", (_name, p, logged, want) => {
    const got = podFailure(p, logged);
    if (typeof want === "string") expect(got).toBe(want);
    else expect(got).toMatch(want);
  });
});

describe("tail", () => {
  it("replaces NUL, which Postgres text cannot hold, so a failure with binary output is still recorded", () => {
    expect(tail("a\u0000b")).toBe("a\uFFFDb");
    expect(failureMessage("x\u0000\nenvironment build failed in step: [1/1] s (exit code 1)", "")).not.toContain("\u0000");
  });

  it("keeps a short log whole and the end of a long one", () => {
    expect(tail("short")).toBe("short");
    const long = "x".repeat(100) + "END";
    expect(tail(long, 10)).toBe("[...]\nxxxxxxxEND");
  });
});

describe("describeReservation", () => {
  const spec: RunEnvironmentSpec = {
    key: "a".repeat(64),
    image: "runner:dev",
    steps: [{ name: "pip install", run: "pip install -r requirements.txt" }],
    cachePaths: [],
    warnings: ["python 3.12 asked, 3.11 given"],
  };
  const full: EnvironmentDefinitionJson = {
    toolchains: [{ name: "python", version: "3.12", exact: true, source: ".python-version" }],
    manifests: [{ path: "requirements.txt", sha256: "1".repeat(64) }],
    steps: [{ name: "pip install", run: "pip install -r requirements.txt", why: "requirements.txt pins every package", ecosystem: "python" }],
    cache_paths: [],
    packages: ["click"],
    notes: [],
    warnings: ["python 3.12 asked, 3.11 given"],
  };
  const analysis = (key: string | null): EnvironmentDescription & { key: string | null } => ({ key, image: "runner:dev", definition: full });
  const earlier: EnvironmentDescription = { image: "runner:old", definition: { ...full, notes: ["from the earlier row"] } };
  const thin: EnvironmentDescription = {
    image: "runner:dev",
    definition: {
      toolchains: [],
      manifests: [],
      steps: [{ name: "pip install", run: "pip install -r requirements.txt", why: "", ecosystem: "" }],
      cache_paths: [],
      packages: [],
      notes: [],
      warnings: spec.warnings,
    },
  };
  it.each([
    ["the analysis resolved again gives the run's key: its description", analysis(spec.key), earlier, { image: "runner:dev", definition: full }],
    ["the analysis now gives another key (the catalog changed): the key's earlier row", analysis("b".repeat(64)), earlier, earlier],
    ["no analysis: the key's earlier row", null, earlier, earlier],
    ["neither: what the run's spec holds", null, undefined, thin],
  ] as const)("%s", (_name, fromAnalysis, before, expected) => {
    expect(describeReservation(spec, fromAnalysis, before)).toEqual(expected);
  });
});
