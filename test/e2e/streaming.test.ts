import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { openSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../src/domain/accounts/accounts.ts";
import { createApiKey } from "../../src/domain/auth/api-keys.ts";
import { gitListenerEnv, NODE_ADDRESS, openTestCluster, until, type TestCluster } from "../helpers/cluster.ts";
import { createFixtureRepo, type FixtureRepo } from "../helpers/git-fixture.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/service.ts";
import { sseClient } from "../helpers/sse-client.ts";
import { freePort } from "../helpers/free-port.ts";

// Live output over SSE from a real pod, through the real service running as
// its own process, so it can be killed (SIGKILL) and started again.

const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;
let cluster: TestCluster;
let database: TestDatabase;
let fixture: FixtureRepo;
let env: Record<string, string>;
let key: string;
let repoId: string;
const procs: ChildProcess[] = [];

async function serve(): Promise<{ url: string; proc: ChildProcess; exited: Promise<unknown> }> {
  const port = await freePort();
  // Service logs go to a file per process, for a failure to be explained.
  const logFile = openSync(`${env.CODEPLANE_DATA_DIR}-${procs.length}.log`, "a");
  const proc = spawn(process.execPath, [MAIN, "serve"], { env: { ...env, PORT: String(port) }, stdio: ["ignore", logFile, logFile] });
  procs.push(proc);
  const exited = new Promise((r) => proc.once("exit", r));
  const url = `http://127.0.0.1:${port}`;
  await until("the service to start", 30_000, () =>
    fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    ),
  );
  return { url, proc, exited };
}

const api = (url: string, path: string, json?: unknown) =>
  fetch(url + path, {
    method: json === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${key}`, ...(json !== undefined && { "content-type": "application/json" }) },
    ...(json !== undefined && { body: JSON.stringify(json) }),
  });

beforeAll(async () => {
  cluster = await openTestCluster("cp-e2e-stream");
  database = await createTestDatabase();
  fixture = await createFixtureRepo();
  const gitUrl = await cluster.publish(fixture.path, `e2e-stream-${cluster.namespace}`);
  env = {
    PATH: process.env.PATH ?? "",
    DATABASE_URL: database.url,
    CODEPLANE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    CODEPLANE_DATA_DIR: `/tmp/codeplane-e2e-${cluster.namespace}`,
    CODEPLANE_HOST: "127.0.0.1",
    CODEPLANE_ALLOW_LOCAL_REPOSITORIES: "true",
    CODEPLANE_MIGRATE_ON_START: "false",
    CODEPLANE_LOG_LEVEL: "info",
    CODEPLANE_RATE_LIMIT_REQUESTS: "0",
    KUBECONFIG: cluster.kubeconfig,
    CODEPLANE_NAMESPACE: cluster.namespace,
    CODEPLANE_IMAGE_PULL_POLICY: "Never",
    // One git port for every restart of the service, so a pod created before a restart still checks out.
    ...gitListenerEnv(await freePort(NODE_ADDRESS)),
  };
  const account = await createAccount(database.db, "streamer");
  key = (await createApiKey(database.db, account.id, { name: "e2e" })).key;
  const { url, proc, exited } = await serve();
  const res = await api(url, "/v1/repositories", { url: gitUrl, name: "fixture" });
  expect(res.status).toBe(201);
  repoId = (await res.json()).id;
  proc.kill("SIGTERM");
  await exited;
});
afterAll(async () => {
  for (const p of procs) p.kill("SIGKILL");
  await cluster?.cleanup();
  await database?.drop();
  await fixture?.cleanup();
});

const SCRIPT = 'for i in $(seq 1 30); do echo "out $i"; echo "err $i" >&2; sleep 0.1; done; exit 1';

describe("live run output over SSE", () => {
  it("delivers every line in order with its stream, then status and end; late, resuming and many clients agree", async () => {
    const { url, proc, exited } = await serve();
    try {
      const run = await (await api(url, `/v1/repositories/${repoId}/main/runs`, { command: ["sh", "-c", SCRIPT] })).json();
      const stream = `${url}/v1/runs/${run.run_id}/logs/stream`;
      const first = sseClient(stream, key);
      const crowd = Array.from({ length: 50 }, () => sseClient(stream, key));
      // One client drops out mid-run and comes back with Last-Event-ID.
      const dropper = sseClient(stream, key);
      await until("some lines", 90_000, async () => dropper.lines.length >= 5 || undefined);
      dropper.es.close();
      const lastId = dropper.lines[dropper.lines.length - 1]!.id!;
      const resumed = sseClient(stream, key, { "Last-Event-ID": lastId });

      await Promise.all([first.ended, resumed.ended, ...crowd.map((c) => c.ended)]);
      const lines = first.lines;
      expect(lines).toHaveLength(60);
      expect(lines.filter((l) => l.type === "stdout").map((l) => l.data.line)).toEqual(Array.from({ length: 30 }, (_, i) => `out ${i + 1}`));
      expect(lines.filter((l) => l.type === "stderr").map((l) => l.data.line)).toEqual(Array.from({ length: 30 }, (_, i) => `err ${i + 1}`));
      const seqs = lines.map((l) => l.data.seq!);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(new Set(seqs).size).toBe(60);
      expect(first.events.filter((e) => e.type === "status").map((e) => e.data.status)).toContain("failed");
      expect(first.events[first.events.length - 1]).toEqual({ type: "end", data: { status: "failed", exit_code: 1 } });

      const ids = (c: { lines: { id?: string }[] }) => c.lines.map((l) => l.id);
      expect([...ids(dropper), ...ids(resumed)]).toEqual(ids(first));
      for (const c of crowd) expect(ids(c)).toEqual(ids(first));

      // After the end: the stored lines, then end.
      const late = sseClient(stream, key);
      await late.ended;
      expect(ids(late)).toEqual(ids(first));
      expect(late.events[late.events.length - 1]!.type).toBe("end");
    } finally {
      proc.kill("SIGTERM");
      await exited;
    }
  });

  it("survives its last client leaving while the pod log is being followed", async () => {
    const { url, proc, exited } = await serve();
    try {
      const run = await (await api(url, `/v1/repositories/${repoId}/main/runs`, { command: ["sh", "-c", "echo first; sleep 60"] })).json();
      const client = sseClient(`${url}/v1/runs/${run.run_id}/logs/stream`, key);
      await until("the first line", 90_000, async () => client.lines.length > 0 || undefined);
      client.es.close();
      await new Promise((r) => setTimeout(r, 1500));
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      expect(proc.exitCode).toBeNull();
      expect((await api(url, `/v1/runs/${run.run_id}/cancel`, {})).status).toBe(202);
    } finally {
      proc.kill("SIGTERM");
      await exited;
    }
  });

  it("finishes a run correctly after the controller is killed mid-run and started again", async () => {
    const a = await serve();
    const run = await (
      await api(a.url, `/v1/repositories/${repoId}/main/runs`, { command: ["sh", "-c", 'for i in $(seq 1 8); do echo "tick $i"; sleep 1; done; exit 0'] })
    ).json();
    await until("the run to be running", 90_000, async () => (await (await api(a.url, `/v1/runs/${run.run_id}`)).json()).status === "running");
    a.proc.kill("SIGKILL");
    await a.exited;
    const b = await serve();
    try {
      // b takes over once a's lease expires, then finds the run where it is.
      const done = await until("the run to complete", 120_000, async () => {
        const r = await (await api(b.url, `/v1/runs/${run.run_id}`)).json();
        return r.status === "completed" ? r : undefined;
      });
      expect(done.exit_code).toBe(0);
      await until("all output to be archived", 60_000, async () => {
        const out = await (await api(b.url, `/v1/runs/${run.run_id}/logs/stdout`)).json();
        return out.content === Array.from({ length: 8 }, (_, i) => `tick ${i + 1}\n`).join("") || undefined;
      });
    } finally {
      b.proc.kill("SIGTERM");
      await b.exited;
    }
  });
});
