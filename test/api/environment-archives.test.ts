import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintCheckoutToken } from "../../src/domain/checkout/checkout-tokens.ts";
import { claimBuild, findEnvironment, reserveEnvironment } from "../../src/domain/environments/environment-rows.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";

// The internal doors environment archives pass through, over HTTP on the git
// listener as pods reach it: a build stores its log and archive with its
// upload token, a run fetches its own environment with its checkout token,
// and everything else is a 401 or 404 with the usual error body, never a 500.
// The archive limit is enforced while the body streams.

const COMMIT = "c".repeat(40);
const MAX = 1024 * 1024;

let svc: TestService;
let alice: Tenant;
let bob: Tenant;
let base: string;
const repos: Record<string, string> = {};

/** A repository row of the tenant's (no mirror behind it: the doors read rows only). */
async function repository(t: Tenant): Promise<string> {
  const id = crypto.randomUUID();
  await svc.db
    .insertInto("repositories")
    .values({ id, account_id: t.accountId, name: "r", url: "https://example.invalid/r", provider: "git", created_at: new Date(), updated_at: new Date() })
    .execute();
  return id;
}

/** A building environment with a known upload token, as its build Job holds it. */
async function building(t: Tenant, key: string) {
  const { row } = await reserveEnvironment(svc.db, {
    accountId: t.accountId,
    repositoryId: repos[t.accountId]!,
    commitHash: COMMIT,
    key,
    image: "runner:dev",
    definition: { toolchains: [], manifests: [], steps: [], cache_paths: [], packages: [], notes: [], warnings: [] },
  });
  const token = `cpu_${crypto.randomUUID()}`;
  expect(await claimBuild(svc.db, row.id, row.started_at, token, new Date(Date.now() + 600_000))).toBe(true);
  return { id: row.id, token };
}

/** A run of this environment with a live checkout token, as the controller mints it. */
async function runOf(t: Tenant, key: string) {
  const id = crypto.randomUUID();
  await svc.db
    .insertInto("runs")
    .values({
      id,
      account_id: t.accountId,
      repository_id: repos[t.accountId]!,
      commit_hash: COMMIT,
      workflow_id: `ns/run-${id}`,
      status: "preprocessing",
      compute_type: "cpu-general",
      run_config: JSON.stringify({ command: ["true"], parameters: {}, timeout_seconds: 60 }),
      environment: JSON.stringify({ key, image: "runner:dev", warnings: [] }),
      updated_at: new Date(),
    })
    .execute();
  return mintCheckoutToken(svc.db, {
    workloadKind: "run",
    workloadId: id,
    accountId: t.accountId,
    repositoryId: repos[t.accountId]!,
    commitHash: COMMIT,
    expiresAt: new Date(Date.now() + 600_000),
  });
}

const put = (path: string, token: string | null, body: RequestInit["body"]) =>
  fetch(`${base}${path}`, { method: "PUT", headers: token ? { authorization: `Bearer ${token}` } : {}, body, duplex: "half" });
const get = (path: string, token: string | null) => fetch(`${base}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });

beforeAll(async () => {
  svc = await startTestService({ CODEPLANE_GIT_PORT: "0", CODEPLANE_ENVIRONMENT_MAX_BYTES: String(MAX) });
  base = `http://127.0.0.1:${svc.service.gitPort}`;
  alice = await svc.tenant();
  bob = await svc.tenant();
  repos[alice.accountId] = await repository(alice);
  repos[bob.accountId] = await repository(bob);
});
afterAll(() => svc?.close());

describe("the environment archive doors", () => {
  it("store a build's log and archive with its upload token, then give it to its runs only", async () => {
    const key = "a".repeat(64);
    const b = await building(alice, key);
    expect((await put(`/internal/environments/${b.id}/log`, b.token, "==> [1/1] npm ci\nadded 2 packages\n")).status).toBe(204);
    const archive = Buffer.alloc(200_000, 3);
    const stored = await put(`/internal/environments/${b.id}/archive`, b.token, archive);
    expect(stored.status).toBe(201);
    expect(await stored.json()).toEqual({ size: archive.length });
    expect(await findEnvironment(svc.db, alice.accountId, key)).toMatchObject({ status: "ready", log: "==> [1/1] npm ci\nadded 2 packages\n" });

    const mine = await get(`/internal/environments/${key}/archive`, await runOf(alice, key));
    expect(mine.status).toBe(200);
    expect(mine.headers.get("content-type")).toBe("application/gzip");
    expect(Buffer.from(await mine.arrayBuffer()).equals(archive)).toBe(true);

    // Bob's run of the same key (his own account has none), and a run of another key: nothing.
    const other = await get(`/internal/environments/${key}/archive`, await runOf(bob, key));
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual({ detail: "Environment not found" });
    expect((await get(`/internal/environments/${key}/archive`, await runOf(alice, "b".repeat(64)))).status).toBe(404);
    // The spent upload token stores nothing more.
    expect((await put(`/internal/environments/${b.id}/archive`, b.token, "x")).status).toBe(401);
  });

  it.each([
    ["no token", null, "/internal/environments/00000000-0000-4000-8000-000000000000/archive", "put", 401],
    ["an unknown upload token", "cpu_nope", "/internal/environments/00000000-0000-4000-8000-000000000000/archive", "put", 401],
    ["an id that is no id", "cpu_nope", "/internal/environments/..%2F..%2Fetc/archive", "put", 404],
    ["an unknown checkout token", "cpg_" + "x".repeat(43), `/internal/environments/${"a".repeat(64)}/archive`, "get", 401],
    ["a key that is no key", "cpg_" + "x".repeat(43), "/internal/environments/ABC/archive", "get", 404],
  ] as const)("answer %s with %i and the usual error body", async (_name, token, path, method, status) => {
    const res = method === "put" ? await put(path, token, "x") : await get(path, token);
    expect(res.status).toBe(status);
    expect(typeof ((await res.json()) as { detail: unknown }).detail).toBe("string");
    if (status === 401) expect(res.headers.get("www-authenticate")).toMatch(/^Bearer /);
  });

  it("refuse an archive over CODEPLANE_ENVIRONMENT_MAX_BYTES with 413, storing nothing, and a log over 256 KiB", async () => {
    const key = "c".repeat(64);
    const b = await building(alice, key);
    let sent = 0;
    // 8 MiB offered as it is made, in 64 KiB pieces: refused long before the end.
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 8 * MAX) return controller.close();
        sent += 64 * 1024;
        controller.enqueue(new Uint8Array(64 * 1024));
      },
    });
    const res = await put(`/internal/environments/${b.id}/archive`, b.token, body).catch((err: unknown) => err);
    if (res instanceof Response) {
      expect(res.status).toBe(413);
      expect(((await res.json()) as { detail: string }).detail).toMatch(/CODEPLANE_ENVIRONMENT_MAX_BYTES/);
    }
    expect(sent).toBeLessThan(8 * MAX);
    expect(await findEnvironment(svc.db, alice.accountId, key)).toMatchObject({ status: "building", size: null });
    expect((await put(`/internal/environments/${b.id}/log`, b.token, "x".repeat(300 * 1024))).status).toBe(413);
  });
});
