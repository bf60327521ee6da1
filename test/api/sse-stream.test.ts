// The SSE stream end to end: LogHub over a real migrated Postgres, streamLogs in a tiny Koa app
// on a loopback port, and a real EventSource client. The live upstream is a fake pod log; the
// "controller" is the test writing run_log_lines and the runs row directly.
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { EventSource } from "eventsource";
import Koa from "koa";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseAfter, streamLogs } from "../../src/api/sse.ts";
import type { RunsTable } from "../../src/db/schema.ts";
import { createAccount } from "../../src/domain/accounts/accounts.ts";
import type { LiveLogSource, LogLine } from "../../src/logs/contracts.ts";
import { LogHub } from "../../src/logs/hub.ts";
import { pgLogStore } from "../../src/db/log-store.ts";
import { RUN_TABLE } from "../../src/db/workload-tables.ts";
import { newId } from "../../src/domain/shared/ids.ts";
import { createRootLogger } from "../../src/logger.ts";
import { RUN_PHASES, type RunPhase } from "../../src/resources/run.ts";
import { insertRunRow } from "../helpers/seed.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/service.ts";

const TS = "2026-11-22T04:13:09.123Z";

/** The pod logs: a follow replays what was written after afterSeq, then gets new lines. */
class FakePodLogs implements LiveLogSource {
  written = new Map<string, LogLine[]>();
  follows: { runId: string; afterSeq: number; stopped: boolean; onLine: (l: LogLine) => void }[] = [];
  follow(runId: string, afterSeq: number, onLine: (l: LogLine) => void) {
    const f = { runId, afterSeq, stopped: false, onLine };
    this.follows.push(f);
    const backlog = (this.written.get(runId) ?? []).filter((l) => l.seq > afterSeq);
    setImmediate(() => {
      for (const l of backlog) if (!f.stopped) onLine(l);
    });
    return () => void (f.stopped = true);
  }
  write(runId: string, lines: LogLine[]) {
    const w = this.written.get(runId) ?? [];
    w.push(...lines);
    this.written.set(runId, w);
    for (const f of this.follows) if (f.runId === runId && !f.stopped) for (const l of lines) f.onLine(l);
  }
  followsOf(runId: string) {
    return this.follows.filter((f) => f.runId === runId);
  }
}

let database: TestDatabase;
let server: Server;
let base: string;
let hub: LogHub;
let accountId: string;
let repositoryId: string;
const pods = new FakePodLogs();
/** Each stream request the app served: what it resumed after, and its socket (to cut it). */
const served: { runId: string; lastEventId: string; after: number; socket: Socket }[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  accountId = (await createAccount(database.db, `sse-${newId().slice(-12)}`)).id;
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
  hub = new LogHub({ store: pgLogStore(database.db, RUN_TABLE), live: pods, logger: createRootLogger("silent"), pollIntervalMs: 40, dbPollIntervalMs: 40 });

  const app = new Koa();
  app.use(async (ctx) => {
    const m = /^\/runs\/([0-9a-f-]{36})\/logs\/stream$/.exec(ctx.path);
    if (!m) return void (ctx.status = 404);
    const runId = m[1] as string;
    const after = parseAfter(ctx.get("Last-Event-ID") || undefined, typeof ctx.query.after === "string" ? ctx.query.after : undefined, (p) =>
      RUN_PHASES.includes(p as RunPhase),
    );
    if ("error" in after) {
      ctx.status = 422;
      ctx.body = { detail: [{ loc: after.loc, msg: after.error, type: "int_parsing" }] };
      return;
    }
    served.push({ runId, lastEventId: ctx.get("Last-Event-ID"), after: after.seq, socket: ctx.req.socket });
    const ping = typeof ctx.query.ping === "string" ? Number(ctx.query.ping) : 15_000;
    await streamLogs(ctx, { hub, id: runId, afterSeq: after.seq, afterPhase: after.phase, pingIntervalMs: ping, retryMs: 50 });
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

const insertRun = (status: RunsTable["status"] = "running") => insertRunRow(database.db, { accountId, repositoryId, status });

function lines(from: number, to: number, text: (seq: number) => string = (s) => `line ${s}`): LogLine[] {
  return Array.from({ length: to - from + 1 }, (_, i) => {
    const seq = from + i;
    return { seq, stream: seq % 4 === 0 ? "stderr" : "stdout", ts: TS, line: text(seq) };
  });
}

async function archive(runId: string, ls: LogLine[]) {
  if (ls.length === 0) return;
  await database.db
    .insertInto("run_log_lines")
    .values(ls.map((l) => ({ run_id: runId, seq: l.seq, stream: l.stream, ts: new Date(l.ts), line: l.line })))
    .execute();
}

/** What the run's container and the controller do: the line appears in the pod log, then in Postgres. */
async function produce(runId: string, ls: LogLine[]) {
  pods.write(runId, ls);
  await archive(runId, ls);
}

async function finish(runId: string, status: RunsTable["status"], exitCode: number | null) {
  await database.db.updateTable("runs").set({ status, exit_code: exitCode, logs_complete: true, updated_at: new Date() }).where("id", "=", runId).execute();
}

interface Received {
  type: string;
  /** Lines only: the event id (for status and end, EventSource just repeats the last one). */
  id?: string;
  data: unknown;
}

/** A real EventSource client that records every event and closes on end. */
function client(url: string, headers: Record<string, string> = {}) {
  const events: Received[] = [];
  let errors = 0;
  let resolveEnd!: () => void;
  const ended = new Promise<void>((r) => (resolveEnd = r));
  const es = new EventSource(url, { fetch: (u, init) => fetch(u, { ...init, headers: { ...init.headers, ...headers } }) });
  const record = (type: string) => (e: MessageEvent) => {
    const data: unknown = JSON.parse(e.data as string);
    events.push(type === "stdout" || type === "stderr" ? { type, id: e.lastEventId, data } : { type, data });
    if (type === "end") {
      es.close();
      resolveEnd();
    }
  };
  for (const type of ["stdout", "stderr", "status", "end"]) es.addEventListener(type, record(type));
  es.addEventListener("error", () => void errors++);
  return {
    es,
    events,
    ended,
    get errors() {
      return errors;
    },
    get lines() {
      return events.filter((e) => e.type === "stdout" || e.type === "stderr");
    },
  };
}

const streamUrl = (runId: string, query = "") => `${base}/runs/${runId}/logs/stream${query}`;
const until = (fn: () => void, timeout = 10_000) => vi.waitFor(fn, { timeout, interval: 10 });
const statusEvents = (...phases: string[]): Received[] => phases.map((status) => ({ type: "status", data: { status } }));
const expectedEvent = (l: LogLine): Received => ({ type: l.stream, id: String(l.seq), data: { seq: l.seq, ts: l.ts, line: l.line } });

describe("run log stream over SSE", () => {
  it("streams stored and live lines with their ids in order, then status and end; odd lines round-trip", async () => {
    const runId = await insertRun("running");
    const special = [
      "carriage\rreturn",
      "trailing cr\r",
      "crlf inside\r\nand a newline\n",
      "",
      "unicode: héllo wörld – 日本語 – 😀🚀 – \u2028\u2029 – \u200b",
      'data: forged\n\nevent: end\ndata: {"status":"completed"}',
      "x".repeat(200_000) + "é",
      "  leading and trailing spaces  ",
      'tab\tand \\ backslash and "quotes"',
    ];
    const all: LogLine[] = [];
    let seq = 0;
    const next = (text: string, stream: "stdout" | "stderr" = "stdout"): LogLine => {
      const l: LogLine = { seq: ++seq, stream, ts: TS, line: text };
      all.push(l);
      return l;
    };
    await produce(runId, [next("before connect 1"), next("before connect 2", "stderr")]);
    const c = client(streamUrl(runId));
    await until(() => expect(c.events.filter((e) => e.type !== "status")).toHaveLength(2));
    for (const [i, text] of special.entries()) await produce(runId, [next(text, i % 2 ? "stderr" : "stdout")]);
    // Lines the live log never showed (the pod went away), only stored by the controller.
    await archive(runId, [next("archived only 1"), next("archived only 2", "stderr")]);
    await finish(runId, "completed", 0);
    await c.ended;

    expect(c.events).toEqual([
      // A run found running went through the phases before it: a client joining now gets them all, in order.
      ...statusEvents("pending", "preprocessing", "running"),
      ...all.map(expectedEvent),
      { type: "status", data: { status: "completed" } },
      { type: "end", data: { status: "completed", exit_code: 0 } },
    ]);
    expect(c.errors).toBe(0);
  });

  it("resumes after a dropped connection with Last-Event-ID, losing and repeating nothing", async () => {
    const runId = await insertRun("running");
    await produce(runId, lines(1, 5));
    const c = client(streamUrl(runId));
    let seq = 5;
    while (c.lines.length < 12) {
      await produce(runId, lines(seq + 1, seq + 3));
      seq += 3;
      await new Promise((r) => setTimeout(r, 5));
    }
    // Cut the connection from the server side, mid-stream, while lines keep coming.
    const first = served.filter((s) => s.runId === runId);
    expect(first).toHaveLength(1);
    first[0]!.socket.destroy();
    for (let i = 0; i < 10; i++) {
      await produce(runId, lines(seq + 1, seq + 4));
      seq += 4;
      await new Promise((r) => setTimeout(r, 10));
    }
    await until(() => expect(served.filter((s) => s.runId === runId)).toHaveLength(2));
    await produce(runId, lines(seq + 1, seq + 5));
    seq += 5;
    await finish(runId, "failed", 3);
    await c.ended;

    const again = served.filter((s) => s.runId === runId)[1]!;
    expect(Number(again.lastEventId)).toBeGreaterThanOrEqual(12);
    expect(again.after).toBe(Number(again.lastEventId));
    expect(c.errors).toBeGreaterThanOrEqual(1);
    expect(c.lines).toEqual(lines(1, seq).map(expectedEvent));
    expect(c.events.at(-1)).toMatchObject({ type: "end", data: { status: "failed", exit_code: 3 } });
    expect(pods.followsOf(runId).filter((f) => !f.stopped)).toHaveLength(0);
  });

  it("gives 50 concurrent clients identical streams from one upstream follow", async () => {
    const runId = await insertRun("preprocessing");
    await produce(runId, lines(1, 20));
    const clients = Array.from({ length: 50 }, () => client(streamUrl(runId)));
    await database.db.updateTable("runs").set({ status: "running", updated_at: new Date() }).where("id", "=", runId).execute();
    for (let seq = 21; seq <= 300; seq += 10) {
      await produce(runId, lines(seq, seq + 9));
      await new Promise((r) => setTimeout(r, 2));
    }
    await until(() => expect(served.filter((s) => s.runId === runId)).toHaveLength(50));
    await finish(runId, "completed", 0);
    await Promise.all(clients.map((c) => c.ended));

    const want = lines(1, 300).map(expectedEvent);
    for (const c of clients) {
      expect(c.lines).toEqual(want);
      expect(c.events.at(-1)).toEqual({ type: "end", data: { status: "completed", exit_code: 0 } });
      expect(c.events.filter((e) => e.type === "status").at(-1)).toEqual({ type: "status", data: { status: "completed" } });
    }
    expect(pods.followsOf(runId)).toHaveLength(1);
    expect(pods.followsOf(runId)[0]!.stopped).toBe(true);
  });

  it("gives a client that connects after the end the stored lines, then end", async () => {
    const runId = await insertRun("running");
    await archive(runId, lines(1, 7));
    await finish(runId, "cancelled", null);
    const c = client(streamUrl(runId));
    await c.ended;
    expect(c.events).toEqual([
      ...statusEvents("pending", "preprocessing", "running"),
      ...lines(1, 7).map(expectedEvent),
      { type: "status", data: { status: "cancelled" } },
      { type: "end", data: { status: "cancelled", exit_code: null } },
    ]);
    const resumed = client(streamUrl(runId, "?after=5"));
    await resumed.ended;
    expect(resumed.lines).toEqual(lines(6, 7).map(expectedEvent));
    expect(pods.followsOf(runId)).toHaveLength(0);
  });

  it("sends the SSE headers, retry first, and a ping comment on the interval; cleans up when the client leaves", async () => {
    const runId = await insertRun("running");
    const ac = new AbortController();
    const res = await fetch(streamUrl(runId, "?ping=30"), { signal: ac.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-accel-buffering")).toBe("no");
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!text.includes(": ping\n\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    expect(text.startsWith("retry: 50\n\n")).toBe(true);
    expect(text).toContain('event: status\nid: 0:running\ndata: {"status":"running"}\n\n');
    expect(text).toContain(": ping\n\n");
    await until(() => expect(pods.followsOf(runId).filter((f) => !f.stopped)).toHaveLength(1));
    ac.abort();
    await reader.cancel().catch(() => {});
    // The server notices the disconnect: the subscriber leaves and the upstream follow stops.
    await until(() => expect(pods.followsOf(runId).filter((f) => !f.stopped)).toHaveLength(0));
  });

  it("answers 422 for a bad Last-Event-ID or after", async () => {
    const runId = await insertRun("running");
    const bad = await fetch(streamUrl(runId), { headers: { "Last-Event-ID": "nope" } });
    expect(bad.status).toBe(422);
    expect(await bad.json()).toMatchObject({ detail: [{ loc: ["header", "Last-Event-ID"] }] });
    const badAfter = await fetch(streamUrl(runId, "?after=-1"));
    expect(badAfter.status).toBe(422);
  });
});
