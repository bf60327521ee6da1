import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { App } from "@octokit/app";
import { Octokit } from "@octokit/core";
import { Webhooks } from "@octokit/webhooks";
import { createSign, generateKeyPairSync } from "node:crypto";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGitHubDouble, type GitHubDouble } from "../helpers/github-double/index.ts";

// The GitHub double checked with the client the service uses (@octokit/app):
// its authentication, tokens, pagination, check runs, git endpoint and
// webhooks behave as GitHub's do, everything it received and sent matched
// GitHub's OpenAPI description, and that validation can fail.

const execFileP = promisify(execFile);

let gh: GitHubDouble;
let app: App;
let work: string;
let orgInstallation: number;
let userInstallation: number;
let privateRepo: { fullName: string; cloneUrl: string; headSha: string };
let publicRepo: { fullName: string; cloneUrl: string };

const appFor = (privateKey: string, appId = gh.appId) =>
  new App({
    appId,
    privateKey,
    webhooks: { secret: gh.webhookSecret },
    Octokit: Octokit.defaults({ baseUrl: gh.apiUrl }),
    log: { debug() {}, info() {}, warn() {}, error() {} },
  });

/** `git clone` with no configuration but what is given, never prompting. */
async function clone(url: string, extra: string[] = []): Promise<{ ok: boolean; stderr: string; dir: string }> {
  const dir = await mkdtemp(join(work, "clone-"));
  try {
    await execFileP("git", [...extra, "clone", "--quiet", url, dir], {
      env: { PATH: process.env.PATH, HOME: work, GIT_CONFIG_NOSYSTEM: "1", GIT_TERMINAL_PROMPT: "0", GIT_ASKPASS: "/bin/false", LANG: "C" },
    });
    return { ok: true, stderr: "", dir };
  } catch (err) {
    return { ok: false, stderr: String((err as { stderr?: string }).stderr ?? err), dir };
  }
}

const basic = (token: string) => ["-c", `http.extraHeader=Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "github-double-test-"));
  gh = await startGitHubDouble({ appSlug: "codeplane-ci" });
  app = appFor(gh.privateKey);
  orgInstallation = gh.addInstallation({ account: { login: "acme", type: "Organization" }, repositorySelection: "selected" }).id;
  userInstallation = gh.addInstallation({ account: { login: "octo-user", type: "User" }, repositorySelection: "all" }).id;
  privateRepo = await gh.addRepository({
    owner: "acme",
    name: "secret-sauce",
    private: true,
    files: { "README.md": "# secret\n", "src/main.py": "print('hi')\n" },
    installationId: orgInstallation,
  });
  publicRepo = await gh.addRepository({ owner: "octo-user", name: "open-book", private: false, files: { "README.md": "# open\n" } });
});

afterAll(async () => {
  await gh?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe("the GitHub double", () => {
  it("authenticates the App by its JWT and refuses one signed with another key", async () => {
    const { data, headers } = await app.octokit.request("GET /app");
    expect(data).toMatchObject({ id: gh.appId, slug: "codeplane-ci" });
    expect(headers["x-github-enterprise-version"]).toMatch(/^3\.\d+/);

    const { privateKey: otherKey } = generateKeyPairSync("rsa", {
      modulusLength: 2048,
      privateKeyEncoding: { type: "pkcs1", format: "pem" },
      publicKeyEncoding: { type: "spki", format: "pem" },
    });
    const err = await appFor(otherKey)
      .octokit.request("GET /app")
      .catch((e: { status: number; response: { data: unknown } }) => e);
    expect(err).toMatchObject({ status: 401, response: { data: { message: "A JSON web token could not be decoded" } } });

    const none = await fetch(`${gh.apiUrl}/app`);
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ message: expect.any(String), documentation_url: expect.stringMatching(/^https:\/\/docs\.github\.com\//) });
    expect(gh.requests.at(-1)).toMatchObject({ method: "GET", path: "/api/v3/app", status: 401, auth: "none" });
  });

  it("mints installation tokens that expire in an hour and reads installations", async () => {
    const before = gh.tokensIssued();
    const { data } = await app.octokit.request("POST /app/installations/{installation_id}/access_tokens", { installation_id: orgInstallation });
    expect(data.token).toMatch(/^ghs_[A-Za-z0-9]{36}$/);
    const ttl = Date.parse(data.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(59 * 60_000);
    expect(ttl).toBeLessThanOrEqual(60 * 60_000);
    expect(data.permissions).toMatchObject({ checks: "write", contents: "read" });
    expect(gh.tokensIssued()).toBe(before + 1);

    const inst = await app.octokit.request("GET /app/installations/{installation_id}", { installation_id: orgInstallation });
    expect(inst.data).toMatchObject({ id: orgInstallation, app_id: gh.appId, target_type: "Organization", suspended_at: null });
    expect(inst.data.account).toMatchObject({ login: "acme" });

    // A token scoped to a repository the installation cannot see is refused.
    const refused = await app.octokit
      .request("POST /app/installations/{installation_id}/access_tokens", { installation_id: orgInstallation, repositories: ["open-book"] })
      .catch((e: { status: number }) => e);
    expect(refused).toMatchObject({ status: 422 });
  });

  it("paginates the installation's repositories with Link headers", async () => {
    for (let i = 0; i < 5; i++)
      await gh.addRepository({ owner: "acme", name: `repo-${i}`, private: i % 2 === 0, files: { "a.txt": `${i}\n` }, installationId: orgInstallation });
    const octokit = await app.getInstallationOctokit(orgInstallation);
    const first = await octokit.request("GET /installation/repositories", { per_page: 2 });
    expect(first.data.total_count).toBe(6);
    expect(first.data.repositories.map((r) => r.full_name)).toEqual(["acme/secret-sauce", "acme/repo-0"]);
    expect(first.headers.link).toContain('rel="next"');
    expect(first.headers.link).toContain('rel="last"');

    // Follow the Link header to the end, as Octokit's paginate does.
    const names: string[] = [];
    let next: string | undefined = `${gh.apiUrl}/installation/repositories?per_page=2`;
    while (next) {
      const page: { data: unknown; headers: { link?: string } } = await octokit.request(`GET ${next}`);
      names.push(...(page.data as { repositories: { full_name: string }[] }).repositories.map((r) => r.full_name));
      next = /<([^>]+)>; rel="next"/.exec(page.headers.link ?? "")?.[1];
    }
    expect(names).toEqual(["acme/secret-sauce", ...[0, 1, 2, 3, 4].map((i) => `acme/repo-${i}`)]);
    const third = await octokit.request("GET /installation/repositories", { per_page: 2, page: 3 });
    expect(third.headers.link).toContain('rel="prev"');
    expect(third.headers.link).not.toContain('rel="next"');

    // @octokit/app's own iteration over every installation's repositories.
    const all: string[] = [];
    for await (const { repository } of app.eachRepository.iterator()) all.push(repository.full_name);
    expect(all).toEqual(expect.arrayContaining([...names, publicRepo.fullName]));
  });

  it("creates and updates check runs with GitHub's rules and keeps their history", async () => {
    const octokit = await app.getInstallationOctokit(orgInstallation);
    const [owner, repo] = privateRepo.fullName.split("/") as [string, string];
    const created = await octokit.request("POST /repos/{owner}/{repo}/check-runs", { owner, repo, name: "codeplane/analysis", head_sha: privateRepo.headSha });
    expect(created.status).toBe(201);
    expect(created.data).toMatchObject({ status: "queued", conclusion: null, head_sha: privateRepo.headSha });
    const id = created.data.id;
    await octokit.request("PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}", { owner, repo, check_run_id: id, status: "in_progress" });

    const broken = await octokit
      .request("PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}", { owner, repo, check_run_id: id, status: "completed" })
      .catch((e: { status: number; response: { data: { message: string } } }) => e);
    expect(broken).toMatchObject({ status: 422 });
    // That request broke GitHub's description (conclusion is required with completed): recorded, then cleared.
    expect(gh.takeViolations()).toEqual([expect.stringMatching(/^request PATCH .*check-runs.*required property 'conclusion'/)]);
    const brokenCreate = await octokit
      .request("POST /repos/{owner}/{repo}/check-runs", { owner, repo, name: "x", head_sha: privateRepo.headSha, status: "completed" })
      .catch((e: { status: number }) => e);
    expect(brokenCreate).toMatchObject({ status: 422 });
    const tooLong = await octokit
      .request("PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}", { owner, repo, check_run_id: id, output: { title: "t", summary: "x".repeat(65536) } })
      .catch((e: { status: number }) => e);
    expect(tooLong).toMatchObject({ status: 422 });
    expect(gh.takeViolations()).toEqual([expect.stringMatching(/summary must NOT have more than 65535 characters/)]);
    const unknownSha = await octokit
      .request("POST /repos/{owner}/{repo}/check-runs", { owner, repo, name: "x", head_sha: "f".repeat(40) })
      .catch((e: { status: number }) => e);
    expect(unknownSha).toMatchObject({ status: 422 });

    const done = await octokit.request("PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}", {
      owner,
      repo,
      check_run_id: id,
      conclusion: "success",
      details_url: "http://127.0.0.1:9/analyses/1",
      output: { title: "1 experiment", summary: "x".repeat(65535) },
    });
    expect(done.data).toMatchObject({ status: "completed", conclusion: "success" });

    const [record] = gh.checkRuns(privateRepo.fullName);
    expect(record!.history.map((h) => [h.action, h.state.status, h.state.conclusion])).toEqual([
      ["created", "queued", null],
      ["updated", "in_progress", null],
      ["updated", "completed", "success"],
    ]);
    expect(record!.output.summary).toHaveLength(65535);

    const listed = await octokit.request("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", { owner, repo, ref: "main" });
    expect(listed.data.check_runs.map((c) => c.id)).toEqual([id]);

    // An injected failure answers once, then the double is itself again.
    gh.failNext("PATCH", /\/check-runs\/\d+$/, 502);
    const failed = await octokit
      .request("PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}", { owner, repo, check_run_id: id, name: "renamed" })
      .catch((e: { status: number }) => e);
    expect(failed).toMatchObject({ status: 502 });
    await octokit.request("PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}", { owner, repo, check_run_id: id, name: "codeplane/analysis" });

    // Another installation cannot see the private repository at all.
    const stranger = await app.getInstallationOctokit(userInstallation);
    const hidden = await stranger
      .request("POST /repos/{owner}/{repo}/check-runs", { owner, repo, name: "x", head_sha: privateRepo.headSha })
      .catch((e: { status: number }) => e);
    expect(hidden).toMatchObject({ status: 404 });
  });

  it("answers 403 to a suspended installation's token request and 404 for a deleted one", async () => {
    const inst = gh.addInstallation({ account: { login: "paused-org", type: "Organization" } }).id;
    gh.suspend(inst);
    const suspended = await app.octokit
      .request("POST /app/installations/{installation_id}/access_tokens", { installation_id: inst })
      .catch((e: { status: number }) => e);
    expect(suspended).toMatchObject({ status: 403 });
    const info = await app.octokit.request("GET /app/installations/{installation_id}", { installation_id: inst });
    expect(info.data.suspended_at).toEqual(expect.any(String));
    gh.unsuspend(inst);
    await app.octokit.request("POST /app/installations/{installation_id}/access_tokens", { installation_id: inst });

    gh.deleteInstallation(inst);
    const gone = await app.octokit.request("GET /app/installations/{installation_id}", { installation_id: inst }).catch((e: { status: number }) => e);
    expect(gone).toMatchObject({ status: 404 });
    const noToken = await app.octokit
      .request("POST /app/installations/{installation_id}/access_tokens", { installation_id: inst })
      .catch((e: { status: number }) => e);
    expect(noToken).toMatchObject({ status: 404 });
    expect(
      await app.octokit.request("GET /app/installations/{installation_id}", { installation_id: 999_999_999 }).catch((e: { status: number }) => e),
    ).toMatchObject({
      status: 404,
    });
  });

  it("gates git clones with installation tokens", async () => {
    const anonymous = await clone(privateRepo.cloneUrl);
    expect(anonymous.ok).toBe(false);
    const probe = await fetch(`${privateRepo.cloneUrl}/info/refs?service=git-upload-pack`);
    expect(probe.status).toBe(401);
    expect(probe.headers.get("www-authenticate")).toBe('Basic realm="GitHub"');

    const octokit = await app.getInstallationOctokit(orgInstallation);
    const { token } = (await octokit.auth({ type: "installation" })) as { token: string };
    const withToken = await clone(privateRepo.cloneUrl, basic(token));
    expect(withToken.stderr).toBe("");
    expect(await readFile(join(withToken.dir, "src/main.py"), "utf8")).toBe("print('hi')\n");

    const sha = await gh.push(privateRepo.fullName, { "src/main.py": "print('hello')\n" }, { message: "Say hello" });
    const fetched = await execFileP("git", [...basic(token), "-C", withToken.dir, "pull", "--quiet", "--ff-only"], {
      env: { PATH: process.env.PATH, HOME: work, GIT_TERMINAL_PROMPT: "0" },
    });
    expect(fetched.stderr).toBe("");
    expect((await execFileP("git", ["-C", withToken.dir, "rev-parse", "HEAD"])).stdout.trim()).toBe(sha);

    // Read-only: pushing back is refused.
    const pushed = await execFileP("git", [...basic(token), "-C", withToken.dir, "push", "--quiet", "origin", "HEAD:refs/heads/other"], {
      env: { PATH: process.env.PATH, HOME: work, GIT_TERMINAL_PROMPT: "0" },
    }).catch((e: Error) => e);
    expect(pushed).toBeInstanceOf(Error);

    // A token of an installation that cannot see the repository does not clone it.
    const stranger = (await (await app.getInstallationOctokit(userInstallation)).auth({ type: "installation" })) as { token: string };
    expect((await clone(privateRepo.cloneUrl, basic(stranger.token))).ok).toBe(false);

    const open = await clone(publicRepo.cloneUrl);
    expect(open.stderr).toBe("");
    expect(await readFile(join(open.dir, "README.md"), "utf8")).toBe("# open\n");

    gh.expireTokens();
    const expired = await clone(privateRepo.cloneUrl, basic(token));
    expect(expired.ok).toBe(false);
    const api = await fetch(`${gh.apiUrl}/installation/repositories`, { headers: { authorization: `token ${token}` } });
    expect(api.status).toBe(401);
    expect(gh.requests.some((r) => r.path.startsWith(`/${privateRepo.fullName}.git/`) && r.status === 200 && r.auth === "installation")).toBe(true);
  });

  it("builds webhooks from GitHub's examples that Octokit verifies", async () => {
    const sha = await gh.push(privateRepo.fullName, { "NEW.md": "new\n" }, { message: "Add NEW.md" });
    const delivery = gh.webhook("push", { repository: privateRepo.fullName });
    const payload = JSON.parse(delivery.body);
    expect(payload).toMatchObject({
      ref: "refs/heads/main",
      after: sha,
      installation: { id: orgInstallation },
      repository: { full_name: privateRepo.fullName, private: true },
    });
    expect(payload.commits[0]).toMatchObject({ id: sha, message: "Add NEW.md", added: ["NEW.md"] });
    expect(delivery.headers).toMatchObject({
      "x-github-event": "push",
      "content-type": "application/json",
      "user-agent": expect.stringMatching(/^GitHub-Hookshot\//),
    });
    expect(delivery.headers["x-github-delivery"]).toMatch(/^[0-9a-f-]{36}$/);

    const webhooks = new Webhooks({ secret: gh.webhookSecret });
    expect(await webhooks.verify(delivery.body, delivery.headers["x-hub-signature-256"]!)).toBe(true);
    const forged = gh.webhook("push", { repository: privateRepo.fullName, secret: "not-the-secret" });
    expect(await webhooks.verify(forged.body, forged.headers["x-hub-signature-256"]!)).toBe(false);
    expect(await app.webhooks.verify(delivery.body, delivery.headers["x-hub-signature-256"]!)).toBe(true);

    for (const [event, action] of [
      ["pull_request", "opened"],
      ["pull_request", "synchronize"],
      ["pull_request", "reopened"],
      ["installation", "created"],
      ["installation", "deleted"],
      ["installation", "suspend"],
      ["installation", "unsuspend"],
      ["installation_repositories", "added"],
      ["installation_repositories", "removed"],
      ["ping", undefined],
    ] as const) {
      const w = gh.webhook(event, {
        action,
        installationId: orgInstallation,
        ...(event === "ping" || event.startsWith("installation") ? {} : { repository: privateRepo.fullName }),
      });
      expect(JSON.parse(w.body).action).toBe(action);
    }
    const sync = JSON.parse(gh.webhook("pull_request", { action: "synchronize", repository: privateRepo.fullName, sha }).body);
    expect(sync.pull_request.head.sha).toBe(sha);

    // A payload GitHub would not send is refused when it is built.
    expect(() => gh.webhook("push", { repository: privateRepo.fullName, overrides: { after: 42 } })).toThrow(/does not match GitHub's schema/);
  });

  it("checks JWT claims as GitHub does", async () => {
    const now = Math.floor(Date.now() / 1000);
    const jwt = (payload: object) => {
      const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
      const head = `${enc({ alg: "RS256", typ: "JWT" })}.${enc(payload)}`;
      return `${head}.${createSign("RSA-SHA256").update(head).sign(gh.privateKey).toString("base64url")}`;
    };
    const call = async (token: string) => {
      const res = await fetch(`${gh.apiUrl}/app`, { headers: { authorization: `Bearer ${token}` } });
      return { status: res.status, message: ((await res.json()) as { message: string }).message };
    };
    expect(await call(jwt({ iat: now - 30, exp: now + 540, iss: gh.appId }))).toMatchObject({ status: 200 });
    expect(await call(jwt({ iat: now - 30, exp: now + 540, iss: String(gh.appId) }))).toMatchObject({ status: 200 });
    expect(await call(jwt({ iat: now - 30, exp: now + 3600, iss: gh.appId }))).toEqual({
      status: 401,
      message: "'Expiration time' claim ('exp') is too far in the future",
    });
    expect((await call(jwt({ iat: now - 700, exp: now - 100, iss: gh.appId }))).status).toBe(401);
    expect((await call(jwt({ iat: now + 600, exp: now + 590, iss: gh.appId }))).status).toBe(401);
    expect((await call(jwt({ iat: now - 30, exp: now + 540, iss: 1 }))).status).toBe(401);
    expect((await call("not.a.jwt")).status).toBe(401);
    // An App JWT is not an installation token.
    const res = await fetch(`${gh.apiUrl}/installation/repositories`, {
      headers: { authorization: `Bearer ${jwt({ iat: now - 30, exp: now + 540, iss: gh.appId })}` },
    });
    expect(res.status).toBe(403);
  });

  it("keeps what an installation sees in step with grants, revocations, scoping and suspension", async () => {
    const inst = gh.addInstallation({ account: { login: "shifting", type: "Organization" }, repositorySelection: "all" }).id;
    const a = await gh.addRepository({ owner: "shifting", name: "a", private: true, files: { "a.txt": "a\n" } });
    const b = await gh.addRepository({ owner: "shifting", name: "b", private: true, files: { "b.txt": "b\n" } });
    const outside = await gh.addRepository({ owner: "elsewhere", name: "c", private: true, files: { "c.txt": "c\n" } });
    const mint = async (body: object = {}) =>
      (await app.octokit.request("POST /app/installations/{installation_id}/access_tokens", { installation_id: inst, ...body })).data.token;
    const list = async (token: string) => {
      const res = await fetch(`${gh.apiUrl}/installation/repositories`, { headers: { authorization: `token ${token}` } });
      const body = (await res.json()) as { repositories: { full_name: string }[]; repository_selection: string };
      return { status: res.status, names: body.repositories?.map((r) => r.full_name), selection: body.repository_selection };
    };
    expect(await list(await mint())).toEqual({ status: 200, names: [a.fullName, b.fullName], selection: "all" });
    expect(await list(await mint({ repositories: ["b"] }))).toEqual({ status: 200, names: [b.fullName], selection: "selected" });
    expect(await list(await mint({ repository_ids: [a.id] }))).toMatchObject({ names: [a.fullName] });
    const tooMuch = await app.octokit
      .request("POST /app/installations/{installation_id}/access_tokens", { installation_id: inst, permissions: { administration: "write" } })
      .catch((e: { status: number }) => e);
    expect(tooMuch).toMatchObject({ status: 422 });

    gh.grantRepository(inst, outside.fullName);
    expect((await list(await mint())).names).toEqual([a.fullName, b.fullName, outside.fullName]);
    gh.revokeRepository(inst, a.fullName); // an "all" installation becomes a selection without it
    expect(await list(await mint())).toEqual({ status: 200, names: [b.fullName, outside.fullName], selection: "selected" });
    const token = await mint();
    const repoRes = await fetch(`${gh.apiUrl}/repos/${a.fullName}`, { headers: { authorization: `token ${token}` } });
    expect(repoRes.status).toBe(404);

    // A suspended installation's live tokens stop working too; unsuspending brings them back.
    gh.suspend(inst);
    expect((await list(token)).status).toBe(403);
    expect((await clone(b.cloneUrl, basic(token))).ok).toBe(false);
    gh.unsuspend(inst);
    expect((await list(token)).status).toBe(200);
    gh.deleteInstallation(inst);
    expect((await list(token)).status).toBe(401);
  });

  it("serves repositories anonymously only when public", async () => {
    const pub = await fetch(`${gh.apiUrl}/repos/${publicRepo.fullName}`);
    expect(pub.status).toBe(200);
    expect(await pub.json()).toMatchObject({
      full_name: publicRepo.fullName,
      private: false,
      clone_url: publicRepo.cloneUrl,
      html_url: `${gh.url}/${publicRepo.fullName}`,
      default_branch: "main",
    });
    expect((await fetch(`${gh.apiUrl}/repos/${privateRepo.fullName}`)).status).toBe(404);
    expect((await fetch(`${gh.apiUrl}/repos/nobody/nothing`)).status).toBe(404);

    // Names are case-insensitive; the account's own spelling wins.
    const loud = await gh.addRepository({ owner: "ACME", name: "Loud", private: false, files: { "x.txt": "x\n" } });
    expect(loud.fullName).toBe("acme/Loud");
    expect((await clone(`${gh.url}/Acme/loud.git`)).ok).toBe(true);
    expect((await fetch(`${gh.apiUrl}/repos/ACME/LOUD`)).status).toBe(200);
  });

  it("answers gzip-compressed upload-pack requests, and injected git faults and stalls", async () => {
    const request = Buffer.from(`0032want ${privateRepo.headSha}\n00000009done\n`);
    const token = (await app.octokit.request("POST /app/installations/{installation_id}/access_tokens", { installation_id: orgInstallation })).data.token;
    const res = await fetch(`${privateRepo.cloneUrl}/git-upload-pack`, {
      method: "POST",
      headers: {
        authorization: `Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}`,
        "content-type": "application/x-git-upload-pack-request",
        "content-encoding": "gzip",
      },
      body: gzipSync(request),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-git-upload-pack-result");
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.subarray(0, 8).toString()).toBe("0008NAK\n");
    expect(body.includes(Buffer.from("PACK"))).toBe(true);

    gh.failNext("GET", /\/info\/refs$/, 503);
    expect((await clone(publicRepo.cloneUrl)).ok).toBe(false);
    expect((await clone(publicRepo.cloneUrl)).ok).toBe(true);

    gh.stallNext("GET", /\/api\/v3\/repos\//, 300);
    const started = Date.now();
    expect((await fetch(`${gh.apiUrl}/repos/${publicRepo.fullName}`)).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it("reports pushes of new branches, tags and deletions as GitHub does", async () => {
    const repo = await gh.addRepository({ owner: "acme", name: "pushes", private: true, files: { "x.txt": "1\n" }, installationId: orgInstallation });
    const push = (o: object) => JSON.parse(gh.webhook("push", { repository: repo.fullName, ...o }).body);

    const second = await gh.push(repo.fullName, { "x.txt": "2\n", "gone.txt": null }, { message: "Second" });
    expect(push({})).toMatchObject({
      ref: "refs/heads/main",
      before: repo.headSha,
      after: second,
      created: false,
      deleted: false,
      commits: [{ id: second, modified: ["x.txt"] }],
    });

    const feature = await gh.push(repo.fullName, { "f.txt": "f\n" }, { branch: "feature" });
    expect(push({ ref: "refs/heads/feature" })).toMatchObject({ before: "0".repeat(40), after: feature, created: true, deleted: false });
    const pr = JSON.parse(gh.webhook("pull_request", { action: "opened", repository: repo.fullName }).body);
    expect(pr.pull_request.head).toMatchObject({ ref: "feature", sha: feature });
    expect(pr.pull_request.base).toMatchObject({ ref: "main", sha: second });

    expect(push({ ref: "refs/heads/feature", sha: "0".repeat(40) })).toMatchObject({
      before: feature,
      after: "0".repeat(40),
      deleted: true,
      created: false,
      commits: [],
      head_commit: null,
    });

    await gh.tag(repo.fullName, "v1.0.0");
    expect(push({ ref: "refs/tags/v1.0.0" })).toMatchObject({
      ref: "refs/tags/v1.0.0",
      after: second,
      created: true,
      commits: [],
      head_commit: { id: second },
    });
  });

  it("redirects an installation to the App's setup URL with the state", async () => {
    gh.setSetupUrl("http://127.0.0.1:9/v1/integrations/github/callback");
    const plain = await fetch(`${gh.url}/apps/codeplane-ci/installations/new?state=abc`, { redirect: "manual" });
    expect(plain.status).toBe(200);
    const inst = gh.addInstallation({ account: { login: "newcomer", type: "User" } }).id;
    gh.installOnNextVisit(inst);
    const res = await fetch(`${gh.url}/apps/codeplane-ci/installations/new?state=s%2Fsigned.1`, { redirect: "manual" });
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get("location")!);
    expect(`${to.origin}${to.pathname}`).toBe("http://127.0.0.1:9/v1/integrations/github/callback");
    expect(Object.fromEntries(to.searchParams)).toEqual({ installation_id: String(inst), setup_action: "install", state: "s/signed.1" });

    gh.requestOnNextVisit();
    const requested = new URL((await fetch(`${gh.url}/apps/codeplane-ci/installations/new?state=x`, { redirect: "manual" })).headers.get("location")!);
    expect(Object.fromEntries(requested.searchParams)).toEqual({ setup_action: "request", state: "x" });
  });

  it("records nothing against GitHub's description, and catches a malformed response", async () => {
    expect(gh.violations).toEqual([]);
    gh.tamperNext("GET", /\/api\/v3\/app$/, (body) => ({ ...body, id: "not-a-number", slug: undefined, html_url: "not a url" }));
    await app.octokit.request("GET /app");
    const caught = gh.takeViolations();
    expect(caught.join("\n")).toMatch(/response to GET \/api\/v3\/app .*body\/id must be integer/);
    expect(caught.join("\n")).toMatch(/html_url must match format "uri"/);

    // An operation GitHub has but the double does not serve is reported, not silently 404.
    const octokit = await app.getInstallationOctokit(orgInstallation);
    await octokit.request("GET /repos/{owner}/{repo}/branches", { owner: "acme", repo: "secret-sauce" }).catch(() => undefined);
    expect(gh.takeViolations()).toEqual([expect.stringMatching(/repos\/list-branches .*does not implement/)]);

    // Garbage is answered as GitHub answers it, and recorded.
    const { token } = (await app.octokit.request("POST /app/installations/{installation_id}/access_tokens", { installation_id: orgInstallation })).data;
    const garbage = await fetch(`${gh.apiUrl}/repos/${privateRepo.fullName}/check-runs`, {
      method: "POST",
      headers: { authorization: `token ${token}`, "content-type": "application/json" },
      body: "{name:",
    });
    expect(garbage.status).toBe(400);
    expect(await garbage.json()).toMatchObject({ message: "Problems parsing JSON" });
    expect(gh.takeViolations()).toEqual([expect.stringMatching(/checks\/create.*not JSON/)]);
  });
});
