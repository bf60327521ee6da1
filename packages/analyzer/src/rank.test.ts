import { describe, expect, it } from "vitest";
import type { Experiment, ExperimentKind } from "./model.ts";
import { experimentName, rankExperiments, readmeMention } from "./rank.ts";

const exp = (id: string, kind: ExperimentKind): Experiment => ({
  id,
  kind,
  title: id,
  description: null,
  entry_point: id,
  command: [id],
  language: "x",
  path: "x",
  inputs: [],
  outputs: [],
  parameters: [],
});

describe("experimentName", () => {
  it.each<[string, ExperimentKind, string]>([
    ["python:scripts/train.py", "python-script", "train"],
    ["python:cli.py fit", "python-script", "fit"],
    ["python-module:pkg.tool serve", "python-module", "serve"],
    ["npm:test:unit", "npm-script", "test:unit"],
    ["make:train", "make-target", "train"],
    ["go:./cmd/server", "go-main", "server"],
  ])("%s", (id, kind, name) => expect(experimentName(exp(id, kind))).toBe(name));
});

describe("rankExperiments", () => {
  const script = (path: string): Experiment => ({
    ...exp(`python:${path}`, "python-script"),
    path,
    entry_point: `python3 ${path}`,
    command: ["python3", path],
    title: path,
  });
  it("prefers the examples the README points at over alphabetical order", () => {
    const examples = ["examples/audio/main.py", "examples/mnist/main.py", "examples/vision/main.py", "examples/gan/main.py"].map(script);
    const readme = "Start with `python examples/vision/main.py`, then try examples/mnist/main.py.";
    expect(rankExperiments(examples, readme)).toEqual(["python:examples/vision/main.py", "python:examples/mnist/main.py", "python:examples/audio/main.py"]);
  });

  it("finds a sub-command shown with python instead of python3", () => {
    const sub: Experiment = {
      ...exp("python-module:lexi search", "python-module"),
      path: "lexi/__main__.py",
      entry_point: "python3 -m lexi search",
      command: ["python3", "-m", "lexi", "search"],
    };
    expect(readmeMention(sub, "Run `python -m lexi search foo`.")).toBe(5);
  });
});
