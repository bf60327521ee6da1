import { describe, expect, it } from "vitest";
import { SCOPES } from "../domain/auth/scopes.ts";
import { argumentOf, validationText } from "./arguments.ts";
import { MCP_CHALLENGE_SCOPES, TOOLS, type ToolAnnotations } from "./tools.ts";

const byName = Object.fromEntries(TOOLS.map((t) => [t.name, t]));

// [readOnly, destructive, idempotent, openWorld]: decided per tool (docs/users/mcp.md, "Tool annotations", says why).
const ANNOTATIONS: Record<string, [boolean, boolean, boolean, boolean]> = {
  list_repositories: [true, false, true, false],
  register_repository: [false, false, true, true],
  list_files: [true, false, true, true],
  read_file: [true, false, true, true],
  start_analysis: [false, false, true, true],
  get_analysis: [true, false, true, false],
  run_experiment: [false, true, false, true],
  run_command: [false, true, false, true],
  get_run: [true, false, true, false],
  get_run_logs: [true, false, true, false],
  cancel_run: [false, true, true, false],
  list_environment_variables: [true, false, true, false],
  set_environment_variable: [false, true, true, false],
};

describe("tool annotations", () => {
  it("covers every tool", () => {
    expect(TOOLS.map((t) => t.name).sort()).toEqual(Object.keys(ANNOTATIONS).sort());
  });

  it.each(Object.entries(ANNOTATIONS))(
    "%s: readOnly %s, destructive %s, idempotent %s, openWorld %s",
    (name, [readOnly, destructive, idempotent, openWorld]) => {
      expect(byName[name]!.annotations).toEqual({
        readOnlyHint: readOnly,
        destructiveHint: destructive,
        idempotentHint: idempotent,
        openWorldHint: openWorld,
      } satisfies ToolAnnotations);
    },
  );

  it("marks read-only exactly the tools whose scope is a read scope", () => {
    for (const t of TOOLS) expect(t.annotations.readOnlyHint, t.name).toBe(t.scope.endsWith(":read"));
  });

  it("never calls a read-only tool destructive, and every tool that runs code open-world and destructive", () => {
    for (const t of TOOLS) if (t.annotations.readOnlyHint) expect(t.annotations.destructiveHint, t.name).toBe(false);
    for (const name of ["run_experiment", "run_command"]) expect(byName[name]!.annotations).toMatchObject({ destructiveHint: true, openWorldHint: true });
  });
});

describe("the /mcp challenge's scopes", () => {
  it("are the read-only tools' scopes: what lets an agent look, and nothing else", () => {
    expect(MCP_CHALLENGE_SCOPES).toEqual(["repositories:read", "analyses:read", "runs:read", "env:read"]);
    for (const s of MCP_CHALLENGE_SCOPES) expect(SCOPES).toContain(s);
    expect(MCP_CHALLENGE_SCOPES).not.toContain("keys:write");
  });

  it("cover every read-only tool; each write tool needs one scope more, asked for when it is first called", () => {
    for (const t of TOOLS) expect(MCP_CHALLENGE_SCOPES.includes(t.scope), t.name).toBe(t.annotations.readOnlyHint);
  });
});

// The REST locations each tool's service can answer a validation failure with (src/domain), and the argument that names it.
const LOCATIONS: [tool: string, loc: (string | number)[], argument: string][] = [
  ["register_repository", ["body", "url"], "url"],
  ["register_repository", ["body", "default_branch"], "default_branch"],
  ["list_repositories", ["query", "cursor"], "cursor"],
  ["list_files", ["query", "path"], "path"],
  ["list_files", ["path"], "path"],
  ["list_files", ["query", "cursor"], "cursor"],
  ["list_files", ["path", "ref"], "ref"],
  ["read_file", ["path", "path"], "path"],
  ["read_file", ["path"], "path"],
  ["read_file", ["offset"], "offset"],
  ["start_analysis", ["path", "commit_hash"], "commit_hash"],
  ["get_analysis", ["path", "commit_hash"], "commit_hash"],
  ["run_experiment", ["body", "analyzed_experiment"], "experiment_id"],
  ["run_experiment", ["body", "parameters", "lr"], "parameters.lr"],
  ["run_experiment", ["body", "compute_type"], "compute_type"],
  ["run_experiment", ["body", "timeout_seconds"], "timeout_seconds"],
  ["run_experiment", ["path", "commit_hash"], "commit_hash"],
  ["run_command", ["body", "compute_type"], "compute_type"],
  ["run_command", ["body", "timeout_seconds"], "timeout_seconds"],
  ["run_command", ["body", "command", 0], "command.0"],
  ["run_command", ["path", "commit_hash"], "commit_hash"],
  ["list_environment_variables", ["query", "cursor"], "cursor"],
  ["list_environment_variables", ["query", "repository_id"], "repository_id"],
  ["set_environment_variable", ["body", "value"], "value"],
  ["set_environment_variable", ["body", "name"], "name"],
  ["set_environment_variable", ["body", "repository_id"], "repository_id"],
];

describe("validation errors name the tool's own arguments", () => {
  it.each(LOCATIONS)("%s: %j is %s, one of its arguments", (tool, loc, argument) => {
    const t = byName[tool]!;
    const named = argumentOf(loc, t.renames);
    expect(named).toBe(argument);
    expect(Object.keys(t.input.shape)).toContain(named.split(".")[0]);
  });

  it("says run_experiment's failures with experiment_id, and points at the tool that sets variables", () => {
    const renames = byName.run_experiment!.renames;
    expect(
      validationText(
        [{ loc: ["body", "analyzed_experiment"], msg: "Value error, this commit has no completed analysis with that experiment", type: "value_error" }],
        renames,
      ),
    ).toBe("Validation failed: experiment_id: Value error, this commit has no completed analysis with that experiment");
    expect(
      validationText(
        [
          {
            loc: ["body", "analyzed_experiment"],
            msg: "Value error, missing environment variables: A, B (set them with POST /v1/environment-variables)",
            type: "value_error",
          },
          { loc: ["body", "parameters", "lr"], msg: "Input should be a valid number", type: "float_parsing" },
        ],
        renames,
      ),
    ).toBe(
      "Validation failed: experiment_id: Value error, missing environment variables: A, B (set them with the set_environment_variable tool); parameters.lr: Input should be a valid number",
    );
  });

  it("leaves a location that is not a REST one as it is", () => {
    expect(argumentOf(["body"])).toBe("body");
    expect(argumentOf([])).toBe("");
  });
});
