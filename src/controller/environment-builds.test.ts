import type { V1Job } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { decideBuild, failureMessage, tail, type BuildDecision } from "./environment-builds.ts";

const NOW = new Date("2026-11-26T12:00:00Z");
const job = (conditions: { type: string; reason?: string }[] = []): V1Job => ({ status: { conditions: conditions.map((c) => ({ ...c, status: "True" })) } });
const row = (over: Partial<{ status: "building" | "ready" | "failed"; started_at: Date | null; build_deadline: Date | null }> = {}) => ({
  status: "building" as const,
  started_at: null,
  build_deadline: null,
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

describe("tail", () => {
  it("keeps a short log whole and the end of a long one", () => {
    expect(tail("short")).toBe("short");
    const long = "x".repeat(100) + "END";
    expect(tail(long, 10)).toBe("[...]\nxxxxxxxEND");
  });
});
