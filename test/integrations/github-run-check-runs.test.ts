import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { trackCheckRun } from "../../src/domain/webhooks/check-run-rows.ts";
import { startGitHubDouble, type CheckRunRecord, type GitHubDouble } from "../helpers/github-double/index.ts";
import { githubEnvFor } from "../helpers/github-env.ts";
import { insertRunRow } from "../helpers/seed.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";

// Check runs for runs (docs/users/github.md) against real Postgres and the
// GitHub double (validated against GitHub's own description). Runs are rows
// here, moved along as the controller's mirror moves them: what is under test
// is the queue the trigger fills and the syncer that drains it, not the
// cluster. A restart is a service stopped and another started on its database.

const PUBLIC_URL = "https://codeplane.example.test";
const DEADLINE_MS = 90_000;

let gh: GitHubDouble;
let svc: TestService;
let alice: Tenant;
let bob: Tenant;
let sha: string;
let quietSha: string;
let installation: number;
let reporting: string;
let quiet: string;

async function json<T = any>(res: Response, status: number): Promise<T> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** Waits (generously: the machine is shared) until the run's check run satisfies `ok`. */
async function checkRunOf(runId: string, ok: (c: CheckRunRecord) => boolean, fullName = "acme/app"): Promise<CheckRunRecord> {
  const until = Date.now() + DEADLINE_MS;
  for (;;) {
    const c = gh.checkRuns(fullName).find((r) => r.externalId === runId);
    if (c && ok(c)) return c;
    if (Date.now() > until) {
      const row = await queueRow(runId);
      throw new Error(`check run of ${runId}: ${JSON.stringify(c?.history.map((h) => h.state.status))}; queue: ${JSON.stringify(row)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

const queueRow = (runId: string) => svc.db.selectFrom("github_run_check_runs").selectAll().where("run_id", "=", runId).executeTakeFirst();

/** The queue's row once the syncer has recorded that GitHub has the run's end (it records just after GitHub answers). */
async function settledRow(runId: string) {
  const until = Date.now() + DEADLINE_MS;
  for (;;) {
    const row = await queueRow(runId);
    if (row?.sent === "completed" || Date.now() > until) return row;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const newRun = (status: Parameters<typeof insertRunRow>[1]["status"], set: Parameters<typeof insertRunRow>[1]["set"] = {}, repositoryId = reporting) =>
  insertRunRow(svc.db, { accountId: alice.accountId, repositoryId, status, set: { commit_hash: repositoryId === quiet ? quietSha : sha, ...set } });

beforeAll(async () => {
  gh = await startGitHubDouble({ appSlug: "codeplane-test" });
  svc = await startTestService(githubEnvFor(gh, PUBLIC_URL));
  alice = await svc.tenant();
  bob = await svc.tenant();
  installation = gh.addInstallation({ account: { login: "acme", type: "Organization" } }).id;
  const inst = installation;
  sha = (await gh.addRepository({ owner: "acme", name: "app", private: true, files: { "train.py": "print(1)\n" }, installationId: inst })).headSha;
  quietSha = (await gh.addRepository({ owner: "acme", name: "quiet", private: false, files: { "main.py": "print(2)\n" }, installationId: inst })).headSha;
  const integration = (await json(await alice.api("/v1/integrations/github", { method: "POST", json: { installation_id: inst } }), 201)).id;
  const register = (full_name: string, report_check_runs?: boolean) =>
    alice.api(`/v1/integrations/${integration}/repositories`, {
      method: "POST",
      json: { full_name, ...(report_check_runs !== undefined && { report_check_runs }) },
    });
  const app = await json(await register("acme/app", true), 201);
  expect(app).toMatchObject({ provider: "github", report_check_runs: true });
  reporting = app.id;
  quiet = (await json(await register("acme/quiet"), 201)).id;
});

afterAll(async () => {
  await svc?.close();
  await gh?.close();
});

describe("which runs report", () => {
  it("none of a repository that has not opted in, until it does; then the runs created afterwards", async () => {
    const before = await newRun("completed", {}, quiet);
    expect(await queueRow(before)).toBeUndefined();

    const on = await json(await alice.api(`/v1/repositories/${quiet}`, { method: "PATCH", json: { report_check_runs: true } }), 200);
    expect(on.report_check_runs).toBe(true);
    const after = await newRun("completed", {}, quiet);
    const c = await checkRunOf(after, (r) => r.status === "completed", "acme/quiet");
    expect(c.conclusion).toBe("success");

    await json(await alice.api(`/v1/repositories/${quiet}`, { method: "PATCH", json: { report_check_runs: false } }), 200);
    const off = await newRun("completed", {}, quiet);
    expect(await queueRow(off)).toBeUndefined();
    // The trigger queues in the run's own transaction: a run not queued by now never is.
    expect(gh.checkRuns("acme/quiet").map((r) => r.externalId)).toEqual([after]);
  }, 240_000);

  it("a deleted run's check run ends cancelled", async () => {
    const id = await newRun("running", { start_time: new Date() });
    await checkRunOf(id, (c) => c.status === "in_progress");
    await svc.db.updateTable("runs").set({ deleted_at: new Date() }).where("id", "=", id).execute();
    const c = await checkRunOf(id, (r) => r.status === "completed");
    expect(c).toMatchObject({ conclusion: "cancelled", output: { title: "The run was deleted" } });
  }, 240_000);
});

describe("when GitHub fails", () => {
  it("retries with backoff and never touches the run", async () => {
    const failing = gh.requests.length;
    gh.failNext("POST", /\/repos\/acme\/app\/check-runs$/, 502, 2);
    const id = await newRun("failed", { exit_code: 3, error: "exited with code 3", start_time: new Date(), close_time: new Date() });
    const run = await svc.db.selectFrom("runs").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
    const c = await checkRunOf(id, (r) => r.status === "completed");
    expect(c).toMatchObject({ conclusion: "failure", output: { title: expect.stringMatching(/^The run failed with exit code 3/) } });
    const posts = gh.requests.slice(failing).filter((r) => r.method === "POST" && r.path.endsWith("/repos/acme/app/check-runs"));
    expect(posts.map((r) => r.status)).toEqual([502, 502, 201]);
    expect(gh.checkRuns("acme/app").filter((r) => r.externalId === id)).toHaveLength(1);
    expect(await svc.db.selectFrom("runs").selectAll().where("id", "=", id).executeTakeFirstOrThrow()).toEqual(run);
    expect(await settledRow(id)).toMatchObject({ sent: "completed", attempts: 0, last_error: null });
  }, 240_000);
});

describe("tenancy and settings", () => {
  it("another account can neither see nor change a repository's reporting", async () => {
    expect(await json(await bob.api(`/v1/repositories/${reporting}`, { method: "PATCH", json: { report_check_runs: false } }), 404)).toEqual({
      detail: "Repository not found",
    });
    expect((await bob.api(`/v1/repositories/${reporting}`)).status).toBe(404);
    expect((await json(await alice.api(`/v1/repositories/${reporting}`), 200)).report_check_runs).toBe(true);
  });

  it("refuses it for a repository not connected through a GitHub App installation, with 409", async () => {
    const plain = await json(await bob.api("/v1/repositories", { method: "POST", json: { url: `${gh.url}/acme/quiet.git`, name: "plain" } }), 201);
    expect(plain).toMatchObject({ provider: "git", report_check_runs: false });
    const res = await json(await bob.api(`/v1/repositories/${plain.id}`, { method: "PATCH", json: { report_check_runs: true } }), 409);
    expect(res.detail).toMatch(/GitHub App installation/);
    expect(await json(await bob.api(`/v1/repositories/${plain.id}`, { method: "PATCH", json: { report_check_runs: "yes" } }), 422)).toMatchObject({
      detail: [{ loc: ["body", "report_check_runs"], type: "bool_type" }],
    });
  });
});

describe("the syncer's other source", () => {
  it("still reports an analysis a webhook started, with a link to its dashboard view", async () => {
    const id = randomUUID();
    await svc.db
      .insertInto("analyses")
      .values({
        id,
        account_id: alice.accountId,
        repository_id: reporting,
        commit_hash: sha,
        branch: "main",
        language: "en",
        workflow_id: `codeplane/analysis-${id}`,
        status: "failed",
        status_rank: 2,
        error: "the analyzer ran out of memory",
        started_at: new Date(),
        completed_at: new Date(),
        updated_at: new Date(),
      })
      .execute();
    await trackCheckRun(svc.db, { analysisId: id, installationId: installation, repositoryFullName: "acme/app", headSha: sha });
    const c = await checkRunOf(id, (r) => r.status === "completed");
    expect(c).toMatchObject({
      name: "codeplane/analysis",
      conclusion: "failure",
      detailsUrl: `${PUBLIC_URL}/ui/#/repos/${reporting}/analysis/${sha}`,
      output: { title: "The analysis failed" },
    });
  }, 240_000);
});

// Last: it stops the service the other tests use.
describe("a run of a repository that reports check runs", () => {
  it("gets one check run, created while queued and completed once, across a restart", async () => {
    const id = await newRun("pending", {
      experiment_id: "train",
      run_config: JSON.stringify({ command: ["python", "train.py", "--lr", "0.1"], parameters: { lr: 0.1 }, timeout_seconds: 60 }),
    });
    const created = await checkRunOf(id, (c) => c.status === "queued");
    expect(created).toMatchObject({ name: "codeplane/run: train", headSha: sha, detailsUrl: `${PUBLIC_URL}/ui/#/runs/${id}` });

    // The run moves on and ends while no service is up; the next one catches GitHub up with where it is now.
    await svc.stop();
    const start = new Date(Date.now() - 20_000);
    await svc.db.updateTable("runs").set({ status: "running", start_time: start }).where("id", "=", id).execute();
    await svc.db
      .updateTable("runs")
      .set({ status: "completed", exit_code: 0, close_time: new Date(start.getTime() + 12_000), final_metrics: JSON.stringify({ loss: 0.25 }) })
      .where("id", "=", id)
      .execute();
    const next = await startTestService({ ...githubEnvFor(gh, PUBLIC_URL), DATABASE_URL: svc.databaseUrl, CODEPLANE_ENCRYPTION_KEY: svc.encryptionKey });
    try {
      const done = await checkRunOf(id, (c) => c.status === "completed");
      expect(done).toMatchObject({ conclusion: "success", startedAt: start.toISOString().replace(/\.\d+Z$/, "Z") });
      expect(done.output.title).toBe("The run completed in 12 s");
      expect(done.output.summary).toContain("| ` loss ` | ` 0.25 ` |");
      expect(done.history.map((h) => [h.action, h.state.status])).toEqual([
        ["created", "queued"],
        ["updated", "completed"],
      ]);
      expect(gh.checkRuns("acme/app").filter((c) => c.externalId === id)).toHaveLength(1);
      expect(await settledRow(id)).toMatchObject({ sent: "completed", attempts: 0, abandoned: false, last_error: null });
    } finally {
      await next.close();
    }
  }, 240_000);
});

describe("the GitHub double", () => {
  it("had nothing to object to", () => {
    expect(gh.violations).toEqual([]);
  });
});
