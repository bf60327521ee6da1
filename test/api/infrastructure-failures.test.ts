import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Tenant } from "../helpers/service.ts";
import { twoTenantsWithRepository, type TwoTenants } from "../helpers/two-tenants.ts";

// Under load the service's dependencies fail in known ways: the Kubernetes API
// server throttles, fails, conflicts or drops the connection; the database
// pool has no free connection. Each must answer a documented 503 with
// Retry-After, or 409, with a detail: never 500 (issue 29's Helm run got
// `POST .../runs: 500`). The cluster here is a fake API server on loopback that
// answers each request as the test says; the pool is exhausted for real.

type Answer = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A Kubernetes API server that answers custom-resource requests with `next` (a created object by default). */
function fakeApiServer(): { server: Server; url: () => string; answer: (a: Answer | null) => void } {
  let next: Answer | null = null;
  const created: Answer = (_req, res, body) => {
    const obj = JSON.parse(body) as { metadata: Record<string, unknown> };
    res.writeHead(201, { "content-type": "application/json" });
    res.end(JSON.stringify({ ...obj, metadata: { ...obj.metadata, creationTimestamp: new Date().toISOString() } }));
  };
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString("utf8")));
    req.on("end", () => {
      if (req.method === "GET") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ apiVersion: "v1", kind: "List", items: [], metadata: {} }));
        return;
      }
      (next ?? created)(req, res, body);
    });
  });
  return { server, url: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}`, answer: (a) => (next = a) };
}

const status =
  (code: number, headers: Record<string, string> = {}): Answer =>
  (_req, res) => {
    res.writeHead(code, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", code, reason: "Injected", message: "injected by the test" }));
  };
const reset: Answer = (req) => req.socket.destroy();

let setup: TwoTenants;
let alice: Tenant;
let repoId: string;
const kube = fakeApiServer();
let kubeconfigDir: string;

beforeAll(async () => {
  await new Promise<void>((resolve) => kube.server.listen(0, "127.0.0.1", resolve));
  kubeconfigDir = mkdtempSync(path.join(tmpdir(), "codeplane-kubeconfig-"));
  const kubeconfig = path.join(kubeconfigDir, "kubeconfig");
  writeFileSync(
    kubeconfig,
    `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${kube.url()}", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u, namespace: codeplane}}]
current-context: c
`,
  );
  // One database connection, so one request holding it exhausts the pool.
  setup = await twoTenantsWithRepository({ KUBECONFIG: kubeconfig, CODEPLANE_COMPONENTS: "api", CODEPLANE_DB_POOL_MAX: "1" });
  ({ alice, repoId } = setup);
});
afterAll(async () => {
  await setup?.close();
  await new Promise((resolve) => kube.server.close(resolve));
  rmSync(kubeconfigDir, { recursive: true, force: true });
});

const createRun = () => alice.api(`/v1/repositories/${repoId}/main/runs`, { method: "POST", json: { command: ["echo", "hi"] } });

async function expectAnswer(res: Response, code: 503 | 409, detail: RegExp, retryAfter?: string) {
  const body = (await res.json()) as { detail: unknown };
  expect({ status: res.status, detail: body.detail }).toEqual({ status: code, detail: expect.stringMatching(detail) });
  if (code === 503) expect(res.headers.get("retry-after")).toEqual(retryAfter ?? expect.stringMatching(/^[1-9][0-9]*$/));
}

describe("a Kubernetes API server failing under load", () => {
  it.each([
    ["throttles (429 with Retry-After)", status(429, { "retry-after": "3" }), 503, /throttling/, "3"],
    ["fails (500)", status(500), 503, /failed or was unavailable/, "5"],
    ["is unavailable (503)", status(503), 503, /failed or was unavailable/, "5"],
    ["drops the connection", reset, 503, /./, undefined],
  ] as const)("creating a run when it %s", async (_name, answer, code, detail, retry) => {
    kube.answer(answer);
    await expectAnswer(await createRun(), code, detail, retry);
  });

  it.each([
    ["cancelling", (id: string) => alice.api(`/v1/runs/${id}/cancel`, { method: "POST" })],
    ["deleting", (id: string) => alice.api(`/v1/runs/${id}`, { method: "DELETE" })],
  ])("%s a run when it fails, throttles, conflicts or drops the connection", async (_name, call) => {
    // A fresh run for each failure: a delete hides the run before it asks Kubernetes.
    for (const [answer, code, detail] of [
      [status(500), 503, /Kubernetes API server failed/],
      [reset, 503, /./],
      [status(429), 503, /throttling/],
      [status(409), 409, /concurrent change/],
    ] as const) {
      kube.answer(null);
      const created = await createRun();
      expect(created.status).toBe(201);
      const { run_id } = (await created.json()) as { run_id: string };
      kube.answer(answer);
      await expectAnswer(await call(run_id), code, detail);
    }
  });
});

describe("the database pool exhausted", () => {
  it("answers 503 with Retry-After while a request waits longer than the pool's connection timeout", async () => {
    // A lock taken from outside holds the service's only connection inside a request; the next
    // request then waits for a connection until the pool gives up (connectionTimeoutMillis).
    const outside = new pg.Client({ connectionString: setup.svc.databaseUrl });
    await outside.connect();
    try {
      await outside.query("begin");
      await outside.query("lock table repositories in access exclusive mode");
      const holding = alice.api(`/v1/repositories/${repoId}`);
      // Wait until the held request is blocked on the lock, by Postgres's own account (an event, not a timer).
      for (;;) {
        const r = await outside.query("select count(*)::int as n from pg_locks where not granted and relation = 'repositories'::regclass");
        if ((r.rows[0] as { n: number }).n > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const res = await alice.api(`/v1/repositories/${repoId}`);
      await expectAnswer(res, 503, /database is busy/, "2");
      await outside.query("rollback");
      expect((await holding).status).toBe(200);
    } finally {
      await outside.end();
    }
    // The pool recovers by itself.
    expect((await alice.api(`/v1/repositories/${repoId}`)).status).toBe(200);
    expect(setup.svc.logs.some((l) => l.includes('"msg":"infrastructure failure"') && l.includes("timeout exceeded when trying to connect"))).toBe(true);
  }, 60_000);
});
