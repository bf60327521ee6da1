import { describe, expect, it } from "vitest";
import { conclusionOf, SUMMARY_LIMIT } from "./check-run-body.ts";
import { runCheckRunName, runCheckRunOutput, runTitle, type RunCheckRunView } from "./run-check-run-body.ts";

const run = (over: Partial<RunCheckRunView> = {}): RunCheckRunView => ({
  status: "completed",
  error: null,
  exit_code: 0,
  deleted: false,
  experiment_id: "train",
  command: ["python", "train.py", "--lr", "0.1"],
  parameters: { lr: 0.1, epochs: 3 },
  final_metrics: { loss: 0.25, accuracy: 0.9 },
  duration_seconds: 12.34,
  attempts: 1,
  ...over,
});

describe("a run's check-run conclusion and title", () => {
  it.each([
    ["completed", run(), "success", "The run completed in 12.3 s"],
    ["failed with an exit code", run({ status: "failed", exit_code: 2, error: "exited with code 2" }), "failure", "The run failed with exit code 2 in 12.3 s"],
    [
      "failed without one (pod lost)",
      run({ status: "failed", exit_code: null, error: "the pod was lost", duration_seconds: null }),
      "failure",
      "The run failed",
    ],
    ["timed out", run({ status: "failed", exit_code: 143, error: "timed out after 60s" }), "timed_out", "The run timed out"],
    ["cancelled", run({ status: "cancelled", exit_code: null }), "cancelled", "The run was cancelled"],
    ["deleted while running", run({ status: "running", deleted: true, exit_code: null }), "cancelled", "The run was deleted"],
    ["completed after 2 hours", run({ duration_seconds: 7200 }), "success", "The run completed in 2 h"],
  ])("%s", (_name, r, conclusion, title) => {
    expect(conclusionOf(r)).toBe(conclusion);
    expect(runTitle(r)).toBe(title);
    expect(runCheckRunOutput(r, "https://cp.example/ui/#/runs/1").title).toBe(title);
  });
});

describe("a run's check-run name", () => {
  it.each([
    [{ experiment_id: "train", command: ["python", "x.py"] }, "codeplane/run: train"],
    [{ experiment_id: null, command: ["make", "test"] }, "codeplane/run: make test"],
    [{ experiment_id: null, command: ["echo", "a\n  b"] }, "codeplane/run: echo a b"],
    [{ experiment_id: null, command: [] }, "codeplane/run"],
    [{ experiment_id: null, command: ["x".repeat(200)] }, `codeplane/run: ${"x".repeat(79)}…`],
  ])("%j → %s", (r, name) => {
    expect(runCheckRunName(r)).toBe(name);
  });
});

describe("a run's check-run summary", () => {
  it("says what ran, with which parameters, what it measured, and links to the run", () => {
    const out = runCheckRunOutput(run({ attempts: 2 }), "https://cp.example/ui/#/runs/1");
    expect(out.summary).toContain("**Experiment**: ` train `");
    expect(out.summary).toContain("**Command**: ` python train.py --lr 0.1 `");
    expect(out.summary).toContain("### Parameters\n\n| parameter | value |\n| --- | --- |\n| ` lr ` | ` 0.1 ` |\n| ` epochs ` | ` 3 ` |");
    expect(out.summary).toContain("### Final metrics\n\n| metric | value |\n| --- | --- |\n| ` loss ` | ` 0.25 ` |");
    expect(out.summary).toContain("It took 2 attempts");
    expect(out.summary.endsWith("[Open the run in codeplane](https://cp.example/ui/#/runs/1)")).toBe(true);
  });

  it("leads with the error and leaves out what the run does not have", () => {
    const out = runCheckRunOutput(
      run({ status: "failed", exit_code: 1, error: "exited with code 1", experiment_id: null, parameters: {}, final_metrics: {} }),
      "https://cp.example/ui/#/runs/1",
    );
    expect(out.summary.startsWith("The run failed with exit code 1 in 12.3 s: exited with code 1")).toBe(true);
    expect(out.summary).not.toContain("Experiment");
    expect(out.summary).not.toContain("### Parameters");
    expect(out.summary).not.toContain("### Final metrics");
    expect(out.summary).not.toContain("attempts");
  });

  it("keeps text from the run from opening links, HTML or closing its code span", () => {
    const out = runCheckRunOutput(
      run({ error: "see [here](http://evil) <img src=x>", command: ["echo", "`; rm -rf /`"], parameters: { "a|b": "x | y" } }),
      "https://cp.example/ui/#/runs/1",
    );
    expect(out.summary).toContain("see \\[here\\]\\(http://evil\\) \\<img src=x\\>");
    expect(out.summary).toContain("`` echo `; rm -rf /` ``");
    expect(out.summary).toContain("| ` a\\|b ` | ` x \\| y ` |");
  });

  it("shows at most 30 parameters and fits GitHub's summary limit", () => {
    const parameters = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`p${i}`, i]));
    const out = runCheckRunOutput(run({ parameters, error: "e".repeat(100_000) }), "https://cp.example/ui/#/runs/1");
    expect(out.summary).toContain("and 10 more.");
    expect(out.summary.length).toBeLessThanOrEqual(SUMMARY_LIMIT);
  });
});
