import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InstallStateSigner } from "../../src/domain/integrations/install-state.ts";
import { startGitHubDouble, type GitHubDouble } from "../helpers/github-double/index.ts";
import { githubEnvFor } from "../helpers/github-env.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";

// The GitHub integration against the GitHub double (GitHub's REST API as an
// Enterprise Server on loopback, with git served behind installation tokens):
// the install flow, connecting, listing, tenancy, an installation's
// repositories, a private repository fetched with tokens that never land on
// disk or in a log, suspension, disconnection, and the 503s without an App.

const PUBLIC_URL = "https://codeplane.example.test";

let gh: GitHubDouble;
let svc: TestService;
let cacheDir: string;
let a: Tenant;
let b: Tenant;

const githubEnv = () => githubEnvFor(gh, PUBLIC_URL);

async function json<T = any>(res: Response, status: number): Promise<T> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** The install flow as a browser makes it: the install URL's state, GitHub's redirect to the callback. */
async function installThroughCallback(t: Tenant, installationId: number, state?: string): Promise<Response> {
  const s = state ?? stateOf((await json(await t.api("/v1/integrations/github/install"), 200)).install_url);
  return fetch(`${svc.url}/v1/integrations/github/callback?installation_id=${installationId}&setup_action=install&state=${encodeURIComponent(s)}`, {
    redirect: "manual",
  });
}

const stateOf = (installUrl: string) => new URL(installUrl).searchParams.get("state")!;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? filesUnder(p) : e.isFile() ? [p] : [];
  });
}

beforeAll(async () => {
  gh = await startGitHubDouble({ appSlug: "codeplane-test" });
  cacheDir = mkdtempSync(path.join(tmpdir(), "codeplane-gh-mirrors-"));
  // Every read refreshes the mirror, so each one fetches with a token.
  svc = await startTestService({ ...githubEnv(), CODEPLANE_GIT_CACHE_DIR: cacheDir, CODEPLANE_GIT_REFRESH_SECONDS: "0" });
  a = await svc.tenant();
  b = await svc.tenant();
});

afterAll(async () => {
  await svc?.close();
  await gh?.close();
  rmSync(cacheDir, { recursive: true, force: true });
});

describe("without a GitHub App", () => {
  it("every integration endpoint answers 503 naming the missing settings; /readyz does not mention GitHub", async () => {
    const bare = await startTestService();
    try {
      const t = await bare.tenant();
      const id = "0190b1c2-3d4e-7f00-8a1b-2c3d4e5f6a7b";
      const calls: [string, string, unknown?][] = [
        ["GET", "/v1/integrations/github/install"],
        ["GET", "/v1/integrations/github/callback?installation_id=1&setup_action=install&state=x"],
        ["POST", "/v1/integrations/github", { installation_id: 1 }],
        ["GET", "/v1/integrations"],
        ["GET", `/v1/integrations/${id}`],
        ["DELETE", `/v1/integrations/${id}`],
        ["GET", `/v1/integrations/${id}/repositories`],
        ["POST", `/v1/integrations/${id}/repositories`, { full_name: "acme/x" }],
      ];
      for (const [method, p, body] of calls) {
        const res = await t.api(p, { method, ...(body !== undefined && { json: body }) });
        const detail = (await json(res, 503)).detail as string;
        expect(detail, `${method} ${p}`).toMatch(
          /^The GitHub integration is not configured on this server: set CODEPLANE_GITHUB_APP_ID, CODEPLANE_GITHUB_PRIVATE_KEY \(or CODEPLANE_GITHUB_PRIVATE_KEY_FILE\), CODEPLANE_GITHUB_WEBHOOK_SECRET, CODEPLANE_GITHUB_APP_SLUG, CODEPLANE_PUBLIC_URL$/,
        );
      }
      const ready = (await (await fetch(`${bare.url}/readyz`)).json()) as { checks: Record<string, string> };
      expect(ready.checks.database).toBe("ok");
      expect(Object.keys(ready.checks).sort()).toEqual(["database", "kubernetes"]);
    } finally {
      await bare.close();
    }
  });
});

describe("the install flow", () => {
  it("gives the App's installation URL with a signed state, built without calling GitHub", async () => {
    const before = gh.requests.length;
    const body = await json(await a.api("/v1/integrations/github/install"), 200);
    expect(gh.requests.length).toBe(before);
    expect(body.install_url).toMatch(new RegExp(`^${gh.url}/apps/codeplane-test/installations/new\\?state=v1\\.`));
    expect(Date.parse(body.expires_at) - Date.now()).toBeGreaterThan(3500_000);
  });

  it("connects the installation on the callback and redirects to the dashboard", async () => {
    const state = stateOf((await json(await a.api("/v1/integrations/github/install"), 200)).install_url);
    const inst = gh.addInstallation({ account: { login: "acme", type: "Organization" }, repositorySelection: "selected" }).id;
    const res = await installThroughCallback(a, inst, state);
    expect(res.status, await res.clone().text()).toBe(302);
    const location = res.headers.get("location")!;
    expect(location).toMatch(new RegExp(`^${PUBLIC_URL}/ui/integrations/[0-9a-f-]{36}$`));
    const id = location.split("/").pop()!;
    const integration = await json(await a.api(`/v1/integrations/${id}`), 200);
    expect(integration).toEqual({
      id,
      provider: "github",
      installation_id: inst,
      account_login: "acme",
      account_type: "Organization",
      repository_selection: "selected",
      suspended: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    // The same callback again (a reload) keeps the one integration.
    const again = await installThroughCallback(a, inst, state);
    expect(again.headers.get("location")).toBe(location);
    expect((await json(await a.api("/v1/integrations"), 200)).items.map((i: { id: string }) => i.id)).toEqual([id]);
  });

  it("says pending when an organization owner still has to approve", async () => {
    const state = stateOf((await json(await a.api("/v1/integrations/github/install"), 200)).install_url);
    const res = await fetch(`${svc.url}/v1/integrations/github/callback?setup_action=request&state=${encodeURIComponent(state)}`, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(`${PUBLIC_URL}/ui/integrations?status=pending`);
  });

  it("refuses a tampered, foreign or expired state, and an installation older than the flow", async () => {
    const inst = gh.addInstallation({ account: { login: "tampered", type: "User" } }).id;
    const state = stateOf((await json(await b.api("/v1/integrations/github/install"), 200)).install_url);
    const [v, kid, body, mac] = state.split(".");
    const otherAccount = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body!, "base64url").toString()), a: a.accountId })).toString("base64url");
    const keys = { currentId: "k1", keys: { k1: Buffer.from(svc.encryptionKey, "base64") } };
    const expired = new InstallStateSigner(keys, () => Date.now() - 3601_000).issue(b.accountId).state;
    const foreign = new InstallStateSigner({ currentId: "k1", keys: { k1: Buffer.alloc(32, 7) } }).issue(b.accountId).state;
    const cases: [string, string, RegExp][] = [
      ["another account written into the payload", `${v}.${kid}.${otherAccount}.${mac}`, /not valid/],
      ["a changed signature", `${v}.${kid}.${body}.${mac!.slice(0, -2)}AA`, /not valid/],
      ["garbage", "hello", /not valid/],
      ["another server's key", foreign, /not valid/],
      ["an expired state", expired, /expired/],
    ];
    for (const [what, s, detail] of cases) {
      const res = await installThroughCallback(b, inst, s);
      expect((await json(res, 400)).detail, what).toMatch(detail);
    }
    // An installation created (and last changed) before the state was issued: someone else's, pasted in.
    const old = new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d+Z$/, "Z");
    gh.tamperNext("GET", /\/app\/installations\/\d+$/, (i) => ({ ...i, created_at: old, updated_at: old }));
    expect((await json(await installThroughCallback(b, inst, state), 400)).detail).toMatch(/not created or changed during this installation flow/);
    expect((await json(await b.api("/v1/integrations"), 200)).items).toEqual([]);
  });

  it("refuses another account's installation through the callback and through POST", async () => {
    const inst = gh.addInstallation({ account: { login: "taken", type: "User" } }).id;
    const mine = await json(await a.api("/v1/integrations/github", { method: "POST", json: { installation_id: inst } }), 201);
    expect(mine).toMatchObject({
      installation_id: inst,
      account_login: "taken",
      account_type: "User",
      repository_selection: expect.stringMatching(/^(all|selected)$/),
    });
    // The same account again: 200 with the same integration.
    expect((await json(await a.api("/v1/integrations/github", { method: "POST", json: { installation_id: inst } }), 200)).id).toBe(mine.id);
    expect((await json(await b.api("/v1/integrations/github", { method: "POST", json: { installation_id: inst } }), 409)).detail).toMatch(
      /connected to another codeplane account/,
    );
    expect((await json(await installThroughCallback(b, inst), 409)).detail).toMatch(/connected to another codeplane account/);
    // One GitHub does not know.
    expect((await json(await b.api("/v1/integrations/github", { method: "POST", json: { installation_id: 987654321 } }), 404)).detail).toMatch(
      /does not exist/,
    );
    expect((await json(await b.api("/v1/integrations/github", { method: "POST", json: { installation_id: "x" } }), 422)).detail[0].loc).toEqual([
      "body",
      "installation_id",
    ]);
  });
});

describe("integrations of an account", () => {
  it("are the account's own: another account's is 404 to get, list and delete", async () => {
    const inst = gh.addInstallation({ account: { login: "isolated", type: "Organization" } }).id;
    const mine = await json(await a.api("/v1/integrations/github", { method: "POST", json: { installation_id: inst } }), 201);
    for (const [method, p] of [
      ["GET", `/v1/integrations/${mine.id}`],
      ["DELETE", `/v1/integrations/${mine.id}`],
      ["GET", `/v1/integrations/${mine.id}/repositories`],
    ] as const) {
      expect((await json(await b.api(p, { method }), 404)).detail, `${method} ${p}`).toBe("Integration not found");
    }
    expect((await json(await b.api(`/v1/integrations/${mine.id}/repositories`, { method: "POST", json: { full_name: "isolated/x" } }), 404)).detail).toBe(
      "Integration not found",
    );
    expect((await json(await b.api("/v1/integrations"), 200)).items.map((i: { id: string }) => i.id)).not.toContain(mine.id);
    const page1 = await json(await a.api("/v1/integrations?limit=1"), 200);
    expect(page1.items).toHaveLength(1);
    expect(page1.items[0].id).toBe(mine.id); // newest first
    expect(page1.next_cursor).toEqual(expect.any(String));
    expect((await json(await a.api(`/v1/integrations/${mine.id}`), 200)).id).toBe(mine.id);
  });

  it("list what the installation can see, a page of GitHub's at a time", async () => {
    const inst = gh.addInstallation({ account: { login: "paged", type: "Organization" }, repositorySelection: "selected" }).id;
    for (const name of ["one", "two", "three"])
      await gh.addRepository({ owner: "paged", name, private: true, files: { "README.md": name }, installationId: inst });
    await gh.addRepository({ owner: "paged", name: "unseen", private: true, files: { "README.md": "no" } });
    const integration = await json(await a.api("/v1/integrations/github", { method: "POST", json: { installation_id: inst } }), 201);
    const first = await json(await a.api(`/v1/integrations/${integration.id}/repositories?limit=2`), 200);
    expect(first.items).toHaveLength(2);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await json(await a.api(`/v1/integrations/${integration.id}/repositories?limit=2&cursor=${first.next_cursor}`), 200);
    expect(second.next_cursor).toBeNull();
    const all = [...first.items, ...second.items];
    expect(all.map((r: { full_name: string }) => r.full_name).sort()).toEqual(["paged/one", "paged/three", "paged/two"]);
    expect(all[0]).toMatchObject({ github_id: expect.any(Number), owner: "paged", private: true, repository_id: null });
    expect((await json(await a.api(`/v1/integrations/${integration.id}/repositories?cursor=bogus`), 422)).detail[0].loc).toEqual(["query", "cursor"]);
  });
});

describe("a private repository through an integration", () => {
  let inst: number;
  let integrationId: string;
  let repoId: string;

  it("is registered with provider github, fetched with an installation token, and browsable", async () => {
    inst = gh.addInstallation({ account: { login: "secretorg", type: "Organization" }, repositorySelection: "selected" }).id;
    await gh.addRepository({
      owner: "secretorg",
      name: "sauce",
      private: true,
      files: { "README.md": "# sauce\n", "src/main.py": "print('hi')\n" },
      installationId: inst,
    });
    await gh.addRepository({ owner: "secretorg", name: "hidden", private: true, files: { "README.md": "no" } });
    integrationId = (await json(await a.api("/v1/integrations/github", { method: "POST", json: { installation_id: inst } }), 201)).id;

    const repo = await json(
      await a.api(`/v1/integrations/${integrationId}/repositories`, { method: "POST", json: { full_name: "secretorg/sauce", auto_analyze: true } }),
      201,
    );
    repoId = repo.id;
    expect(repo).toMatchObject({
      name: "sauce",
      url: `${gh.url}/secretorg/sauce.git`,
      provider: "github",
      integration_id: integrationId,
      auto_analyze: true,
      default_branch: "main",
    });
    // Not visible to the installation: 404; registered already: 409; without integrations:read: 403.
    expect(
      (await json(await a.api(`/v1/integrations/${integrationId}/repositories`, { method: "POST", json: { full_name: "secretorg/hidden" } }), 404)).detail,
    ).toMatch(/cannot see it/);
    expect(
      (await json(await a.api(`/v1/integrations/${integrationId}/repositories`, { method: "POST", json: { full_name: "secretorg/sauce" } }), 409)).detail,
    ).toMatch(/already registered/);
    const writer = await svc.tenant(["repositories:write"]);
    expect(
      (await json(await writer.api(`/v1/integrations/${integrationId}/repositories`, { method: "POST", json: { full_name: "secretorg/sauce" } }), 403)).detail,
    ).toBe("Missing scope: integrations:read");
    const listed = await json(await a.api(`/v1/integrations/${integrationId}/repositories`), 200);
    expect(listed.items.find((r: { full_name: string }) => r.full_name === "secretorg/sauce").repository_id).toBe(repoId);

    const tokensBefore = gh.tokensIssued();
    const tree = await json(await a.api(`/v1/repositories/${repoId}/files`), 200);
    expect(tree.entries.map((e: { name: string }) => e.name)).toEqual(["src", "README.md"]);
    const file = await json(await a.api(`/v1/repositories/${repoId}/files/README.md`), 200);
    expect(file.content).toBe("# sauce\n");
    // Octokit keeps the installation's token for its hour: a read fetches with it, minting none.
    expect(gh.tokensIssued()).toBe(tokensBefore);
  });

  it("keeps the token out of the mirror, its config and the service's logs", () => {
    const tokens = gh.issuedTokens;
    expect(tokens.length).toBeGreaterThan(0);
    const secrets = tokens.flatMap((t) => [t, Buffer.from(`x-access-token:${t}`).toString("base64")]);
    const mirror = path.join(cacheDir, `${repoId}.git`);
    expect(statSync(path.join(mirror, "config")).isFile()).toBe(true);
    const config = readFileSync(path.join(mirror, "config"), "utf8");
    expect(config).not.toMatch(/extraheader|authorization|x-access-token/i);
    for (const f of filesUnder(cacheDir)) {
      const content = readFileSync(f).toString("latin1");
      for (const s of secrets) expect(content.includes(s), f).toBe(false);
    }
    const logs = svc.logs.join("\n");
    expect(logs).toMatch(/git mirror fetched/);
    for (const s of secrets) expect(logs.includes(s)).toBe(false);
  });

  it("asks for a fresh token once when git refuses a cached one", async () => {
    await gh.push("secretorg/sauce", { "NEW.md": "after the tokens were revoked\n" });
    gh.expireTokens();
    const before = gh.tokensIssued();
    const file = await json(await a.api(`/v1/repositories/${repoId}/files/NEW.md`), 200);
    expect(file.content).toBe("after the tokens were revoked\n");
    expect(gh.tokensIssued()).toBe(before + 1);
  });

  it("stops fetching at once when the installation is suspended, with a clear error", async () => {
    gh.suspend(inst);
    await gh.push("secretorg/sauce", { "LATE.md": "pushed while suspended\n" });
    // This replica learns it from GitHub at its next fetch and serves the mirror as of its last fetch.
    await json(await a.api(`/v1/repositories/${repoId}/files/README.md`), 200);
    expect((await json(await a.api(`/v1/integrations/${integrationId}`), 200)).suspended).toBe(true);
    expect(svc.logs.join("\n")).toMatch(
      new RegExp(
        `installation ${inst} of this repository is suspended: it is not fetched until it is unsuspended on GitHub"},"msg":"git mirror refresh failed; serving the previous fetch"`,
      ),
    );
    // A replica without a mirror: refused before git runs, quickly.
    const other = await startTestService({ ...githubEnv(), DATABASE_URL: svc.databaseUrl, CODEPLANE_ENCRYPTION_KEY: svc.encryptionKey });
    try {
      const started = Date.now();
      const res = await fetch(`${other.url}/v1/repositories/${repoId}/files`, { headers: { authorization: `Bearer ${a.key}` } });
      expect((await json(res, 409)).detail).toMatch(new RegExp(`GitHub App installation ${inst} of this repository is suspended`));
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      await other.stop();
    }
    expect(
      (await json(await a.api(`/v1/integrations/${integrationId}/repositories`, { method: "POST", json: { full_name: "secretorg/hidden" } }), 409)).detail,
    ).toMatch(/suspended/);
    gh.unsuspend(inst);
  });

  it("once disconnected keeps the repository readable as of its last fetch, no longer fetched", async () => {
    expect((await a.api(`/v1/integrations/${integrationId}`, { method: "DELETE" })).status).toBe(204);
    expect((await a.api(`/v1/integrations/${integrationId}`)).status).toBe(404);
    expect((await a.api(`/v1/integrations/${integrationId}`, { method: "DELETE" })).status).toBe(404);
    const repo = await json(await a.api(`/v1/repositories/${repoId}`), 200);
    expect(repo).toMatchObject({ provider: "github", integration_id: null, auto_analyze: false });
    const readme = await json(await a.api(`/v1/repositories/${repoId}/files/README.md`), 200);
    expect(readme.content).toBe("# sauce\n");
    expect((await a.api(`/v1/repositories/${repoId}/files/LATE.md`)).status).toBe(404);
    const other = await startTestService({ ...githubEnv(), DATABASE_URL: svc.databaseUrl, CODEPLANE_ENCRYPTION_KEY: svc.encryptionKey });
    try {
      const res = await fetch(`${other.url}/v1/repositories/${repoId}/files`, { headers: { authorization: `Bearer ${a.key}` } });
      expect((await json(res, 409)).detail).toMatch(/installation was disconnected/);
    } finally {
      await other.stop();
    }
    // The installation can be connected again, by any account.
    expect((await json(await b.api("/v1/integrations/github", { method: "POST", json: { installation_id: inst } }), 201)).installation_id).toBe(inst);
  });

  it("left the GitHub double nothing to object to", () => {
    expect(gh.violations).toEqual([]);
  });
});
