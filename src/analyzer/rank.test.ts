import { describe, expect, it } from "vitest";
import type { Experiment, ExperimentKind } from "./model.ts";
import { experimentName } from "./rank.ts";

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
