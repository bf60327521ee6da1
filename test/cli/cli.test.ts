import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "@codeplane/cli";
import { cpl, cplEnv, spawnCpl } from "../helpers/cpl.ts";
import { createFixtureRepo, type FixtureRepo } from "../helpers/git-fixture.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";
import { FormBrowser, signInAndDecide } from "../oauth/helpers.ts";

// The user CLI (cpl, packages/cli) against the real service and Postgres, as
// its own process: sign-in and contexts, repositories, files at a ref, keys,
// variables, runs, JSON output, and the API's errors with their exit codes.
// Runs themselves need a cluster: test/e2e/cli.test.ts.

let svc: TestService;
let alice: Tenant;
let fixture: FixtureRepo;
let env: Record<string, string>;

beforeAll(async () => {
  svc = await startTestService();
  alice = await svc.tenant();
  fixture = await createFixtureRepo();
  env = cplEnv({ url: svc.url, key: alice.key });
});
afterAll(async () => {
  await svc?.close();
  await fixture?.cleanup();
});

const json = async <T = unknown>(args: string[], e = env): Promise<T> => {
  const r = await cpl([...args, "-o", "json"], e);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as T;
};

describe("cpl sign-in and contexts", () => {
  it("login --api-key-stdin keeps the context and its key mode 0600; a refused key is exit 3 and nothing is kept", async () => {
    const configDir = path.join(mkdtempSync(path.join(tmpdir(), "cpl-it-")), "cpl");
    const own = cplEnv({ configDir });
    const login = await cpl(["login", svc.url, "--name", "local", "--api-key-stdin"], own, `${alice.key}\n`);
    expect(login, login.stderr).toMatchObject({ code: 0, stdout: `signed in to ${svc.url} with an API key; context "local" is now current\n` });
    expect(statSync(path.join(configDir, "credentials.json")).mode & 0o777).toBe(0o600);
    expect(statSync(configDir).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(path.join(configDir, "credentials.json"), "utf8"))).toEqual({ local: { type: "api_key", key: alice.key } });
    expect(JSON.parse(readFileSync(path.join(configDir, "config.json"), "utf8"))).toEqual({ current: "local", contexts: { local: { url: svc.url } } });
    expect((await cpl(["repos", "ls"], own)).code).toBe(0);
    expect(await json(["contexts", "ls"], own)).toEqual([{ name: "local", url: svc.url, current: true, credential: "api_key" }]);

    const refused = await cpl(["login", svc.url, "--name", "other", "--api-key-stdin"], own, "cp_not_a_key\n");
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/refused the credential/);
    expect(Object.keys(JSON.parse(readFileSync(path.join(configDir, "credentials.json"), "utf8")))).toEqual(["local"]);

    expect(await cpl(["logout"], own)).toMatchObject({ code: 0, stdout: `signed out of ${svc.url}\n` });
    const after = await cpl(["repos", "ls"], own);
    expect(after.code).toBe(3);
    expect(after.stderr).toMatch(/401 Not authenticated/);
  });
});

describe("cpl repos, files, keys and variables", () => {
  it("repos add and ls, as a table and as JSON; a bad name is the API's 422 read out", async () => {
    const added = await cpl(["repos", "add", fixture.url, "--name", "fixture"], env);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toMatch(/^id: +[0-9a-f-]{36}\nname: +fixture\n/);
    const table = await cpl(["repos", "ls"], env);
    expect(table.stdout.split("\n")[0]).toMatch(/^NAME +ID +DEFAULT BRANCH +URL +CREATED$/);
    expect(table.stdout).toMatch(/\nfixture +[0-9a-f-]{36} +main +file:\/\//);
    const list = await json<{ name: string; default_branch: string }[]>(["repos", "ls"]);
    expect(list.find((r) => r.name === "fixture")).toMatchObject({ default_branch: "main" });

    const bad = await cpl(["repos", "add", fixture.url, "--name", "no spaces"], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^cpl: POST \/v1\/repositories: 422 invalid request:\n {2}name: .+\n$/);
  });

  it("files ls and cat at a ref (default: the default branch)", async () => {
    const main = await json<{ commit_hash: string; entries: { name: string }[] }>(["files", "ls", "fixture"]);
    expect(main.commit_hash).toBe(fixture.commits.main);
    expect(main.entries.map((e) => e.name)).not.toContain("feature.txt");
    const feature = await cpl(["files", "ls", "fixture", "--ref", "feature"], env);
    expect(feature.stdout).toMatch(/^TYPE +SIZE +NAME\n/);
    expect(feature.stdout).toMatch(/\nfile +\d+ +feature\.txt\n/);
    const readme = await cpl(["files", "cat", "fixture", "README.md"], env);
    expect(readme.stdout).toBe(fixture.files["README.md"]);
    const missing = await cpl(["files", "cat", "fixture", "feature.txt"], env);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(/404/);
    const atFeature = await cpl(["files", "cat", "fixture", "feature.txt", "-r", "feature"], env);
    expect(atFeature.code).toBe(0);
    // A binary file's bytes as they are (sent as base64), and a 300 KiB text file whole.
    const png = spawnCpl(["files", "cat", "fixture", "image.png"], env);
    const bytes: Buffer[] = [];
    png.proc.stdout!.removeAllListeners("data").setEncoding("binary");
    png.proc.stdout!.on("data", (chunk: string) => bytes.push(Buffer.from(chunk, "binary")));
    expect((await png.done).code).toBe(0);
    expect(Buffer.concat(bytes).equals(fixture.files["image.png"] as Buffer)).toBe(true);
    const large = await cpl(["files", "cat", "fixture", "large.txt"], env);
    expect(large).toEqual({ code: 0, stdout: fixture.files["large.txt"], stderr: "" });
    const unknownRepo = await cpl(["files", "ls", "nope"], env);
    expect(unknownRepo).toMatchObject({ code: 4, stderr: 'cpl: no repository named "nope" (cpl repos ls lists them)\n' });
  });

  it("keys create, ls and revoke; a revoked key is refused (exit 3)", async () => {
    const created = await json<{ id: string; key: string; prefix: string; scopes: string[] }>(["keys", "create", "ci", "--scopes", "repositories:read"]);
    expect(created.scopes).toEqual(["repositories:read"]);
    const ci = cplEnv({ url: svc.url, key: created.key });
    expect((await cpl(["repos", "ls"], ci)).code).toBe(0);
    const forbidden = await cpl(["runs", "ls"], ci);
    expect(forbidden.code).toBe(3);
    expect(forbidden.stderr).toMatch(/403/);
    const listed = await cpl(["keys", "ls"], env);
    expect(listed.stdout).toMatch(new RegExp(`\\n${created.id} +ci +${created.prefix} +repositories:read `));
    expect(await cpl(["keys", "revoke", created.prefix], env)).toMatchObject({ code: 0, stdout: `revoked ci (${created.prefix})\n` });
    expect((await cpl(["repos", "ls"], ci)).code).toBe(3);
    expect((await cpl(["keys", "revoke", created.prefix], env)).code).toBe(4);
  });

  it("env set (value from stdin, replacing one of the same name), ls and rm, for the account and a repository", async () => {
    expect(await cpl(["env", "set", "API_TOKEN"], env, "s3cret\n")).toMatchObject({ code: 0, stdout: "API_TOKEN set for the account (secret)\n" });
    expect((await cpl(["env", "set", "MODE", "fast", "--plain", "--repo", "fixture"], env)).code).toBe(0);
    expect((await cpl(["env", "set", "MODE", "faster", "--plain", "--repo", "fixture"], env)).code).toBe(0);
    const vars = await json<{ name: string; value: string | null; secret: boolean; repository_id: string | null }[]>(["env", "ls"]);
    expect(vars.map(({ name, value, secret }) => ({ name, value, secret })).sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: "API_TOKEN", value: null, secret: true },
      { name: "MODE", value: "faster", secret: false },
    ]);
    const table = await cpl(["env", "ls"], env);
    expect(table.stdout).toMatch(/\nAPI_TOKEN +\(secret\) +account /);
    expect(table.stdout).toMatch(/\nMODE +faster +fixture /);
    expect(table.stdout).not.toContain("s3cret");
    expect((await cpl(["env", "rm", "MODE"], env)).code).toBe(4);
    expect((await cpl(["env", "rm", "MODE", "--repo", "fixture"], env)).code).toBe(0);
    expect((await json<unknown[]>(["env", "ls"])).length).toBe(1);
  });
});

describe("cpl runs", () => {
  it("runs ls (empty here), runs get of an unknown run (exit 4), and run without a cluster: the API's 503 detail, exit 1", async () => {
    expect(await json(["runs", "ls"])).toEqual([]);
    expect((await cpl(["runs", "ls"], env)).stdout).toMatch(/^ID +STATUS +EXIT +REPOSITORY +COMMIT +WHAT +CREATED +DURATION\n$/);
    const unknown = await cpl(["runs", "get", "01900000-0000-7000-8000-000000000000"], env);
    expect(unknown.code).toBe(4);
    const run = await cpl(["run", "fixture", "--", "python3", "-c", "print(1)"], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/503 .*Kubernetes/);
    const analyze = await cpl(["analyze", "fixture"], env);
    expect(analyze.code).toBe(1);
    expect(analyze.stderr).toMatch(/^cpl: POST \/v1\/repositories\/[0-9a-f-]+\/analysis\/main: 503 .*Kubernetes/);
    const badRef = await cpl(["run", "fixture", "no-such-branch", "--", "true"], env);
    expect(badRef.code).not.toBe(0);
    expect(badRef.stderr).toMatch(/^cpl: POST \/v1\/repositories\/[0-9a-f-]+\/no-such-branch\/runs: \d{3} /);
  });
});

describe("cpl sign-in in the browser", () => {
  it("login in the browser: OAuth with a loopback redirect and PKCE, then the API with the token; logout revokes it", async () => {
    const configDir = mkdtempSync(path.join(tmpdir(), "cpl-oauth-"));
    const out = { text: "", err: "" };
    const authorizeUrls: URL[] = [];
    const io = {
      env: { CPL_CONFIG_DIR: configDir },
      stdout: { write: (s: string | Uint8Array) => void (out.text += String(s)) },
      stderr: { write: (s: string | Uint8Array) => void (out.err += String(s)) },
      readStdin: async () => "",
      // The person's browser: signs in with their key, allows, and follows the redirect to cpl's loopback listener.
      async openBrowser(url: string) {
        authorizeUrls.push(new URL(url));
        const back = await signInAndDecide(new FormBrowser(), svc.url, url, alice.key);
        void fetch(back);
      },
    };
    expect(await main(["login", svc.url, "--name", "oauth", "--scopes", "repositories:read,runs:read"], io), out.err).toBe(0);
    const asked = authorizeUrls[0]!.searchParams;
    expect(asked.get("redirect_uri")).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(asked.get("code_challenge_method")).toBe("S256");
    expect(asked.get("scope")).toBe("repositories:read runs:read");
    expect(out.text).toContain("with OAuth (repositories:read runs:read)");
    const cred = JSON.parse(readFileSync(path.join(configDir, "credentials.json"), "utf8")).oauth;
    expect(cred).toMatchObject({ type: "oauth", access_token: expect.stringMatching(/^cpat_/), refresh_token: expect.stringMatching(/^cprt_/) });
    expect(statSync(path.join(configDir, "credentials.json")).mode & 0o777).toBe(0o600);

    const own = cplEnv({ configDir });
    expect((await json<{ name: string }[]>(["repos", "ls"], own)).map((r) => r.name)).toContain("fixture");
    // Beyond the granted scopes: the API's 403, exit 3.
    const denied = await cpl(["env", "ls"], own);
    expect(denied.code).toBe(3);
    expect(denied.stderr).toMatch(/403/);

    // An expired access token is refreshed (and the new tokens kept) before the request.
    const file = path.join(configDir, "credentials.json");
    const stored = JSON.parse(readFileSync(file, "utf8"));
    stored.oauth.expires_at = Date.now() - 1000;
    const { writeFileSync } = await import("node:fs");
    writeFileSync(file, JSON.stringify(stored), { mode: 0o600 });
    expect((await cpl(["repos", "ls"], own)).code).toBe(0);
    const refreshed = JSON.parse(readFileSync(file, "utf8")).oauth;
    expect(refreshed.refresh_token).not.toBe(cred.refresh_token);
    expect(refreshed.expires_at).toBeGreaterThan(Date.now());

    expect((await cpl(["logout"], own)).stdout).toContain("(token revoked)");
    const res = await fetch(`${svc.url}/v1/repositories`, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
    expect(res.status).toBe(401);
  });
});
