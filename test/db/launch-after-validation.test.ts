import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Experiment } from "@codeplane/analyzer";
import { AnalysisService, type AnalysisLauncher } from "../../src/domain/analyses/analyses.ts";
import { DomainValidationError } from "../../src/domain/errors.ts";
import type { GitSource } from "../../src/domain/repositories/git-port.ts";
import { RunService, type ExperimentCatalog, type RunLauncher } from "../../src/domain/runs/runs.ts";
import { DEFAULT_COMPUTE_TYPES } from "../../src/resources/compute-types.ts";
import { createRootLogger } from "../../src/logger.ts";
import { seedAccountWithRepository } from "../helpers/seed.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/service.ts";

// The services themselves, not only the routes in front of them, check every
// string they are given before anything is written: a run's resource is
// created before its row, so text the row cannot hold must never reach the
// cluster. Fakes stand in for git, the analysis catalog and the cluster, and
// record whether they were asked anything.

let database: TestDatabase;
let accountId: string;
let repositoryId: string;
const COMMIT = "c".repeat(40);
const logger = createRootLogger("silent");

let calls: string[];
const git = {
  resolveCommit: async (_repo: unknown, ref: string) => (calls.push(`git ${ref}`), COMMIT),
} as unknown as GitSource;
const experiments: ExperimentCatalog = {
  experiment: async () => (calls.push("catalog"), null),
  environmentOf: async () => (calls.push("environment"), null),
};
const launcher = (kind: string): RunLauncher & AnalysisLauncher => ({
  namespace: "codeplane",
  create: async (spec: { runId?: string; analysisId?: string }) => {
    calls.push(`create ${kind}`);
    return { metadata: { name: `${kind}-${spec.runId ?? spec.analysisId}`, namespace: "codeplane" } };
  },
  requestCancel: async () => true,
  delete: async () => {},
});

const runDeps = () => ({
  git,
  experiments,
  launcher: launcher("run"),
  environments: { planRun: async (_db: unknown, _run: unknown, _env: unknown, image: string) => ({ image, environment: undefined, record: null }) },
  runnerImage: "runner:test",
  computeTypes: DEFAULT_COMPUTE_TYPES,
  defaultComputeType: "cpu-general",
  defaultTimeoutSeconds: 60,
  maxTimeoutSeconds: 3600,
  logger,
});
const runs = () =>
  new RunService({
    git,
    experiments,
    launcher: launcher("run"),
    environments: { planRun: async (_db, _run, _env, image) => ({ image, environment: undefined, record: null }) },
    runnerImage: "runner:test",
    computeTypes: DEFAULT_COMPUTE_TYPES,
    defaultComputeType: "cpu-general",
    defaultTimeoutSeconds: 60,
    maxTimeoutSeconds: 3600,
    logger,
  });
const analyses = () =>
  new AnalysisService({
    git,
    launcher: launcher("analysis"),
    timeoutSeconds: 60,
    environments: { catalog: [{ image: "runner:test", toolchains: {}, packages: [] }], defaultComputeType: "cpu-general" },
    logger,
  });

const count = async (table: "runs" | "analyses") =>
  Number(
    (
      await database.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as("n"))
        .executeTakeFirstOrThrow()
    ).n,
  );

async function refusal(p: Promise<unknown>): Promise<DomainValidationError["issues"]> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DomainValidationError);
  return (err as DomainValidationError).issues;
}

const NUL = { msg: "Value error, must not contain NUL characters (U+0000)", type: "value_error" };
const SURROGATE = { msg: "Value error, must not contain unpaired UTF-16 surrogates", type: "value_error" };

beforeAll(async () => {
  database = await createTestDatabase();
  ({ accountId, repositoryId } = await seedAccountWithRepository(database.db));
});
afterAll(() => database?.drop());
beforeEach(() => {
  calls = [];
});

describe("RunService.create", () => {
  it.each([
    ["a NUL in an argv element", "main", { command: ["echo", "a\u0000b"] }, [{ loc: ["body", "command", 1], ...NUL }]],
    ["a lone surrogate in an argv element", "main", { command: ["\udc00"] }, [{ loc: ["body", "command", 0], ...SURROGATE }]],
    ["a NUL in the ref", "ma\u0000in", { command: ["true"] }, [{ loc: ["path", "commit_hash"], ...NUL }]],
    [
      "a parameter's name and value",
      "main",
      { analyzed_experiment: "python:train.py", parameters: { "lr\u0000": 1, epochs: "\ud800" } },
      [
        { loc: ["body", "parameters", "lr\u0000", "[key]"], ...NUL },
        { loc: ["body", "parameters", "epochs"], ...SURROGATE },
      ],
    ],
    ["a NUL in the compute type", "main", { command: ["true"], compute_type: "cpu\u0000" }, [{ loc: ["body", "compute_type"], ...NUL }]],
  ])("refuses %s before asking git, the catalog or the cluster", async (_name, ref, input, issues) => {
    expect(await refusal(runs().create(database.db, accountId, repositoryId, ref, input))).toEqual(issues);
    expect(calls).toEqual([]);
    expect(await count("runs")).toBe(0);
  });

  it.each([["constructor"], ["toString"], ["__proto__"]])(
    "refuses the compute type %j (no preset, though the object has the key) before the cluster",
    async (name) => {
      expect(await refusal(runs().create(database.db, accountId, repositoryId, "main", { command: ["true"], compute_type: name }))).toEqual([
        { loc: ["body", "compute_type"], msg: "Input should be 'cpu-general', 'cpu-memory', 'gpu-a10g'", type: "enum" },
      ]);
      expect(calls).toEqual([]);
    },
  );

  it("creates the resource, then the row, for a clean request (the fakes work)", async () => {
    const before = await count("runs");
    const run = await runs().create(database.db, accountId, repositoryId, "main", { command: ["echo", "caf\u00e9 \u{1f600}"] });
    expect(calls).toEqual(["git main", "environment", "create run"]);
    expect(run.run_config.command).toEqual(["echo", "caf\u00e9 \u{1f600}"]);
    expect(await count("runs")).toBe(before + 1);
  });

  it("starts an experiment whose port parameter is an environment variable with env PORT=value before its command", async () => {
    const server: Experiment = {
      id: "npm:start",
      title: "start",
      description: null,
      entry_point: "npm run start --",
      command: ["npm", "run", "start", "--"],
      language: "javascript",
      kind: "npm-script",
      path: "package.json",
      inputs: [],
      outputs: [],
      parameters: [{ name: "port", value: 3000, category: "integer", cli_option: null, env_var: "PORT", choices: null, description: null, required: false }],
      required_env_vars: [],
    };
    const service = new RunService({
      ...runDeps(),
      experiments: { experiment: async () => ({ experiment: server, missingEnvVars: [] }), environmentOf: async () => null },
    });
    const set = await service.create(database.db, accountId, repositoryId, "main", { analyzed_experiment: "npm:start", parameters: { port: "8080" } });
    expect(set.run_config.command).toEqual(["env", "PORT=8080", "npm", "run", "start", "--"]);
    const unset = await service.create(database.db, accountId, repositoryId, "main", { analyzed_experiment: "npm:start" });
    expect(unset.run_config.command).toEqual(["npm", "run", "start", "--"]);
  });
});

describe("AnalysisService.create", () => {
  it.each([
    ["a NUL in the branch", "main", { branch: "x\u0000" }, [{ loc: ["body", "branch"], ...NUL }]],
    ["a lone surrogate in the branch", "main", { branch: "\ud800x" }, [{ loc: ["body", "branch"], ...SURROGATE }]],
    ["a NUL in the ref (which would become the branch)", "ma\u0000in", {}, [{ loc: ["path", "commit_hash"], ...NUL }]],
  ])("refuses %s before asking git or writing the row or the resource", async (_name, ref, input, issues) => {
    expect(await refusal(analyses().create(database.db, accountId, repositoryId, ref, input))).toEqual(issues);
    expect(calls).toEqual([]);
    expect(await count("analyses")).toBe(0);
  });

  it("writes the row and the resource for a clean request (the fakes work)", async () => {
    const before = await count("analyses");
    const { analysis, created } = await analyses().create(database.db, accountId, repositoryId, "main", { branch: "main" });
    expect(created).toBe(true);
    expect(analysis.branch).toBe("main");
    expect(calls).toEqual(["git main", "create analysis"]);
    expect(await count("analyses")).toBe(before + 1);
  });
});
