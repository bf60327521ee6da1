import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AnalyzerResult, Experiment } from "@codeplane/analyzer";
import type { FixtureRepo } from "../helpers/git-fixture.ts";
import type { Tenant, TestService } from "../helpers/service.ts";
import { twoTenantsWithRepository, type TwoTenants } from "../helpers/two-tenants.ts";

// The analysis API against a real Postgres with no cluster: requests are
// validated and scoped to their account, starting an analysis answers 503,
// and a completed analysis (written here the way the controller writes it)
// is read back with its missing environment variables computed at read time,
// and drives the validation of runs of its experiments.

let svc: TestService;
let fixture: FixtureRepo;
let alice: Tenant;
let bob: Tenant;
let repoId: string;

const experiment: Experiment = {
  id: "python:train.py",
  title: "train",
  description: "Trains the model.",
  entry_point: "python3 train.py",
  command: ["python3", "train.py"],
  language: "python",
  kind: "python-script",
  path: "train.py",
  inputs: ["data/train.csv"],
  outputs: ["model.pt"],
  parameters: [
    { name: "epochs", value: 3, category: "integer", cli_option: "--epochs", choices: null, description: null, required: false },
    { name: "optimizer", value: "adam", category: "string", cli_option: "--optimizer", choices: ["adam", "sgd"], description: null, required: false },
  ],
  required_env_vars: ["API_TOKEN"],
};

// Another entry point of the same commit, with a variable of its own: its needs must not block train.py, nor train.py's it.
const serve: Experiment = {
  id: "python:serve.py",
  title: "serve",
  description: null,
  entry_point: "python3 serve.py",
  command: ["python3", "serve.py"],
  language: "python",
  kind: "python-script",
  path: "serve.py",
  inputs: [],
  outputs: [],
  parameters: [],
  required_env_vars: ["SERVE_SIGNING_KEY"],
};

// A third that needs only what codeplane gives every run: never refused, for those or for its neighbours' variables.
const report: Experiment = {
  ...serve,
  id: "python:report.py",
  title: "report",
  entry_point: "python3 report.py",
  command: ["python3", "report.py"],
  path: "report.py",
  required_env_vars: ["CODEPLANE_OUTPUT_DIR", "CODEPLANE_METRICS_FILE"],
};

const result: AnalyzerResult = {
  version: 1,
  repo_summary: {
    language: "en",
    text: "A Python project.",
    title: "Demo",
    description: null,
    languages: [{ name: "Python", files: 1, lines: 10, bytes: 200 }],
    file_count: 1,
    total_bytes: 200,
    license: null,
    manifests: [],
    frameworks: [],
    truncated: false,
    skipped: { binary: 0, too_large: 0, symlinks: 0, unparsable: 0 },
  },
  experiments: [experiment, serve, report],
  primary_ids: ["python:train.py"],
  env_vars: [
    { name: "API_TOKEN", path: "train.py", line: 4, required: true },
    { name: "LOG_LEVEL", path: "train.py", line: 5, required: false },
    { name: "SERVE_SIGNING_KEY", path: "serve.py", line: 2, required: true },
  ],
  stats: { files_scanned: 1, files_parsed: 1, duration_ms: 5 },
};

let setup: TwoTenants;

beforeAll(async () => {
  setup = await twoTenantsWithRepository();
  ({ svc, fixture, alice, bob, repoId } = setup);
});
afterAll(() => setup?.close());

async function completedAnalysis(commit: string) {
  const id = "0190b1c2-3d4e-7f00-8a1b-2c3d4e5f6a70";
  await svc.db
    .insertInto("analyses")
    .values({
      id,
      account_id: alice.accountId,
      repository_id: repoId,
      commit_hash: commit,
      branch: "main",
      language: "en",
      workflow_id: `codeplane/analysis-${id}`,
      status: "completed",
      status_rank: 2,
      result: JSON.stringify(result),
      started_at: new Date("2026-11-22T00:00:00Z"),
      completed_at: new Date("2026-11-22T00:00:05Z"),
      updated_at: new Date(),
    })
    .execute();
  return id;
}

describe("analyses without a cluster", () => {
  it("answers 503 with a clear detail for a valid request, and leaves nothing behind", async () => {
    const res = await alice.api(`/v1/repositories/${repoId}/analysis/main`, { method: "POST", json: { language: "ja" } });
    expect(res.status).toBe(503);
    expect((await res.json()).detail).toMatch(/Kubernetes is not reachable/);
    expect(await (await alice.api(`/v1/repositories/${repoId}/analysis`)).json()).toEqual({ items: [], next_cursor: null });
  });

  it.each([
    ["an unknown language", { language: "fr" }, ["body", "language"], "enum"],
    ["an unknown field", { colour: "red" }, ["body", "colour"], "extra_forbidden"],
    ["an empty branch", { branch: "" }, ["body", "branch"], "string_too_short"],
  ])("validates the body: %s", async (_name, json, loc, type) => {
    const res = await alice.api(`/v1/repositories/${repoId}/analysis/main`, { method: "POST", json });
    expect(res.status).toBe(422);
    expect((await res.json()).detail).toEqual(expect.arrayContaining([expect.objectContaining({ loc, type })]));
  });

  it("answers 404 for unknown commits, unanalysed commits and another account's repository", async () => {
    expect((await alice.api(`/v1/repositories/${repoId}/analysis/${"f".repeat(40)}`, { method: "POST", json: {} })).status).toBe(404);
    const none = await alice.api(`/v1/repositories/${repoId}/analysis/main`);
    expect(none.status).toBe(404);
    expect(await none.json()).toEqual({ detail: "Analysis not found" });
    const res = await bob.api(`/v1/repositories/${repoId}/analysis/main`, { method: "POST", json: {} });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ detail: "Repository not found" });
  });

  describe("with a completed analysis", () => {
    let id: string;
    beforeAll(async () => {
      id = await completedAnalysis(fixture.commits.main);
    });

    it("is found by full hash, short hash and branch, with missing variables computed now", async () => {
      for (const ref of [fixture.commits.main, fixture.commits.main.slice(0, 8), "main"]) {
        const res = await alice.api(`/v1/repositories/${repoId}/analysis/${ref}`);
        expect(res.status, ref).toBe(200);
        const body = await res.json();
        expect(body).toMatchObject({
          id,
          commit_hash: fixture.commits.main,
          status: "completed",
          primary_ids: ["python:train.py"],
          env_vars: { valid: false, required_env_vars: ["API_TOKEN", "SERVE_SIGNING_KEY"], missing_env_vars: ["API_TOKEN", "SERVE_SIGNING_KEY"] },
          logs_url: `/v1/repositories/${repoId}/analysis/${fixture.commits.main}/logs/stream`,
        });
        expect(body.experiments).toEqual([experiment, serve, report]);
      }
      expect((await bob.api(`/v1/repositories/${repoId}/analysis/main`)).status).toBe(404);
    });

    it("a second POST returns the existing analysis with 200, even without a cluster", async () => {
      const res = await alice.api(`/v1/repositories/${repoId}/analysis/main`, { method: "POST", json: {} });
      expect(res.status).toBe(200);
      expect((await res.json()).id).toBe(id);
    });

    it("cancelling a finished analysis is a conflict", async () => {
      const res = await alice.api(`/v1/repositories/${repoId}/analysis/main/cancel`, { method: "POST" });
      expect(res.status).toBe(409);
      expect((await res.json()).detail).toBe("Analysis already finished (completed)");
    });

    it.each([
      [
        "an unknown experiment",
        { analyzed_experiment: "python:nope.py" },
        ["body", "analyzed_experiment"],
        "value_error",
        /no completed analysis with that experiment/,
      ],
      [
        "an unknown parameter",
        { analyzed_experiment: "python:train.py", parameters: { lr: 1 } },
        ["body", "parameters", "lr"],
        "value_error",
        /has no parameter 'lr'/,
      ],
      [
        "a bad integer",
        { analyzed_experiment: "python:train.py", parameters: { epochs: "many" } },
        ["body", "parameters", "epochs"],
        "int_parsing",
        /valid integer/,
      ],
      [
        "a value outside the choices",
        { analyzed_experiment: "python:train.py", parameters: { optimizer: "rmsprop" } },
        ["body", "parameters", "optimizer"],
        "enum",
        /'adam' or 'sgd'/,
      ],
      [
        "missing environment variables",
        { analyzed_experiment: "python:train.py", parameters: { epochs: 5 } },
        ["body", "analyzed_experiment"],
        "value_error",
        /^Value error, missing environment variables: API_TOKEN \(/,
      ],
      [
        "another experiment's missing variables, only its own",
        { analyzed_experiment: "python:serve.py" },
        ["body", "analyzed_experiment"],
        "value_error",
        /^Value error, missing environment variables: SERVE_SIGNING_KEY \(/,
      ],
    ])("refuses a run of %s with a 422 naming it", async (_name, json, loc, type, msg) => {
      const res = await alice.api(`/v1/repositories/${repoId}/main/runs`, { method: "POST", json });
      expect(res.status).toBe(422);
      const detail = (await res.json()).detail;
      expect(detail).toEqual([expect.objectContaining({ loc, type, msg: expect.stringMatching(msg) })]);
    });

    it("an experiment that needs only codeplane's own variables runs while its neighbours' variables are missing", async () => {
      const res = await alice.api(`/v1/repositories/${repoId}/main/runs`, { method: "POST", json: { analyzed_experiment: "python:report.py" } });
      // Past validation: only the missing cluster stops it.
      expect(res.status).toBe(503);
    });

    it("once its own variable is set, an experiment runs although another's is still missing", async () => {
      const set = await alice.api("/v1/environment-variables", {
        method: "POST",
        json: { name: "API_TOKEN", value: "s3cret", secret: true, repository_id: repoId },
      });
      expect(set.status).toBe(201);
      const body = await (await alice.api(`/v1/repositories/${repoId}/analysis/main`)).json();
      expect(body.env_vars).toEqual({ valid: false, required_env_vars: ["API_TOKEN", "SERVE_SIGNING_KEY"], missing_env_vars: ["SERVE_SIGNING_KEY"] });
      const res = await alice.api(`/v1/repositories/${repoId}/main/runs`, {
        method: "POST",
        json: { analyzed_experiment: "python:train.py", parameters: { epochs: 5 } },
      });
      expect(res.status).toBe(503);
      const refused = await alice.api(`/v1/repositories/${repoId}/main/runs`, { method: "POST", json: { analyzed_experiment: "python:serve.py" } });
      expect(refused.status).toBe(422);
      expect((await refused.json()).detail[0].msg).toMatch(/missing environment variables: SERVE_SIGNING_KEY \(/);
    });

    it("lists it, newest first, only for its account", async () => {
      const page = await (await alice.api(`/v1/repositories/${repoId}/analysis?limit=5`)).json();
      expect(page.items.map((a: { id: string }) => a.id)).toEqual([id]);
      expect((await bob.api(`/v1/repositories/${repoId}/analysis`)).status).toBe(404);
    });
  });
});
