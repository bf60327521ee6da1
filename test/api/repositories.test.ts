import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/shared/ids.ts";
import { createFixtureRepo, FIXTURE_UTF8, type FixtureRepo } from "../helpers/git-fixture.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";
import { until } from "../helpers/until.ts";

const MAX_FILE_BYTES = 100 * 1024;

let svc: TestService;
let fixture: FixtureRepo;
let alice: Tenant;
let bob: Tenant;
let repo: { id: string; name: string; url: string; default_branch: string; updated_at: string };

beforeAll(async () => {
  svc = await startTestService({ CODEPLANE_MAX_FILE_BYTES: String(MAX_FILE_BYTES) });
  fixture = await createFixtureRepo();
  alice = await svc.tenant();
  bob = await svc.tenant();
  const res = await alice.api("/v1/repositories", { method: "POST", json: { url: fixture.url, name: "fixture" } });
  expect(res.status).toBe(201);
  repo = await res.json();
});
afterAll(async () => {
  await svc?.close();
  await fixture?.cleanup();
});

describe("repositories", () => {
  it("registers a repository and learns its default branch", () => {
    expect(repo).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "fixture",
      url: fixture.url,
      provider: "git",
      default_branch: "main",
      integration_id: null,
      auto_analyze: false,
      report_check_runs: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });

  it("names a repository after its URL when no name is given", async () => {
    const other = await createFixtureRepo();
    try {
      const res = await bob.api("/v1/repositories", { method: "POST", json: { url: `${other.url}/` } });
      expect(res.status).toBe(201);
      const body = await res.json();
      expect(body.url).toBe(other.url);
      expect(body.name).toBe(
        other.url
          .split("/")
          .pop()!
          .replace(/\.git$/, ""),
      );
      expect((await bob.api(`/v1/repositories/${body.id}`, { method: "DELETE" })).status).toBe(204);
    } finally {
      await other.cleanup();
    }
  });

  it("answers 409 for the same URL or name twice", async () => {
    const again = await alice.api("/v1/repositories", { method: "POST", json: { url: fixture.url } });
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({ detail: "A repository with this URL is already registered" });
  });

  it("refuses a default branch that does not exist", async () => {
    const other = await createFixtureRepo();
    try {
      const res = await alice.api("/v1/repositories", { method: "POST", json: { url: other.url, name: "other", default_branch: "nope" } });
      expect(res.status).toBe(422);
      expect((await res.json()).detail[0]).toMatchObject({ loc: ["body", "default_branch"], type: "value_error" });
    } finally {
      await other.cleanup();
    }
  });

  it("refuses a URL that is not a git repository, leaving nothing behind", async () => {
    const res = await alice.api("/v1/repositories", { method: "POST", json: { url: "file:///nonexistent/repo.git" } });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(typeof (await res.json()).detail).not.toBe("undefined");
    const list = await (await alice.api("/v1/repositories")).json();
    expect(list.items.map((r: { url: string }) => r.url)).not.toContain("file:///nonexistent/repo.git");
  });

  it("gets, updates and lists", async () => {
    expect(await (await alice.api(`/v1/repositories/${repo.id}`)).json()).toEqual(repo);
    const patched = await alice.api(`/v1/repositories/${repo.id}`, { method: "PATCH", json: { auto_analyze: true, default_branch: "feature" } });
    expect(patched.status).toBe(200);
    const body = await patched.json();
    expect(body).toMatchObject({ auto_analyze: true, default_branch: "feature", name: "fixture" });
    expect(body.updated_at > repo.updated_at).toBe(true);
    const bad = await alice.api(`/v1/repositories/${repo.id}`, { method: "PATCH", json: { default_branch: "missing-branch" } });
    expect(bad.status).toBe(422);
    await alice.api(`/v1/repositories/${repo.id}`, { method: "PATCH", json: { default_branch: "main" } });
    const list = await (await alice.api("/v1/repositories")).json();
    expect(list.items.map((r: { id: string }) => r.id)).toContain(repo.id);
  });

  it("lists branches and tags, with annotated tags peeled", async () => {
    const res = await alice.api(`/v1/repositories/${repo.id}/refs`);
    expect(res.status).toBe(200);
    const refs = await res.json();
    expect(refs.head).toBe("main");
    expect(refs.branches).toEqual(
      expect.arrayContaining([
        { name: "main", commit_hash: fixture.commits.main },
        { name: "feature", commit_hash: fixture.commits.feature },
      ]),
    );
    expect(refs.tags).toEqual(
      expect.arrayContaining([
        { name: "light", commit_hash: fixture.commits.initial },
        { name: "v1.0.0", commit_hash: fixture.commits.main },
      ]),
    );
  });
});

/** A request whose path is sent byte for byte, as a hostile client would (fetch normalises "..") */
function rawGet(pathname: string): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: svc.service.port, path: pathname, headers: { authorization: `Bearer ${alice.key}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 0 })));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("repository files", () => {
  const tree = (qs = "") => alice.api(`/v1/repositories/${repo.id}/files${qs}`);
  const file = (p: string, qs = "") => alice.api(`/v1/repositories/${repo.id}/files/${p}${qs}`);

  it("lists the root at the default branch with every entry type", async () => {
    const res = await tree();
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.commit_hash).toBe(fixture.commits.main);
    expect(body.path).toBe("");
    const byName = Object.fromEntries(body.entries.map((e: { name: string }) => [e.name, e]));
    expect(byName.a).toMatchObject({ path: "a", type: "dir" });
    expect(byName["README.md"]).toMatchObject({ path: "README.md", type: "file", size: Buffer.byteLength(fixture.files["README.md"] as string) });
    expect(byName["link-to-readme"]).toMatchObject({ type: "symlink" });
    expect(byName["image.png"].type).toBe("file");
    const vendor = await (await tree("?path=vendor")).json();
    expect(vendor.entries).toEqual([expect.objectContaining({ name: "lib", path: "vendor/lib", type: "submodule" })]);
  });

  it.each([
    ["a branch", "feature", () => fixture.commits.feature],
    ["a lightweight tag", "light", () => fixture.commits.initial],
    ["an annotated tag", "v1.0.0", () => fixture.commits.main],
    ["a short hash", "SHORT", () => fixture.commits.feature],
    ["a full hash", "FULL", () => fixture.commits.initial],
  ])("resolves %s", async (_name, ref, expected) => {
    const r = ref === "SHORT" ? fixture.commits.feature.slice(0, 8) : ref === "FULL" ? fixture.commits.initial : ref;
    const res = await tree(`?ref=${r}`);
    expect(res.status).toBe(200);
    expect((await res.json()).commit_hash).toBe(expected());
  });

  it("lists nested directories", async () => {
    const body = await (await tree("?path=a/b")).json();
    expect(body.path).toBe("a/b");
    expect(body.entries.map((e: { path: string }) => e.path)).toEqual(["a/b/c", "a/b/sibling.txt"]);
  });

  it("reads text, UTF-8, binary and symlinks", async () => {
    const readme = await (await file("README.md")).json();
    expect(readme).toEqual({
      commit_hash: fixture.commits.main,
      path: "README.md",
      size: Buffer.byteLength(fixture.files["README.md"] as string),
      encoding: "utf-8",
      content: fixture.files["README.md"],
      truncated: false,
    });
    const utf8 = await (await file("utf8.txt")).json();
    expect(utf8).toMatchObject({ encoding: "utf-8", content: FIXTURE_UTF8 });
    const png = await (await file("image.png")).json();
    expect(png.encoding).toBe("base64");
    expect(Buffer.from(png.content, "base64").equals(fixture.files["image.png"] as Buffer)).toBe(true);
    const deep = await (await file("a/b/c/deep.txt")).json();
    expect(deep.content).toBe("deep inside a/b/c\n");
    const link = await (await file("link-to-readme")).json();
    expect(link.content).toBe("README.md");
    const onFeature = await file("feature.txt", "?ref=feature");
    expect(onFeature.status).toBe(200);
  });

  it("truncates large files at the configured size", async () => {
    const body = await (await file("large.txt")).json();
    expect(body.truncated).toBe(true);
    expect(body.size).toBe(fixture.largeSize);
    expect(Buffer.byteLength(body.content)).toBe(MAX_FILE_BYTES);
  });

  it.each([
    ["a missing file", () => file("nope.txt"), 404],
    ["a missing directory", () => tree("?path=nope"), 404],
    ["an unknown ref", () => tree("?ref=no-such-branch"), 404],
    ["a file on a branch without it", () => file("feature.txt", "?ref=main"), 404],
    ["a directory read as a file", () => file("a"), 400],
  ])("answers %s with an error", async (_name, call, status) => {
    const res = await call();
    expect(res.status).toBe(status);
    expect(typeof (await res.json()).detail).toBe("string");
  });

  it.each([
    ["a parent path in the query", () => tree("?path=../etc")],
    ["a nested parent path in the query", () => tree("?path=a/../../etc")],
    ["an absolute path in the query", () => tree("?path=/etc")],
    // %2f keeps fetch from normalising the dots away before they reach the server.
    ["an encoded parent path", () => file("a%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd")],
    ["a literal parent path", () => rawGet(`/v1/repositories/${repo.id}/files/a/../../../etc/passwd`)],
    ["an option-like ref", () => tree("?ref=--upload-pack=touch%20/tmp/pwned")],
  ])("refuses %s with 422", async (_name, call) => {
    const res = await call();
    expect(res.status).toBe(422);
    expect(Array.isArray((await res.json()).detail)).toBe(true);
  });
});

describe("a repository's commits", () => {
  const commit = (ref: string, tenant = alice) => tenant.api(`/v1/repositories/${repo.id}/commits/${ref}`);

  it("reads the default branch's head: its message, author, committer and parent", async () => {
    const res = await commit("main");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      commit_hash: fixture.commits.main,
      title: "Add the awkward files",
      message: "Add the awkward files",
      author: { name: "Fixture Author", email: "fixture@example.com", date: "2023-11-14T22:14:20+00:00" },
      committer: { name: "Fixture Author", email: "fixture@example.com", date: "2023-11-14T22:14:20+00:00" },
      parents: [fixture.commits.initial],
    });
    // The root commit has no parent; a short hash and a tag name it as well.
    expect((await (await commit(fixture.commits.initial.slice(0, 8))).json()).parents).toEqual([]);
    expect((await (await commit("v1.0.0")).json()).commit_hash).toBe(fixture.commits.main);
  });

  it("reads a long message whole, its first line as the title, and a branch with a slash in its name", async () => {
    const message = `Fix the thing\n\nBecause it was broken: ${"détails ".repeat(40)}\n- one\n- two\n`;
    const hash = await fixture.commit("topic/long-message", { "notes.txt": "x\n" }, { message });
    // Pushed after the mirror's last fetch: an unknown ref fetches again, at most every few seconds.
    await until("the new branch, fetched", 60_000, async () => (await commit("topic/long-message")).status === 200);
    for (const ref of ["topic/long-message", "topic%2Flong-message", hash]) {
      const body = await (await commit(ref)).json();
      expect(body.commit_hash, ref).toBe(hash);
      expect(body.title).toBe("Fix the thing");
      expect(body.message).toBe(message.trimEnd());
    }
  });

  it("answers 404 for an unknown ref and another account's repository, 422 for a malformed ref", async () => {
    expect((await commit("no-such-branch")).status).toBe(404);
    expect((await commit("main", bob)).status).toBe(404);
    const bad = await commit("a..b");
    expect(bad.status).toBe(422);
  });
});

describe("directory pages", () => {
  // A directory bigger than one page: 2,345 files and five directories, two
  // of them ("foo", "foo-bar") ordered differently by git than by name.
  const FILES = 2345;
  const DIRS = ["dir-b", "foo-bar", "dir-a", "foo", "dir-c"];
  let big: FixtureRepo;
  let bigRepo: { id: string };
  const list = (qs: string) => alice.api(`/v1/repositories/${bigRepo.id}/files?path=many${qs}`);
  type Page = { commit_hash: string; path: string; entries: { name: string; path: string; type: string; size: number | null }[]; next_cursor: string | null };

  beforeAll(async () => {
    big = await createFixtureRepo();
    const files: Record<string, string> = {};
    for (let i = 0; i < FILES; i++) files[`many/f${String(i).padStart(5, "0")}.txt`] = `file ${i}\n`;
    for (const d of DIRS) files[`many/${d}/inside.txt`] = `${d}\n`;
    await big.commit("main", files, { message: "A big directory\n" });
    const res = await alice.api("/v1/repositories", { method: "POST", json: { url: big.url, name: "big" } });
    expect(res.status).toBe(201);
    bigRepo = await res.json();
  });
  afterAll(() => big?.cleanup());

  it("answers the first page of a large directory with a cursor to the rest, directories first", async () => {
    const res = await list("");
    expect(res.status).toBe(200);
    const page: Page = await res.json();
    expect(page.path).toBe("many");
    expect(page.entries).toHaveLength(1000);
    expect(page.entries.slice(0, 6).map((e) => [e.name, e.type])).toEqual([
      ["dir-a", "dir"],
      ["dir-b", "dir"],
      ["dir-c", "dir"],
      ["foo", "dir"],
      ["foo-bar", "dir"],
      ["f00000.txt", "file"],
    ]);
    expect(page.entries[5]).toEqual({ name: "f00000.txt", path: "many/f00000.txt", type: "file", size: "file 0\n".length });
    expect(page.next_cursor).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it("pages through every entry once, in order, at one commit", async () => {
    const seen: string[] = [];
    const commits = new Set<string>();
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await list(`&limit=400${cursor ? `&cursor=${cursor}` : ""}`);
      expect(res.status).toBe(200);
      const page: Page = await res.json();
      expect(page.entries.length).toBeLessThanOrEqual(400);
      seen.push(...page.entries.map((e) => e.name));
      commits.add(page.commit_hash);
      cursor = page.next_cursor;
      pages++;
    } while (cursor);
    const files = Array.from({ length: FILES }, (_, i) => `f${String(i).padStart(5, "0")}.txt`);
    expect(seen).toEqual([...[...DIRS].sort(), ...files]);
    expect(pages).toBe(Math.ceil((FILES + DIRS.length) / 400));
    expect(commits.size).toBe(1);
  });

  it("answers a small directory in one page", async () => {
    const page: Page = await (await alice.api(`/v1/repositories/${bigRepo.id}/files`)).json();
    expect(page.next_cursor).toBeNull();
    expect(page.entries.map((e) => e.name)).toContain("README.md");
  });

  it.each([
    ["limit above the cap", "&limit=1001", "limit"],
    ["limit zero", "&limit=0", "limit"],
    ["limit not a number", "&limit=lots", "limit"],
    ["a cursor that is not one", "&cursor=not-a-cursor", "cursor"],
    ["a cursor that is not base64url", "&cursor=a%2Fb", "cursor"],
    ["an empty cursor", "&cursor=", "cursor"],
    ["a repositories-list cursor", `&cursor=${Buffer.from("v1:0190a1b2-0000-7000-8000-000000000001").toString("base64url")}`, "cursor"],
  ])("refuses %s with 422", async (_name, qs, field) => {
    const res = await list(qs);
    expect(res.status).toBe(422);
    expect((await res.json()).detail[0].loc).toEqual(["query", field]);
  });
});

describe("the OpenAPI document", () => {
  type Op = {
    parameters?: { name: string; in: string; schema: { maximum?: number; default?: number } }[];
    responses: Record<string, { headers?: Record<string, unknown> }>;
  };
  let paths: Record<string, Record<string, Op>>;
  beforeAll(async () => {
    paths = (await (await fetch(`${svc.url}/openapi.json`)).json()).paths;
  });

  it("documents the directory listing's pages", () => {
    const op = paths["/v1/repositories/{repository_id}/files"]!.get!;
    const limit = op.parameters!.find((p) => p.name === "limit" && p.in === "query")!;
    expect(limit.schema).toMatchObject({ maximum: 1000, default: 1000 });
    expect(op.parameters!.some((p) => p.name === "cursor" && p.in === "query")).toBe(true);
  });

  it.each([
    ["post", "/v1/repositories"],
    ["patch", "/v1/repositories/{repository_id}"],
    ["get", "/v1/repositories/{repository_id}/refs"],
    ["get", "/v1/repositories/{repository_id}/files"],
    ["get", "/v1/repositories/{repository_id}/files/{path}"],
    ["post", "/v1/repositories/{repository_id}/{commit_hash}/runs"],
    ["get", "/v1/repositories/{repository_id}/{commit_hash}/runs"],
    ["post", "/v1/repositories/{repository_id}/analysis/{commit_hash}"],
    ["get", "/v1/repositories/{repository_id}/analysis/{commit_hash}"],
  ])("%s %s documents the busy 503 with Retry-After and the policy's 409", (method, path) => {
    const op = paths[path]![method]!;
    expect(op.responses["503"]?.headers, "Retry-After").toHaveProperty("Retry-After");
    expect(op.responses["409"], "409").toBeDefined();
  });
});

describe("tenancy", () => {
  it("answers 404 for every operation on another account's repository", async () => {
    const calls: [string, string, unknown?][] = [
      ["GET", `/v1/repositories/${repo.id}`],
      ["PATCH", `/v1/repositories/${repo.id}`, { auto_analyze: false }],
      ["GET", `/v1/repositories/${repo.id}/refs`],
      ["GET", `/v1/repositories/${repo.id}/files`],
      ["GET", `/v1/repositories/${repo.id}/files/README.md`],
      ["DELETE", `/v1/repositories/${repo.id}`],
    ];
    for (const [method, path, json] of calls) {
      const res = await bob.api(path, { method, json });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(await res.json()).toEqual({ detail: "Repository not found" });
    }
    const list = await (await bob.api("/v1/repositories?limit=100")).json();
    expect(list.items.map((r: { id: string }) => r.id)).not.toContain(repo.id);
    expect((await alice.api(`/v1/repositories/${repo.id}`)).status).toBe(200);
  });

  it("deletes a repository and its scoped variables", async () => {
    const other = await createFixtureRepo();
    try {
      const created = await (await alice.api("/v1/repositories", { method: "POST", json: { url: other.url, name: "to-delete" } })).json();
      const v = await (await alice.api("/v1/environment-variables", { method: "POST", json: { name: "X", value: "1", repository_id: created.id } })).json();
      expect((await alice.api(`/v1/repositories/${created.id}`, { method: "DELETE" })).status).toBe(204);
      expect((await alice.api(`/v1/repositories/${created.id}`)).status).toBe(404);
      expect((await alice.api(`/v1/environment-variables/${v.id}`)).status).toBe(404);
    } finally {
      await other.cleanup();
    }
  });
});

describe("repository pagination", () => {
  it("pages newest first without gaps or repeats while rows are added", async () => {
    const carol = await svc.tenant();
    const ids: string[] = [];
    const insert = async () => {
      const id = newId();
      const now = new Date();
      await svc.db
        .insertInto("repositories")
        .values({
          id,
          account_id: carol.accountId,
          name: `r${id}`,
          url: `https://example.invalid/${id}`,
          provider: "git",
          default_branch: "main",
          created_at: now,
          updated_at: now,
        })
        .execute();
      return id;
    };
    for (let i = 0; i < 45; i++) ids.push(await insert());
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: { id: string }[]; next_cursor: string | null } = await (
        await carol.api(`/v1/repositories?limit=20${cursor ? `&cursor=${cursor}` : ""}`)
      ).json();
      seen.push(...page.items.map((r) => r.id));
      cursor = page.next_cursor;
      await insert();
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
  });
});

describe("clone URL policy (local repositories not allowed)", () => {
  let strict: TestService;
  let t: Tenant;
  beforeAll(async () => {
    strict = await startTestService({ CODEPLANE_ALLOW_LOCAL_REPOSITORIES: "false" });
    t = await strict.tenant();
  });
  afterAll(() => strict?.close());

  it.each([
    ["file://", () => fixture.url],
    ["a local path", () => fixture.path],
    ["loopback", () => "https://127.0.0.1/repo.git"],
    ["localhost", () => "https://localhost/repo.git"],
    ["a private address", () => "https://10.1.2.3/repo.git"],
    ["the metadata address", () => "https://169.254.169.254/latest"],
    ["an IPv6 loopback", () => "https://[::1]/repo.git"],
    ["plain http", () => "http://127.0.0.1/repo.git"],
    ["embedded credentials", () => "https://user:pass@127.0.0.1/repo.git"],
  ])("refuses %s with 422", async (_name, url) => {
    const res = await t.api("/v1/repositories", { method: "POST", json: { url: url() } });
    expect(res.status).toBe(422);
    const detail = (await res.json()).detail;
    expect(detail[0]).toMatchObject({ loc: ["body", "url"], type: "value_error" });
  });
});
