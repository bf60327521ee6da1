import { describe, expect, it } from "vitest";
import type { Analysis } from "../analyses/analyses.schemas.ts";
import { checkRunOutput, conclusionOf, desiredState, SUMMARY_LIMIT } from "./check-run-body.ts";

const LINK = "https://codeplane.example/ui/#/repos/r/analysis/c";

function analysis(over: Partial<Analysis> = {}): Analysis {
  return {
    id: "00000000-0000-4000-8000-000000000001",
    repository_id: "00000000-0000-4000-8000-000000000002",
    commit_hash: "a".repeat(40),
    branch: "main",
    language: "en",
    status: "completed",
    workflow_id: "ns/analysis-x",
    created_at: "2026-11-22T00:00:00.000Z",
    started_at: null,
    completed_at: null,
    repo_summary: null,
    experiments: [],
    primary_ids: [],
    env_vars: { valid: true, required_env_vars: [], missing_env_vars: [] },
    environment: null,
    error: null,
    trigger: { kind: "push", delivery_id: "d" },
    logs_url: "/x",
    ...over,
  };
}

function experiment(id: string, parameters: number, over: object = {}) {
  return {
    id,
    title: `train ${id}`,
    description: null,
    entry_point: `python ${id}.py`,
    command: ["python", `${id}.py`],
    language: "python",
    kind: "python-script" as const,
    path: `${id}.py`,
    inputs: [],
    outputs: [],
    parameters: Array.from({ length: parameters }, (_, i) => ({
      name: `p${i}`,
      value: i,
      category: "integer" as const,
      cli_option: `--p${i}`,
      choices: null,
      description: null,
      required: false,
    })),
    ...over,
  };
}

describe("desiredState", () => {
  it.each([
    { status: "pending", deleted: false, want: "queued" },
    { status: "running", deleted: false, want: "in_progress" },
    { status: "completed", deleted: false, want: "completed" },
    { status: "failed", deleted: false, want: "completed" },
    { status: "cancelled", deleted: false, want: "completed" },
    { status: "running", deleted: true, want: "completed" },
  ] as const)("$status (deleted $deleted) → $want", ({ status, deleted, want }) => {
    expect(desiredState({ status, deleted })).toBe(want);
  });
});

describe("conclusionOf", () => {
  it.each([
    { status: "completed", error: null, deleted: false, want: "success" },
    { status: "failed", error: "the analyzer exited with 1", deleted: false, want: "failure" },
    { status: "failed", error: "the analysis timed out after 600 s", deleted: false, want: "timed_out" },
    { status: "failed", error: "DeadlineExceeded: Job was active longer than specified deadline", deleted: false, want: "timed_out" },
    { status: "failed", error: null, deleted: false, want: "failure" },
    { status: "cancelled", error: null, deleted: false, want: "cancelled" },
    { status: "running", error: null, deleted: true, want: "cancelled" },
  ] as const)("$status / $error → $want", ({ status, error, deleted, want }) => {
    expect(conclusionOf({ status, error, deleted })).toBe(want);
  });
});

describe("checkRunOutput", () => {
  it("names the primary experiments with their parameters and the missing variables, and links the analysis", () => {
    const a = analysis({
      experiments: [experiment("a", 2), experiment("b", 0)],
      primary_ids: ["b"],
      env_vars: { valid: false, required_env_vars: ["API_TOKEN"], missing_env_vars: ["API_TOKEN"] },
    });
    const out = checkRunOutput(a, false, LINK);
    expect(out.title).toBe("2 experiments found, 1 environment variable missing");
    expect(out.summary).toContain("**train b**: ` python b.py `");
    expect(out.summary).not.toContain("train a");
    expect(out.summary).toContain("and 1 more experiment.");
    const table = checkRunOutput(analysis({ experiments: [experiment("a", 2)], primary_ids: ["a"] }), false, LINK).summary;
    expect(table).toContain("| parameter | default | kind |\n| --- | --- | --- |\n| ` --p0 ` | ` 0 ` | integer |\n| ` --p1 ` | ` 1 ` | integer |");
    expect(out.summary).toContain("` API_TOKEN `");
    expect(out.summary.endsWith(`[Open the analysis in codeplane](${LINK})`)).toBe(true);
  });

  it("says why a failed analysis failed", () => {
    const out = checkRunOutput(analysis({ status: "failed", error: "checkout failed: repository not found" }), false, LINK);
    expect(out.title).toBe("The analysis failed");
    expect(out.summary).toContain("checkout failed: repository not found");
  });

  it("keeps repository text from making links, images or HTML on GitHub", () => {
    const out = checkRunOutput(
      analysis({
        experiments: [experiment("x", 0, { title: "![x](https://evil.example/p.png) <img src=x> [click](https://evil.example)" })],
        primary_ids: ["x"],
      }),
      false,
      LINK,
    );
    expect(out.summary).not.toMatch(/(?<!\\)!(?<!\\)\[|(?<!\\)<img|(?<!\\)\[click/);
    expect(out.summary).toContain("\\<img");
    const backticks = checkRunOutput(analysis({ experiments: [experiment("y", 0, { entry_point: "echo `x` ``y``" })], primary_ids: ["y"] }), false, LINK);
    expect(backticks.summary).toContain("``` echo `x` ``y`` ```");
  });

  it("fits GitHub's limit whatever the analysis holds, keeping the link", () => {
    const many = Array.from({ length: 200 }, (_, i) => experiment(`e${i}`, 30, { title: "t".repeat(500), entry_point: "x".repeat(4000) }));
    const out = checkRunOutput(
      analysis({
        experiments: many,
        primary_ids: many.map((e) => e.id),
        env_vars: { valid: false, required_env_vars: [], missing_env_vars: Array.from({ length: 300 }, (_, i) => `V${i}`) },
      }),
      false,
      LINK,
    );
    expect(out.summary.length).toBeLessThanOrEqual(SUMMARY_LIMIT);
    expect(out.summary).toContain("cut to fit GitHub's limit");
    expect(out.summary.endsWith(`(${LINK})`)).toBe(true);
  });
});
