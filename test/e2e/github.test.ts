// The GitHub App end to end on the local cluster, against the GitHub double
// (GitHub's REST API as an Enterprise Server on loopback, validated against
// GitHub's OpenAPI description; git behind installation tokens): connect an
// installation through the setup callback, register a private repository,
// push, and the push's analysis runs from codeplane's mirror (the pod never
// sees a GitHub token) and reports to a check run on the head commit.
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGitHubDouble, type GitHubDouble } from "../helpers/github-double/index.ts";
import { githubEnvFor } from "../helpers/github-env.ts";
import { gitListenerEnv, openTestCluster, type TestCluster } from "../helpers/cluster.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";
import { until } from "../helpers/until.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
const PUBLIC_URL = "https://codeplane.example.test";
const FILES = {
  "README.md": "# Tiny trainer\n\nTrains a tiny model.\n",
  "train.py": [
    "import argparse",
    "import os",
    "",
    'token = os.environ["API_TOKEN"]',
    "",
    'if __name__ == "__main__":',
    '    p = argparse.ArgumentParser(description="Train it")',
    '    p.add_argument("--epochs", type=int, default=3, help="passes over the data")',
    '    p.add_argument("--lr", type=float, default=0.1)',
    "    print(p.parse_args())",
    "",
  ].join("\n"),
};

let gh: GitHubDouble;
let cluster: TestCluster;
let svc: TestService;
let alice: Tenant;
let installationId: number;
let integrationId: string;
let repositoryId: string;
const FULL_NAME = "acme/trainer";

const githubEnv = () => githubEnvFor(gh, PUBLIC_URL, { CODEPLANE_WEBHOOK_LEASE_SECONDS: "5" });

const hook = () => `${svc.url}/v1/webhooks/github`;
const delivery = (id: string) => svc.db.selectFrom("github_webhook_deliveries").selectAll().where("id", "=", id).executeTakeFirst();
const settled = (id: string, timeoutMs = 60_000) =>
  until(`delivery ${id} to be handled`, timeoutMs, async () => {
    const d = await delivery(id);
    return d && d.status !== "queued" && d.status !== "processing" ? d : undefined;
  });
const analysisOf = async (sha: string) => (await alice.api(`/v1/repositories/${repositoryId}/analysis/${sha}`)).json();
const finished = (sha: string) =>
  until(`the analysis of ${sha} to finish`, 240_000, async () => {
    const a = await analysisOf(sha);
    return ["completed", "failed", "cancelled"].includes(a.status) ? a : undefined;
  });
const completedCheckRun = (sha: string) =>
  until(`the check run on ${sha} to complete`, 60_000, async () => gh.checkRuns(FULL_NAME).find((c) => c.headSha === sha && c.status === "completed"));

beforeAll(async () => {
  gh = await startGitHubDouble({ appSlug: "codeplane-e2e" });
  cluster = await openTestCluster("gh");
  svc = await startTestService({
    KUBECONFIG: cluster.kubeconfig,
    CODEPLANE_NAMESPACE: cluster.namespace,
    CODEPLANE_IMAGE_PULL_POLICY: "Never",
    ...gitListenerEnv(),
    ...githubEnv(),
  });
  alice = await svc.tenant();
  installationId = gh.addInstallation({ account: { login: "acme", type: "Organization" }, repositorySelection: "selected" }).id;
  await gh.addRepository({ owner: "acme", name: "trainer", private: true, files: FILES, installationId });
}, 120_000);

afterAll(async () => {
  await svc?.close();
  await cluster?.cleanup();
  await gh?.close();
});

describe("a GitHub App installation", () => {
  it("is connected through the setup callback and registers a private repository of it", async () => {
    const { install_url } = await (await alice.api("/v1/integrations/github/install")).json();
    const state = new URL(install_url).searchParams.get("state")!;
    const callback = await fetch(
      `${svc.url}/v1/integrations/github/callback?installation_id=${installationId}&setup_action=install&state=${encodeURIComponent(state)}`,
      { redirect: "manual" },
    );
    expect(callback.status, await callback.clone().text()).toBe(302);
    integrationId = callback.headers.get("location")!.split("/").pop()!;
    const listed = await (await alice.api(`/v1/integrations/${integrationId}/repositories`)).json();
    expect(listed.items.map((r: { full_name: string }) => r.full_name)).toContain(FULL_NAME);
    const registered = await alice.api(`/v1/integrations/${integrationId}/repositories`, {
      method: "POST",
      json: { full_name: FULL_NAME, auto_analyze: true },
    });
    expect(registered.status, await registered.clone().text()).toBe(201);
    const repo = await registered.json();
    expect(repo).toMatchObject({ provider: "github", integration_id: integrationId, auto_analyze: true });
    repositoryId = repo.id;
  });

  let sha: string;
  it("analyses a push from the mirror, and reports it to a check run: queued, in progress, completed with the summary", async () => {
    sha = await gh.push(FULL_NAME, { "notes.txt": "a push\n" }, { message: "a push" });
    const res = await gh.deliver(hook(), "push", { installationId, repository: FULL_NAME, sha, ref: "refs/heads/main" });
    expect(res.status).toBe(202);
    const deliveryId = (await res.json()).id as string;
    expect((await settled(deliveryId)).status).toBe("handled");
    const analysis = await finished(sha);
    expect(analysis).toMatchObject({ status: "completed", commit_hash: sha, branch: "main", trigger: { kind: "push", delivery_id: deliveryId } });
    expect(analysis.experiments.map((e: { id: string }) => e.id)).toContain("python:train.py");

    const run = await completedCheckRun(sha);
    expect(run).toMatchObject({
      name: "codeplane/analysis",
      conclusion: "success",
      externalId: analysis.id,
      detailsUrl: `${PUBLIC_URL}/ui/#/repos/${repositoryId}/analysis/${sha}`,
    });
    expect(run.history.map((h) => h.state.status)).toEqual(["queued", "in_progress", "completed"]);
    expect(run.output.summary).toContain("python3 train.py");
    expect(run.output.summary).toContain("| ` --epochs ` | ` 3 ` | integer |");
    expect(run.output.summary).toContain("API_TOKEN");
    expect(run.output.title).toMatch(/1 environment variable missing/);
  });

  it("never puts a GitHub token in a pod, a Secret or a resource", async () => {
    expect(gh.issuedTokens.length).toBeGreaterThan(0);
    const dumps = JSON.stringify([
      await cluster.core.listNamespacedPod({ namespace: cluster.namespace }),
      await cluster.core.listNamespacedSecret({ namespace: cluster.namespace }),
      await cluster.custom.listNamespacedCustomObject({ group: "codeplane.dev", version: "v1alpha1", namespace: cluster.namespace, plural: "analyses" }),
      await cluster.batch.listNamespacedJob({ namespace: cluster.namespace }),
    ]);
    for (const token of gh.issuedTokens) expect(dumps.includes(token)).toBe(false);
    expect(svc.logs.some((l) => gh.issuedTokens.some((t) => l.includes(t)))).toBe(false);
  });

  it("does not analyse a commit twice: a pull request on the pushed head finds the push's analysis and check run", async () => {
    const res = await gh.deliver(hook(), "pull_request", { action: "synchronize", installationId, repository: FULL_NAME, sha });
    expect(res.status).toBe(202);
    const d = await settled((await res.json()).id);
    expect(d.reason).toMatch(/^already had analysis/);
    expect(
      (await (await alice.api(`/v1/repositories/${repositoryId}/analysis`)).json()).items.filter((a: { commit_hash: string }) => a.commit_hash === sha),
    ).toHaveLength(1);
    expect(gh.checkRuns(FULL_NAME).filter((c) => c.headSha === sha)).toHaveLength(1);
  });

  it("refuses a forged delivery with 401 and records nothing; ignores a replayed one", async () => {
    const forgedId = randomUUID();
    const forged = await gh.deliver(hook(), "push", {
      installationId,
      repository: FULL_NAME,
      sha,
      ref: "refs/heads/main",
      secret: "not-the-secret",
      deliveryId: forgedId,
    });
    expect(forged.status).toBe(401);
    expect(await delivery(forgedId)).toBeUndefined();
    const id = randomUUID();
    expect((await gh.deliver(hook(), "ping", { installationId, deliveryId: id })).status).toBe(202);
    await settled(id);
    const replay = await gh.deliver(hook(), "ping", { installationId, deliveryId: id });
    expect(replay.status).toBe(200);
    expect((await delivery(id))!.attempts).toBe(1);
  });

  it("handles, once, a delivery whose replica was killed between accepting it and finishing it", async () => {
    const next = await gh.push(FULL_NAME, { "notes.txt": "another push\n" }, { message: "another" });
    // The killed replica is a process of its own; its fetch hangs on GitHub (the token request stalls), so it dies mid-handling.
    gh.stallNext("POST", /\/access_tokens$/, 120_000);
    // And GitHub fails the check run's creation once: it is retried, the analysis never waits for it.
    gh.failNext("POST", /\/check-runs$/, 502);
    const replica = await startReplica();
    try {
      const res = await gh.deliver(`${replica.url}/v1/webhooks/github`, "push", { installationId, repository: FULL_NAME, sha: next, ref: "refs/heads/main" });
      expect(res.status).toBe(202);
      const id = (await res.json()).id as string;
      await until("the replica to claim the delivery", 10_000, async () => (await delivery(id))?.status === "processing");
      replica.process.kill("SIGKILL");
      const d = await settled(id, 90_000);
      expect(d).toMatchObject({ status: "handled", attempts: 2 });
      const analysis = await finished(next);
      expect(analysis).toMatchObject({ status: "completed", trigger: { kind: "push", delivery_id: id } });
      await completedCheckRun(next);
      expect(gh.checkRuns(FULL_NAME).filter((c) => c.headSha === next)).toHaveLength(1);
    } finally {
      replica.process.kill("SIGKILL");
    }
  });

  it("a deleted installation stops fetches; an analysis under way still completes, and its check run is given up on with the reason", async () => {
    const last = await gh.push(FULL_NAME, { "notes.txt": "last push\n" }, { message: "last" });
    const res = await gh.deliver(hook(), "push", { installationId, repository: FULL_NAME, sha: last, ref: "refs/heads/main" });
    await settled((await res.json()).id);
    const analysisId = (await analysisOf(last)).id as string;
    // Uninstalled on GitHub: its tokens are revoked at once, then the webhook comes.
    gh.deleteInstallation(installationId);
    const uninstalled = await gh.deliver(hook(), "installation", { action: "deleted", installationId });
    expect((await settled((await uninstalled.json()).id)).status).toBe("handled");
    expect((await finished(last)).status).toBe("completed");
    const record = await svc.db.selectFrom("github_check_runs").selectAll().where("analysis_id", "=", analysisId).executeTakeFirstOrThrow();
    expect(record).toMatchObject({ abandoned: true, last_error: expect.stringMatching(/installation was deleted/) });
    // Disconnected: the repository stays readable as of its last fetch and is not fetched again.
    const repo = await (await alice.api(`/v1/repositories/${repositoryId}`)).json();
    expect(repo).toMatchObject({ integration_id: null, auto_analyze: false });
    const before = gh.requests.length;
    const files = await alice.api(`/v1/repositories/${repositoryId}/files?ref=${last}`);
    expect(files.status, await files.clone().text()).toBe(200);
    expect(gh.requests.slice(before)).toEqual([]);
  });

  it("sent GitHub only requests its OpenAPI description allows", () => {
    expect(gh.violations).toEqual([]);
  });
});

/** Another API replica as a process of its own (so it can be SIGKILLed), on the same database. */
async function startReplica(): Promise<{ url: string; process: ChildProcess }> {
  const child = spawn(process.execPath, [path.join(ROOT, "src/main.ts"), "serve"], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: svc.databaseUrl,
      CODEPLANE_ENCRYPTION_KEY: svc.encryptionKey,
      CODEPLANE_DATA_DIR: path.join(ROOT, ".cluster", `replica-${randomUUID().slice(0, 8)}`),
      PORT: "0",
      CODEPLANE_HOST: "127.0.0.1",
      CODEPLANE_COMPONENTS: "api",
      CODEPLANE_ALLOW_LOCAL_REPOSITORIES: "true",
      CODEPLANE_MIGRATE_ON_START: "false",
      CODEPLANE_LOG_LEVEL: "info",
      KUBECONFIG: cluster.kubeconfig,
      CODEPLANE_NAMESPACE: cluster.namespace,
      ...githubEnv(),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`the replica did not start: ${out}`)), 30_000);
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString();
      const m = /"port":(\d+)[^\n]*"codeplane is serving"|"msg":"codeplane is serving"[^\n]*"port":(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(`http://127.0.0.1:${m[1] ?? m[2]}`);
      }
    });
    child.stderr.on("data", (b: Buffer) => void (out += b.toString()));
    child.on("exit", (code) => reject(new Error(`the replica exited (${code}): ${out}`)));
  });
  return { url, process: child };
}
