// The run log stream's `setup` events end to end: LogHub with its setup feeds over a real
// migrated Postgres (pgSetupStore, pgLogStore), streamLogs in a tiny Koa app on a loopback port,
// and a real EventSource client. The build pod's install log is a fake; the "controller" is the
// test writing the runs and environments rows directly.
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { EventSource } from "eventsource";
import { sql } from "kysely";
import Koa from "koa";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseAfter, streamLogs } from "../../src/api/sse.ts";
import { pgLogStore } from "../../src/db/log-store.ts";
import type { EnvironmentsTable } from "../../src/db/schema.ts";
import { pgSetupStore } from "../../src/db/setup-store.ts";
import { RUN_TABLE } from "../../src/db/workload-tables.ts";
import { createAccount } from "../../src/domain/accounts/accounts.ts";
import { newId } from "../../src/domain/shared/ids.ts";
import { createRootLogger } from "../../src/logger.ts";
import type { SetupLogSource } from "../../src/logs/contracts.ts";
import { LogHub } from "../../src/logs/hub.ts";
import { RUN_PHASES, type RunPhase } from "../../src/resources/run.ts";
import { insertRunRow } from "../helpers/seed.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/service.ts";

const TS = "2026-11-26T13:00:01.234Z";
/** An environment key: a sha256 in hex. */
const newKey = () => randomBytes(32).toString("hex");

/** The build pods' install logs: a follow replays what was written, then gets new lines. */
class FakeInstallLogs implements SetupLogSource {
  written = new Map<string, string[]>();
  follows: { id: string; stopped: boolean; onLine: (text: string, ts: string) => void; onEnd: (complete: boolean) => void }[] = [];
  follow(id: string, onLine: (text: string, ts: string) => void, onEnd: (complete: boolean) => void) {
    const f = { id, stopped: false, onLine, onEnd };
    this.follows.push(f);
    const backlog = [...(this.written.get(id) ?? [])];
    setImmediate(() => {
      for (const t of backlog) if (!f.stopped) onLine(t, TS);
    });
    return () => void (f.stopped = true);
  }
  write(id: string, ...texts: string[]) {
    this.written.set(id, [...(this.written.get(id) ?? []), ...texts]);
    for (const f of this.follows) if (f.id === id && !f.stopped) for (const t of texts) f.onLine(t, TS);
  }
  finish(id: string) {
    for (const f of this.follows) if (f.id === id && !f.stopped) [f.stopped] = [true, f.onEnd(true)];
  }
  followsOf(id: string) {
    return this.follows.filter((f) => f.id === id);
  }
}

let database: TestDatabase;
let server: Server;
let base: string;
let hub: LogHub;
let accountId: string;
let repositoryId: string;
const installs = new FakeInstallLogs();
const served: { lastEventId: string; socket: Socket }[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  accountId = (await createAccount(database.db, `setup-${newId().slice(-12)}`)).id;
  repositoryId = newId();
  const now = new Date();
  await database.db
    .insertInto("repositories")
    .values({
      id: repositoryId,
      account_id: accountId,
      name: "r",
      url: "https://example.invalid/r.git",
      provider: "git",
      default_branch: "main",
      created_at: now,
      updated_at: now,
    })
    .execute();
  hub = new LogHub({
    store: pgLogStore(database.db, RUN_TABLE),
    live: null,
    logger: createRootLogger("silent"),
    pollIntervalMs: 40,
    dbPollIntervalMs: 40,
    setup: { store: pgSetupStore(database.db), live: installs, phase: "preprocessing", pollIntervalMs: 40, endGraceMs: 200, lingerMs: 100 },
  });
  const app = new Koa();
  app.use(async (ctx) => {
    const m = /^\/runs\/([0-9a-f-]{36})\/logs\/stream$/.exec(ctx.path);
    if (!m) return void (ctx.status = 404);
    const after = parseAfter(
      ctx.get("Last-Event-ID") || undefined,
      typeof ctx.query.after === "string" ? ctx.query.after : undefined,
      (p) => RUN_PHASES.includes(p as RunPhase),
      "preprocessing",
    );
    if ("error" in after) {
      ctx.status = 422;
      ctx.body = { detail: [{ loc: after.loc, msg: after.error }] };
      return;
    }
    served.push({ lastEventId: ctx.get("Last-Event-ID"), socket: ctx.req.socket });
    await streamLogs(ctx, { hub, id: m[1]!, afterSeq: after.seq, afterPhase: after.phase, afterSetup: after.setup, retryMs: 50 });
  });
  server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  hub?.close();
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await database?.drop();
});

async function insertEnvironment(key: string, e: Partial<Pick<EnvironmentsTable, "status" | "log" | "completed_at">> = {}): Promise<string> {
  const id = newId();
  await database.db
    .insertInto("environments")
    .values({
      id,
      account_id: accountId,
      repository_id: repositoryId,
      commit_hash: "a".repeat(40),
      key,
      image: "codeplane-runner:dev",
      definition: JSON.stringify({ toolchains: [], manifests: [], steps: [], cache_paths: [], packages: [], notes: [], warnings: [] }),
      status: e.status ?? "building",
      log: e.log ?? null,
      completed_at: e.completed_at ?? null,
    })
    .execute();
  return id;
}

async function insertRun(
  status: "pending" | "preprocessing" | "running",
  environment: { key: string | null; cache?: "hit" | "built" } | null,
): Promise<string> {
  const id = await insertRunRow(database.db, { accountId, repositoryId, status });
  if (environment) {
    await database.db
      .updateTable("runs")
      .set({ environment: JSON.stringify({ image: "codeplane-runner:dev", warnings: [], ...environment }) })
      .where("id", "=", id)
      .execute();
  }
  return id;
}

const setRun = (id: string, status: "preprocessing" | "running" | "completed", extra: { logs_complete?: boolean; exit_code?: number } = {}) =>
  database.db
    .updateTable("runs")
    .set({ status, ...extra, updated_at: new Date() })
    .where("id", "=", id)
    .execute();

// The database's clock, as the run's created_at (its default, now()): a JavaScript Date has only
// milliseconds, so a build ended within the millisecond of the run's insert would read as ended
// before it (a cache hit, with no setup to send), which a quiet machine managed in CI.
const buildEnded = (id: string, log: string) =>
  database.db
    .updateTable("environments")
    .set({ status: "ready", log, completed_at: sql<Date>`clock_timestamp()` })
    .where("id", "=", id)
    .execute();

interface Received {
  type: string;
  id: string;
  data: Record<string, unknown>;
}

function client(url: string, headers: Record<string, string> = {}) {
  const events: Received[] = [];
  let resolveEnd!: () => void;
  const ended = new Promise<void>((r) => (resolveEnd = r));
  const es = new EventSource(url, { fetch: (u, init) => fetch(u, { ...init, headers: { ...init.headers, ...headers } }) });
  for (const type of ["setup", "stdout", "stderr", "status", "end"]) {
    es.addEventListener(type, (e: MessageEvent) => {
      events.push({ type, id: e.lastEventId, data: JSON.parse(e.data as string) as Record<string, unknown> });
      if (type === "end") {
        es.close();
        resolveEnd();
      }
    });
  }
  return {
    es,
    events,
    ended,
    get setup() {
      return events.filter((e) => e.type === "setup");
    },
    /** status:<phase>, setup:<n>, stdout:<seq>, end */
    get trace() {
      return events.map((e) =>
        e.type === "status"
          ? `status:${e.data.status as string}`
          : e.type === "setup"
            ? `setup:${e.data.n as number}`
            : e.type === "end"
              ? "end"
              : `${e.type}:${e.data.seq as number}`,
      );
    },
  };
}

const streamUrl = (runId: string, query = "") => `${base}/runs/${runId}/logs/stream${query}`;
const until = (fn: () => void, timeout = 15_000) => vi.waitFor(fn, { timeout, interval: 10 });

describe("pgSetupStore.target: which build a run waits for", () => {
  const past = new Date(Date.now() - 3_600_000);
  const later = new Date(Date.now() + 3_600_000);
  it.each<[string, { status: EnvironmentsTable["status"]; completed_at: Date | null } | null, "hit" | "built" | undefined, boolean]>([
    ["a build under way", { status: "building", completed_at: null }, undefined, true],
    ["a build that ended after the run was made", { status: "ready", completed_at: later }, undefined, true],
    ["a failed build that ended after the run was made", { status: "failed", completed_at: later }, undefined, true],
    ["an environment ready before the run (a cache hit)", { status: "ready", completed_at: past }, undefined, false],
    ["a run the controller recorded as a cache hit", { status: "building", completed_at: null }, "hit", false],
    ["a run the controller recorded as built", { status: "ready", completed_at: past }, "built", true],
    ["a key with no live row", null, undefined, false],
  ])("%s → %s", async (_what, env, cache, waits) => {
    const key = newKey();
    const envId = env ? await insertEnvironment(key, env) : null;
    const runId = await insertRun("preprocessing", { key, ...(cache && { cache }) });
    expect(await pgSetupStore(database.db).target(runId)).toEqual(waits ? { environmentId: envId } : null);
  });

  it("is null for a run without an environment, or with an image only", async () => {
    const store = pgSetupStore(database.db);
    expect(await store.target(await insertRun("preprocessing", null))).toBeNull();
    expect(await store.target(await insertRun("preprocessing", { key: null }))).toBeNull();
    expect(await store.target(newId())).toBeNull();
  });

  it("does not follow a deleted environment", async () => {
    const key = newKey();
    const envId = await insertEnvironment(key);
    await database.db.updateTable("environments").set({ deleted_at: new Date() }).where("id", "=", envId).execute();
    expect(await pgSetupStore(database.db).target(await insertRun("preprocessing", { key }))).toBeNull();
    expect(await pgSetupStore(database.db).environment(envId)).toBeNull();
  });
});

describe("setup events over SSE", () => {
  it("streams the install to two runs waiting on one build, resumes a cut client without loss or repeat, then running and the command's lines", async () => {
    const key = newKey();
    const envId = await insertEnvironment(key);
    const runA = await insertRun("preprocessing", { key });
    const runB = await insertRun("preprocessing", { key });
    installs.write(envId, "==> [1/1] pip install -r requirements.txt", "Collecting click==8.5.1");
    const a = client(streamUrl(runA));
    const b = client(streamUrl(runB));
    await until(() => {
      expect(a.setup).toHaveLength(2);
      expect(b.setup).toHaveLength(2);
    });
    expect(a.setup[0]).toEqual({ type: "setup", id: "0:preprocessing/1", data: { n: 1, ts: TS, line: "==> [1/1] pip install -r requirements.txt" } });
    // One follow of the build for both runs and both clients.
    expect(installs.followsOf(envId)).toHaveLength(1);
    expect(hub.activeSetupFeeds).toBe(1);

    // A's connection is cut; EventSource reconnects with the last id it had, and gets what it missed once.
    const before = served.length;
    served
      .filter((s) => s.lastEventId === "")
      .at(0)!
      .socket.destroy();
    installs.write(envId, "Collecting tabulate==0.10.0");
    await until(() => expect(served.slice(before).some((s) => s.lastEventId === "0:preprocessing/2")).toBe(true));
    installs.write(envId, "Successfully installed click-8.5.1 tabulate-0.10.0", "==> environment installed");
    installs.finish(envId);
    await buildEnded(envId, "stored copy\n");
    for (const c of [a, b]) await until(() => expect(c.setup.map((e) => e.data.n)).toEqual([1, 2, 3, 4, 5]));
    expect(b.setup.map((e) => e.data.line)).toEqual([
      "==> [1/1] pip install -r requirements.txt",
      "Collecting click==8.5.1",
      "Collecting tabulate==0.10.0",
      "Successfully installed click-8.5.1 tabulate-0.10.0",
      "==> environment installed",
    ]);

    for (const run of [runA, runB]) {
      await setRun(run, "running");
      await database.db
        .insertInto("run_log_lines")
        .values({ run_id: run, seq: 1, stream: "stdout", ts: new Date(TS), line: "csvstat: 3 rows" })
        .execute();
      await setRun(run, "completed", { logs_complete: true, exit_code: 0 });
    }
    await Promise.all([a.ended, b.ended]);
    const expected = [
      "status:pending",
      "status:preprocessing",
      "setup:1",
      "setup:2",
      "setup:3",
      "setup:4",
      "setup:5",
      "status:running",
      "stdout:1",
      "status:completed",
      "end",
    ];
    expect(a.trace).toEqual(expected);
    expect(b.trace).toEqual(expected);
    await until(() => expect(hub.activeSetupFeeds).toBe(0));
  });

  it("gives a client that comes after the build ended, before the command started, the rest of the stored log by line index", async () => {
    const key = newKey();
    const envId = await insertEnvironment(key);
    const run = await insertRun("preprocessing", { key });
    await buildEnded(envId, "==> [1/1] npm ci\nadded 2 packages in 1s\n==> environment installed\n");
    const c = client(streamUrl(run, "?after=0:preprocessing/1"));
    await until(() => expect(c.setup.map((e) => e.data.n)).toEqual([2, 3]));
    expect(c.setup[0]!.id).toBe("0:preprocessing/2");
    expect(c.setup.map((e) => e.data.line)).toEqual(["added 2 packages in 1s", "==> environment installed"]);
    // The stored lines carry the build's end as their time.
    expect(Number.isNaN(Date.parse(c.setup[0]!.data.ts as string))).toBe(false);
    expect(installs.followsOf(envId)).toHaveLength(0);
    await setRun(run, "running");
    await until(() => expect(c.trace.at(-1)).toBe("status:running"));
    await setRun(run, "completed", { logs_complete: true, exit_code: 0 });
    await c.ended;
    expect(c.trace).toEqual(["setup:2", "setup:3", "status:running", "status:completed", "end"]);
  });

  it("sends no setup for a cache hit, nor to a client that comes once the command has started", async () => {
    const key = newKey();
    await insertEnvironment(key, { status: "ready", log: "cached install\n", completed_at: new Date(Date.now() - 60_000) });
    const hit = await insertRun("preprocessing", { key });
    const c = client(streamUrl(hit));
    await until(() => expect(c.trace).toEqual(["status:pending", "status:preprocessing"]));

    const key2 = newKey();
    const envId = await insertEnvironment(key2);
    const started = await insertRun("running", { key: key2, cache: "built" });
    await buildEnded(envId, "a\nb\n");
    const d = client(streamUrl(started));
    await until(() => expect(d.trace).toEqual(["status:pending", "status:preprocessing", "status:running"]));
    await setRun(hit, "running");
    await until(() => expect(c.trace.at(-1)).toBe("status:running"));
    for (const run of [hit, started]) await setRun(run, "completed", { logs_complete: true, exit_code: 0 });
    await Promise.all([c.ended, d.ended]);
    expect(c.setup).toEqual([]);
    expect(d.setup).toEqual([]);
    expect(d.trace).toEqual(["status:pending", "status:preprocessing", "status:running", "status:completed", "end"]);
  });

  it("answers 422 to a setup id of another phase", async () => {
    const run = await insertRun("preprocessing", null);
    const res = await fetch(streamUrl(run, "?after=0:running/3"));
    expect(res.status).toBe(422);
    expect(JSON.stringify(await res.json())).toContain("<seq>:preprocessing/<n>");
  });
});
