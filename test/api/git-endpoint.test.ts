import { execFile as execFileCb } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintCheckoutToken, revokeCheckoutTokens } from "../../src/domain/checkout/checkout-tokens.ts";
import { createFixtureRepo, type FixtureRepo } from "../helpers/git-fixture.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";

// codeplane's git endpoint, driven by the real git client the checkout
// container runs: a token opens one commit of one repository (and that
// commit's history), read-only, until it expires or is revoked. The service
// runs with its git and metrics listeners separate, as Helm installs it.

const execFile = promisify(execFileCb);

let svc: TestService;
let fixture: FixtureRepo;
let other: FixtureRepo;
let alice: Tenant;
let repoId: string;
let otherRepoId: string;
let gitBase: string;
const work: string[] = [];

/** A clean git environment, like the checkout container's: no user config, no prompts. */
const gitEnv = (extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: "/nonexistent",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_TERMINAL_PROMPT: "0",
  ...extra,
});

const bearer = (token: string) => ({ GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: "http.extraHeader", GIT_CONFIG_VALUE_0: `Authorization: Bearer ${token}` });

/** What the checkout container does: init, add the remote, fetch one commit shallow, check it out. */
async function checkout(url: string, commit: string, env: Record<string, string>, opts: { depth?: boolean; protocol?: 0 | 2 } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), "codeplane-checkout-"));
  work.push(dir);
  const git = (...args: string[]) => execFile("git", args, { cwd: dir, env: gitEnv(env) });
  await git("init", "-q");
  await git("remote", "add", "origin", url);
  try {
    await git("-c", `protocol.version=${opts.protocol ?? 2}`, "fetch", "-q", ...(opts.depth === false ? [] : ["--depth", "1"]), "origin", commit);
    await git("-c", "advice.detachedHead=false", "checkout", "-q", "--detach", commit);
    return { ok: true as const, dir, stderr: "" };
  } catch (err) {
    return { ok: false as const, dir, stderr: String((err as { stderr?: string }).stderr ?? err) };
  }
}

const token = (repositoryId: string, commitHash: string, expiresInMs = 600_000) =>
  mintCheckoutToken(svc.db, {
    workloadKind: "run",
    workloadId: crypto.randomUUID(),
    accountId: alice.accountId,
    repositoryId,
    commitHash,
    expiresAt: new Date(Date.now() + expiresInMs),
  });

beforeAll(async () => {
  svc = await startTestService({ CODEPLANE_GIT_PORT: "0", CODEPLANE_METRICS_PORT: "0" });
  fixture = await createFixtureRepo();
  other = await createFixtureRepo();
  alice = await svc.tenant();
  const register = async (url: string, name: string) => {
    const res = await alice.api("/v1/repositories", { method: "POST", json: { url, name } });
    expect(res.status).toBe(201);
    return (await res.json()).id as string;
  };
  repoId = await register(fixture.url, "fixture");
  otherRepoId = await register(other.url, "other");
  gitBase = `http://127.0.0.1:${svc.service.gitPort}`;
});

afterAll(async () => {
  for (const d of work) rmSync(d, { recursive: true, force: true });
  await svc?.close();
  await fixture?.cleanup();
  await other?.cleanup();
});

describe("the git endpoint", () => {
  it("serves the token's commit to a shallow fetch, over protocol v2 and v0 alike, and nothing lands in .git/config", async () => {
    const t = await token(repoId, fixture.commits.main);
    for (const protocol of [2, 0] as const) {
      const res = await checkout(`${gitBase}/git/${repoId}.git`, fixture.commits.main, bearer(t), { protocol });
      expect(res.stderr).toBe("");
      expect(readFileSync(path.join(res.dir, "README.md"), "utf8")).toBe(readFileSync(path.join(res.dir, "README.md"), "utf8"));
      expect(existsSync(path.join(res.dir, "README.md"))).toBe(true);
      expect(readFileSync(path.join(res.dir, ".git", "config"), "utf8")).not.toContain(t);
    }
  });

  it("takes the token as the password of HTTP Basic too (what git sends after a 401)", async () => {
    const t = await token(repoId, fixture.commits.main);
    const basic = Buffer.from(`x:${t}`).toString("base64");
    const res = await checkout(`${gitBase}/git/${repoId}.git`, fixture.commits.main, {
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: "http.extraHeader",
      GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
    });
    expect(res.ok).toBe(true);
  });

  it("serves the commit's history (a full fetch) but no commit outside it", async () => {
    const t = await token(repoId, fixture.commits.main);
    const full = await checkout(`${gitBase}/git/${repoId}.git`, fixture.commits.main, bearer(t), { depth: false });
    expect(full.stderr).toBe("");
    const log = await execFile("git", ["log", "--format=%H", "HEAD"], { cwd: full.dir, env: gitEnv() });
    expect(log.stdout).toContain(fixture.commits.initial);
    for (const protocol of [2, 0] as const) {
      const feature = await checkout(`${gitBase}/git/${repoId}.git`, fixture.commits.feature, bearer(t), { protocol });
      expect(feature.ok, `protocol ${protocol}`).toBe(false);
      expect(existsSync(path.join(feature.dir, "feature.txt"))).toBe(false);
    }
    // Only the granted commit is advertised, under one ref: no branch or tag name leaks.
    const refs = await execFile("git", ["ls-remote", `${gitBase}/git/${repoId}.git`], { env: gitEnv(bearer(t)) });
    expect(refs.stdout.trim().split("\n")).toEqual([`${fixture.commits.main}\tHEAD`, `${fixture.commits.main}\trefs/heads/codeplane`]);
  });

  it("refuses a missing, unknown, expired or revoked token with 401 and a Basic challenge", async () => {
    const url = `${gitBase}/git/${repoId}.git/info/refs?service=git-upload-pack`;
    const none = await fetch(url);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Basic realm="codeplane git"/);
    expect(await none.json()).toEqual({ detail: "A valid checkout token is required" });

    const unknown = await fetch(url, { headers: { authorization: `Bearer cpg_${"A".repeat(43)}` } });
    expect(unknown.status).toBe(401);

    const expiring = await token(repoId, fixture.commits.main, 1_500);
    expect((await fetch(url, { headers: { authorization: `Bearer ${expiring}` } })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1_600));
    expect((await fetch(url, { headers: { authorization: `Bearer ${expiring}` } })).status).toBe(401);

    const workloadId = crypto.randomUUID();
    const revoked = await mintCheckoutToken(svc.db, {
      workloadKind: "analysis",
      workloadId,
      accountId: alice.accountId,
      repositoryId: repoId,
      commitHash: fixture.commits.main,
      expiresAt: new Date(Date.now() + 600_000),
    });
    expect((await fetch(url, { headers: { authorization: `Bearer ${revoked}` } })).status).toBe(200);
    expect(await revokeCheckoutTokens(svc.db, "analysis", workloadId)).toBe(1);
    expect((await fetch(url, { headers: { authorization: `Bearer ${revoked}` } })).status).toBe(401);
    const res = await checkout(`${gitBase}/git/${repoId}.git`, fixture.commits.main, bearer(revoked));
    expect(res.ok).toBe(false);
    expect(res.stderr).toMatch(/401|Authentication failed|could not read Username/);
  });

  it("answers 404 for another repository than the token's, whether it exists or not", async () => {
    const t = await token(repoId, fixture.commits.main);
    for (const id of [otherRepoId, crypto.randomUUID(), "not-a-uuid"]) {
      const res = await fetch(`${gitBase}/git/${id}.git/info/refs?service=git-upload-pack`, { headers: { authorization: `Bearer ${t}` } });
      expect(res.status, id).toBe(404);
    }
    const clone = await checkout(`${gitBase}/git/${otherRepoId}.git`, other.commits.main, bearer(t));
    expect(clone.ok).toBe(false);
  });

  it("is read-only: push and the receive-pack service are refused with 403", async () => {
    const t = await token(repoId, fixture.commits.main);
    const adv = await fetch(`${gitBase}/git/${repoId}.git/info/refs?service=git-receive-pack`, { headers: { authorization: `Bearer ${t}` } });
    expect(adv.status).toBe(403);
    const post = await fetch(`${gitBase}/git/${repoId}.git/git-receive-pack`, {
      method: "POST",
      headers: { authorization: `Bearer ${t}`, "content-type": "application/x-git-receive-pack-request" },
      body: "0000",
    });
    expect(post.status).toBe(403);
    const cloned = await checkout(`${gitBase}/git/${repoId}.git`, fixture.commits.main, bearer(t));
    const push = await execFile("git", ["push", "origin", "HEAD:refs/heads/evil"], { cwd: cloned.dir, env: gitEnv(bearer(t)) }).catch(
      (e: { stderr: string }) => e,
    );
    expect("stderr" in push && push.stderr).toMatch(/403|read-only/);
  });

  it("refuses what is not a git client's request: dumb HTTP, a wrong content type, a corrupt gzip body", async () => {
    const t = await token(repoId, fixture.commits.main);
    const auth = { authorization: `Bearer ${t}` };
    expect((await fetch(`${gitBase}/git/${repoId}.git/info/refs`, { headers: auth })).status).toBe(403);
    const wrongType = await fetch(`${gitBase}/git/${repoId}.git/git-upload-pack`, {
      method: "POST",
      headers: { ...auth, "content-type": "text/plain" },
      body: "0000",
    });
    expect(wrongType.status).toBe(415);
    const corrupt = await fetch(`${gitBase}/git/${repoId}.git/git-upload-pack`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/x-git-upload-pack-request", "content-encoding": "gzip" },
      body: "this is not gzip",
    });
    // Either refused or cut short; the service stays up and keeps serving.
    await corrupt.arrayBuffer().catch(() => undefined);
    expect((await fetch(`${gitBase}/healthz`)).status).toBe(200);
    expect((await checkout(`${gitBase}/git/${repoId}.git`, fixture.commits.main, bearer(t))).ok).toBe(true);
  });

  it("the git listener serves /git/ and nothing else of the API; the main listener serves /git/ too", async () => {
    for (const p of ["/v1/repositories", "/metrics", "/openapi.json", "/readyz"]) {
      expect((await fetch(`${gitBase}${p}`, { headers: { authorization: `Bearer ${alice.key}` } })).status, p).toBe(404);
    }
    const t = await token(repoId, fixture.commits.main);
    expect((await checkout(`${svc.url}/git/${repoId}.git`, fixture.commits.main, bearer(t))).ok).toBe(true);
  });

  it("/metrics is served on the metrics listener only", async () => {
    expect((await fetch(`${svc.url}/metrics`)).status).toBe(404);
    const metrics = await fetch(`http://127.0.0.1:${svc.service.metricsPort}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain("codeplane_http_requests_total");
  });

  it("never writes a token to its logs", async () => {
    const t = await token(repoId, fixture.commits.main);
    await checkout(`${gitBase}/git/${repoId}.git`, fixture.commits.main, bearer(t));
    await fetch(`${gitBase}/git/${otherRepoId}.git/info/refs?service=git-upload-pack`, { headers: { authorization: `Bearer ${t}` } });
    expect(svc.logs.join("\n")).not.toContain(t.slice(4));
  });
});
