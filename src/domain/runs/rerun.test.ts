import { describe, expect, it } from "vitest";
import { rerunRequest } from "./rerun.ts";
import type { Run } from "./runs.schemas.ts";

const base = {
  run_id: "0190f0f0-0000-7000-8000-000000000001",
  compute_type: "cpu-memory",
  run_config: { command: ["python", "train.py", "--lr", "0.1"], parameters: { lr: 0.1, epochs: 3 }, timeout_seconds: 600 },
  environment: { key: "k", image: "i", cache: "hit", warnings: [] },
  experiment_id: "train",
} as unknown as Run;

describe("rerunRequest", () => {
  it.each([
    [
      "an experiment's run, as it was",
      base,
      {},
      { analyzed_experiment: "train", parameters: { lr: 0.1, epochs: 3 }, compute_type: "cpu-memory", timeout_seconds: 600, environment: "auto" },
    ],
    [
      "an experiment's run with overrides merged over its values",
      base,
      { parameters: { lr: 0.01 }, compute_type: "gpu-a10g", timeout_seconds: 60 },
      { analyzed_experiment: "train", parameters: { lr: 0.01, epochs: 3 }, compute_type: "gpu-a10g", timeout_seconds: 60, environment: "auto" },
    ],
    [
      "a command's run without an environment",
      { ...base, experiment_id: null, environment: null },
      { timeout_seconds: 5 },
      { command: ["python", "train.py", "--lr", "0.1"], compute_type: "cpu-memory", timeout_seconds: 5, environment: "none" },
    ],
  ])("%s", (_name, original, overrides, expected) => {
    expect(rerunRequest(original, overrides)).toEqual(expected);
  });

  it("refuses parameters for a command's run", () => {
    expect(() => rerunRequest({ ...base, experiment_id: null }, { parameters: { lr: 1 } })).toThrow(/parameters apply only/);
  });
});
