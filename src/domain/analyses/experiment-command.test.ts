import { describe, expect, it } from "vitest";
import type { Experiment, Parameter } from "@codeplane/analyzer";
import { buildExperimentCommand } from "./experiment-command.ts";

const param = (over: Partial<Parameter> & { name: string }): Parameter => ({
  value: null,
  category: "string",
  cli_option: `--${over.name}`,
  choices: null,
  description: null,
  required: false,
  ...over,
});

const experiment: Experiment = {
  id: "python:train.py",
  title: "train",
  description: null,
  entry_point: "python3 train.py",
  command: ["python3", "train.py"],
  language: "python",
  kind: "python-script",
  path: "train.py",
  inputs: [],
  outputs: [],
  parameters: [
    param({ name: "data", cli_option: null, required: true, category: "path" }),
    param({ name: "lr", value: 0.01, category: "number" }),
    param({ name: "epochs", value: 3, category: "integer" }),
    param({ name: "verbose", value: false, category: "flag" }),
    param({ name: "optimizer", value: "adam", choices: ["adam", "sgd"] }),
    param({ name: "EPOCHS", value: 5, category: "integer", cli_option: "EPOCHS=" }),
    param({ name: "debug", value: false, category: "boolean", cli_option: "-debug=" }),
    param({ name: "alpha", value: 0.5, category: "number", cli_option: "-p alpha" }),
  ],
};

describe("buildExperimentCommand", () => {
  it.each([
    ["only the required positional", { data: "d.csv" }, ["d.csv"]],
    ["an overridden number, options before positionals", { data: "d.csv", lr: 0.5 }, ["--lr", "0.5", "d.csv"]],
    ["numeric strings are accepted for numbers", { data: "d", epochs: "10" }, ["--epochs", "10", "d"]],
    ["a flag set to true is passed alone", { data: "d", verbose: true }, ["--verbose", "d"]],
    ["a flag set to false is left out", { data: "d", verbose: "false" }, ["d"]],
    ["a choice", { data: "d", optimizer: "sgd" }, ["--optimizer", "sgd", "d"]],
    ["an option ending in = is joined to its value", { data: "d", EPOCHS: 7, debug: true }, ["EPOCHS=7", "-debug=true", "d"]],
    ["a multi-word option", { data: "d", alpha: 1 }, ["-p", "alpha", "1", "d"]],
    ["a value with spaces stays one argument", { data: "my file.csv" }, ["my file.csv"]],
  ])("%s", (_name, overrides, args) => {
    const r = buildExperimentCommand(experiment, overrides);
    if (Array.isArray(r)) throw new Error(JSON.stringify(r));
    expect(r.command).toEqual(["python3", "train.py", ...args]);
  });

  it("reports effective values for run_config", () => {
    const r = buildExperimentCommand(experiment, { data: "d", lr: "0.2" });
    expect(Array.isArray(r) ? r : r.parameters).toMatchObject({ data: "d", lr: 0.2, epochs: 3, optimizer: "adam" });
  });

  it.each([
    ["an unknown parameter", { data: "d", nope: 1 }, { loc: ["body", "parameters", "nope"], type: "value_error" }],
    ["a missing required positional", {}, { loc: ["body", "parameters", "data"], type: "missing" }],
    ["a non-integer", { data: "d", epochs: 1.5 }, { loc: ["body", "parameters", "epochs"], type: "int_parsing" }],
    ["a non-number", { data: "d", lr: "fast" }, { loc: ["body", "parameters", "lr"], type: "float_parsing" }],
    ["a non-boolean", { data: "d", verbose: "yes" }, { loc: ["body", "parameters", "verbose"], type: "bool_parsing" }],
    ["a number for a string", { data: 3 }, { loc: ["body", "parameters", "data"], type: "string_type" }],
    [
      "a value outside the choices",
      { data: "d", optimizer: "rmsprop" },
      { loc: ["body", "parameters", "optimizer"], type: "enum", msg: "Input should be 'adam' or 'sgd'" },
    ],
    ["null for a required parameter", { data: null }, { loc: ["body", "parameters", "data"], type: "missing" }],
  ])("refuses %s, naming the parameter", (_name, overrides, issue) => {
    const r = buildExperimentCommand(experiment, overrides);
    expect(Array.isArray(r)).toBe(true);
    expect(r).toContainEqual(expect.objectContaining(issue));
  });

  it("passes earlier positionals with their defaults when a later one is given", () => {
    const e: Experiment = {
      ...experiment,
      command: ["sh", "run.sh"],
      parameters: [param({ name: "arg1", cli_option: null, value: "in.txt" }), param({ name: "arg2", cli_option: null, value: "out.txt" })],
    };
    expect(buildExperimentCommand(e, { arg2: "x" })).toMatchObject({ command: ["sh", "run.sh", "in.txt", "x"] });
    expect(buildExperimentCommand(e, {})).toMatchObject({ command: ["sh", "run.sh"] });
  });

  describe("a parameter read from an environment variable", () => {
    const server: Experiment = {
      ...experiment,
      command: ["npm", "run", "start", "--"],
      parameters: [
        param({ name: "port", value: 3000, category: "integer", cli_option: null, env_var: "PORT" }),
        param({ name: "name", cli_option: null, value: "a" }),
        param({ name: "verbose", value: false, category: "flag" }),
      ],
    };
    it.each([
      ["not given: the program's own default", {}, ["npm", "run", "start", "--"]],
      ["given: env NAME=value before the command", { port: "8080" }, ["env", "PORT=8080", "npm", "run", "start", "--"]],
      ["not a positional: a later positional does not pass it", { name: "b" }, ["npm", "run", "start", "--", "b"]],
      ["with options and positionals", { port: 1, verbose: true, name: "b" }, ["env", "PORT=1", "npm", "run", "start", "--", "--verbose", "b"]],
      ["null: left unset", { port: null }, ["npm", "run", "start", "--"]],
    ])("%s", (_name, overrides, command) => {
      const r = buildExperimentCommand(server, overrides);
      if (Array.isArray(r)) throw new Error(JSON.stringify(r));
      expect(r.command).toEqual(command);
    });
    it("still checks the value's type", () => {
      expect(buildExperimentCommand(server, { port: "eighty" })).toContainEqual(
        expect.objectContaining({ loc: ["body", "parameters", "port"], type: "int_parsing" }),
      );
    });
  });
});
