import { randomUUID } from "node:crypto";
import { connect, createServer, type Server, type Socket } from "node:net";
import { EventSource } from "eventsource";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { STREAMS_PER_ACCOUNT } from "../../src/domain/runs/run-feed.ts";
import { RUN_TABLE } from "../../src/db/workload-tables.ts";
import { hideWorkload } from "../../src/domain/workloads/workload-rows.ts";
import type { RunStatus } from "../../src/resources/run.ts";
import { feedRun } from "../helpers/run-feed.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";
import { until } from "../helpers/until.ts";

// GET /v1/runs/events against the real service and its Postgres, with a real
// EventSource: the controller's part is played through the real mirror
// (workload-rows.ts), whose writes the feed finds through migration 0026's
// trigger. A proxy in front of the service cuts one client's connection
// mid-stream, so its resume (Last-Event-ID, sent by EventSource itself) is
// the one a browser makes.

let svc: TestService;
let alice: Tenant;
let bob: Tenant;
let aliceRepo: string;
let aliceOther: string;
let bobRepo: string;
let proxy: Server;
let proxyUrl: string;
/** Connections through the proxy, newest last: a test cuts them. */
const proxied: Socket[] = [];
let proxiedStreams = 0;

async function repository(accountId: string, name: string): Promise<string> {
  const id = randomUUID();
  const now = new Date();
  await svc.db
    .insertInto("repositories")
    .values({
      id,
      account_id: accountId,
      name,
      url: `https://example.invalid/${name}.git`,
      provider: "git",
      default_branch: "main",
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}

beforeAll(async () => {
  svc = await startTestService();
  alice = await svc.tenant();
  bob = await svc.tenant();
  aliceRepo = await repository(alice.accountId, "a");
  aliceOther = await repository(alice.accountId, "a2");
  bobRepo = await repository(bob.accountId, "b");
  const target = new URL(svc.url);
  proxy = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    client.pipe(upstream).pipe(client);
    client.once("data", (d: Buffer) => {
      if (d.toString("latin1").includes("/v1/runs/events")) {
        proxied.push(client);
        proxiedStreams++;
      }
    });
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
    client.on("close", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
}, 120_000);

afterAll(async () => {
  for (const s of proxied) s.destroy();
  await new Promise((r) => proxy?.close(r));
  await svc?.close();
});

interface FeedEvent {
  type: "ready" | "run" | "deleted" | "reset";
  id: string;
  data: { run_id?: string; status?: string; repository_id?: string; exit_code?: number | null };
}

/** A real EventSource on the feed, recording every event. */
function follow(base: string, key: string, query = "") {
  const events: FeedEvent[] = [];
  const es = new EventSource(`${base}/v1/runs/events${query}`, {
    fetch: (u, init) => fetch(u, { ...init, headers: { ...init.headers, authorization: `Bearer ${key}` } }),
  });
  for (const type of ["ready", "run", "deleted", "reset"] as const) {
    es.addEventListener(type, (e: MessageEvent) => void events.push({ type, id: e.lastEventId, data: JSON.parse(e.data as string) }));
  }
  const readies = () => events.filter((e) => e.type === "ready").length;
  return {
    es,
    events,
    /** Each run's last state received. */
    latest: () => new Map(events.filter((e) => e.type === "run").map((e) => [e.data.run_id!, e.data])),
    untilReady: (n = 1) => until(`the stream's ready event #${n}`, 30_000, () => readies() >= n),
  };
}

/** Plays the controller for one run: its Run's statuses mirrored in order. */
function controller(accountId: string, repositoryId: string) {
  const at = new Date().toISOString();
  return {
    ...feedRun(svc.db, accountId, repositoryId),
    running: { phase: "running", startTime: at } as RunStatus,
    completed: { phase: "completed", startTime: at, completionTime: new Date().toISOString(), exitCode: 0 } as RunStatus,
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("GET /v1/runs/events", () => {
  it("sends a run's new state as it changes, to its account only", async () => {
    const a = follow(svc.url, alice.key);
    const b = follow(svc.url, bob.key);
    await Promise.all([a.untilReady(), b.untilReady()]);
    const run = controller(alice.accountId, aliceRepo);
    await run.mirror();
    await until("alice's new run, pending", 30_000, () => a.latest().get(run.runId)?.status === "pending");
    await run.mirror(run.running);
    await until("alice's run, running", 30_000, () => a.latest().get(run.runId)?.status === "running");
    await run.mirror(run.completed);
    const done = await until("alice's run, completed", 30_000, () => a.latest().get(run.runId)?.status === "completed" && a.latest().get(run.runId));
    expect(done.exit_code).toBe(0);
    // Deleted through the API: said so.
    // (As DELETE /v1/runs/{id} does first; the rest of it needs a cluster.)
    await hideWorkload(svc.db, RUN_TABLE, alice.accountId, run.runId);
    await until("alice's run, deleted", 30_000, () => a.events.some((e) => e.type === "deleted" && e.data.run_id === run.runId));
    // Bob's own run reaches bob, so his stream works; alice's never did.
    const bobs = controller(bob.accountId, bobRepo);
    await bobs.mirror();
    await until("bob's run", 30_000, () => b.latest().get(bobs.runId));
    expect([...b.latest().keys()]).toEqual([bobs.runId]);
    expect(b.events.some((e) => e.data.run_id === run.runId)).toBe(false);
    expect(a.events.some((e) => e.data.run_id === bobs.runId)).toBe(false);
    a.es.close();
    b.es.close();
  });

  it("resumes after dropped connections without losing a change", async () => {
    const before = proxiedStreams;
    const c = follow(proxyUrl, alice.key);
    await c.untilReady();
    const runs = Array.from({ length: 12 }, () => controller(alice.accountId, aliceRepo));
    // Cuts the client's connection; the runs change on while it is away (EventSource waits 3 s).
    const cut = async () => {
      const n = proxiedStreams;
      proxied.at(-1)?.destroy();
      return () => until("the client's reconnection", 60_000, () => proxiedStreams > n);
    };
    // Each run goes pending, running, completed; the connection is cut three times meanwhile.
    let back: (() => Promise<boolean>) | null = null;
    for (const [i, r] of runs.entries()) {
      await r.mirror();
      if (i % 6 === 5) {
        await back?.();
        back = await cut();
      }
      await sleep(50);
    }
    await back?.();
    back = await cut();
    for (const r of runs) await r.mirror(r.running);
    await back();
    // Each run stays running until the stream has said so (a state that lasts under a second may be skipped: the feed sends states, not every write).
    await until("every run running, as the client saw it", 60_000, () => runs.every((r) => c.latest().get(r.runId)?.status === "running"));
    for (const r of runs) await r.mirror(r.completed);
    await until("every run completed, as the client saw it", 60_000, () => runs.every((r) => c.latest().get(r.runId)?.status === "completed"));
    expect(proxiedStreams - before, "the client reconnected after each cut").toBeGreaterThanOrEqual(3);
    // Every state each run was in for a second or more reached the client, the ones written while it was away too.
    for (const r of runs) {
      const seen = c.events.filter((e) => e.type === "run" && e.data.run_id === r.runId).map((e) => e.data.status);
      expect([...new Set(seen)], `run ${r.runId}'s states as the client saw them`).toEqual(["pending", "running", "completed"]);
    }
    // Each reconnection resumed (a ready after its resume) rather than starting from now.
    expect(c.events.filter((e) => e.type === "ready").length).toBeGreaterThanOrEqual(3);
    expect(c.events.some((e) => e.type === "reset")).toBe(false);
    c.es.close();
  }, 180_000);

  it("works across replicas: a position one gave resumes on another", async () => {
    const other = await startTestService({ DATABASE_URL: svc.databaseUrl, CODEPLANE_ENCRYPTION_KEY: svc.encryptionKey });
    try {
      const onB = follow(other.url, alice.key);
      await onB.untilReady();
      const first = controller(alice.accountId, aliceRepo);
      await first.mirror();
      await until("the run, on replica B", 30_000, () => onB.latest().get(first.runId));
      const lastId = onB.events.at(-1)!.id;
      onB.es.close();
      // Changed while the client is away; it comes back to replica A with B's id.
      await first.mirror(first.running);
      const second = controller(alice.accountId, aliceRepo);
      await second.mirror();
      const onA = follow(svc.url, alice.key, `?after=${lastId}`);
      await onA.untilReady();
      expect(onA.latest().get(first.runId)?.status).toBe("running");
      expect(onA.latest().get(second.runId)?.status).toBe("pending");
      onA.es.close();
    } finally {
      await other.close();
    }
  }, 180_000);

  it("filters by repository, and by status including runs that leave it", async () => {
    const byRepo = follow(svc.url, alice.key, `?repository_id=${aliceOther}`);
    const running = follow(svc.url, alice.key, "?status=running");
    await Promise.all([byRepo.untilReady(), running.untilReady()]);
    const here = controller(alice.accountId, aliceOther);
    const there = controller(alice.accountId, aliceRepo);
    await here.mirror();
    await there.mirror();
    await here.mirror(here.running);
    await until("the running run", 30_000, () => running.latest().get(here.runId)?.status === "running");
    await here.mirror(here.completed);
    await until("the run that left running", 30_000, () => running.latest().get(here.runId)?.status === "completed");
    await until("the repository's run, completed", 30_000, () => byRepo.latest().get(here.runId)?.status === "completed");
    expect(byRepo.latest().has(there.runId)).toBe(false);
    // Never running: the status filter never sent it.
    expect(running.latest().has(there.runId)).toBe(false);
    expect(running.events.filter((e) => e.data.run_id === here.runId).map((e) => e.data.status)).not.toContain("pending");
    byRepo.es.close();
    running.es.close();
  });

  it(`refuses an account's stream beyond ${STREAMS_PER_ACCOUNT} with 429, and not another account's`, async () => {
    const carol = await svc.tenant();
    const open: AbortController[] = [];
    const statuses: number[] = [];
    for (let i = 0; i < STREAMS_PER_ACCOUNT + 3; i++) {
      const ac = new AbortController();
      const res = await carol.api("/v1/runs/events", { signal: ac.signal });
      statuses.push(res.status);
      if (res.status === 200) open.push(ac);
      else expect(res.headers.get("retry-after")).toMatch(/^[0-9]+$/);
    }
    expect(statuses.filter((s) => s === 200).length).toBe(STREAMS_PER_ACCOUNT);
    expect(statuses.filter((s) => s === 429).length).toBe(3);
    // Another account is not held back by carol's streams.
    const dave = await svc.tenant();
    const ac = new AbortController();
    expect((await dave.api("/v1/runs/events", { signal: ac.signal })).status).toBe(200);
    ac.abort();
    // One closed frees its place.
    open.pop()!.abort();
    const again = new AbortController();
    await until("a place freed", 30_000, async () => {
      const res = await carol.api("/v1/runs/events", { signal: again.signal });
      if (res.status !== 200) await res.body?.cancel();
      return res.status === 200;
    });
    again.abort();
    for (const o of open) o.abort();
  });

  it("takes its per-account limit from CODEPLANE_RUN_EVENT_STREAMS_PER_ACCOUNT, per process", async () => {
    const limit = 3;
    const other = await startTestService({
      DATABASE_URL: svc.databaseUrl,
      CODEPLANE_ENCRYPTION_KEY: svc.encryptionKey,
      CODEPLANE_RUN_EVENT_STREAMS_PER_ACCOUNT: String(limit),
    });
    const erin = await svc.tenant();
    const open: AbortController[] = [];
    try {
      // Streams held open at once (each answered 200 and stays open): the limit's, then a 429.
      for (let i = 0; i < limit; i++) {
        const ac = new AbortController();
        const res = await fetch(`${other.url}/v1/runs/events`, { headers: { authorization: `Bearer ${erin.key}` }, signal: ac.signal });
        expect(res.status, `stream ${i + 1} of ${limit}`).toBe(200);
        open.push(ac);
      }
      const refused = await fetch(`${other.url}/v1/runs/events`, { headers: { authorization: `Bearer ${erin.key}` } });
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
      expect((await refused.json()).detail).toMatch(/3 run event streams open/);
      // The limit is this process's: the other replica (default limit) serves the account meanwhile.
      const elsewhere = new AbortController();
      expect((await erin.api("/v1/runs/events", { signal: elsewhere.signal })).status).toBe(200);
      elsewhere.abort();
      // One closed frees its place on this process.
      open.pop()!.abort();
      const again = new AbortController();
      await until("a place freed", 30_000, async () => {
        const res = await fetch(`${other.url}/v1/runs/events`, { headers: { authorization: `Bearer ${erin.key}` }, signal: again.signal });
        if (res.status !== 200) await res.body?.cancel();
        return res.status === 200;
      });
      again.abort();
    } finally {
      for (const o of open) o.abort();
      await other.close();
    }
  }, 120_000);

  it("notifies once per change written, not for the controller's writes that change nothing", async () => {
    // Its mirror writes a run's row on every reconcile as an upsert, which
    // fires insert triggers even when it ends as an update of nothing.
    const listener = new pg.Client({ connectionString: svc.databaseUrl });
    await listener.connect();
    let notified = 0;
    listener.on("notification", (n) => void (n.channel === "runs_changed" && notified++));
    try {
      await listener.query("LISTEN runs_changed");
      const run = controller(alice.accountId, aliceRepo);
      await run.mirror();
      await until("the insert's notification", 30_000, () => notified >= 1);
      await run.mirror(run.running);
      await until("the change's notification", 30_000, () => notified >= 2);
      for (let i = 0; i < 5; i++) await run.mirror(run.running);
      // Notifications are sent at commit and arrive in commit order: one more
      // change's arriving means the five writes before it sent none.
      await run.mirror(run.completed);
      await until("the last change's notification", 30_000, () => notified >= 3);
      expect(notified).toBe(3);
    } finally {
      await listener.end();
    }
  });

  it("answers 422 for an id it never sent and 404 for another account's repository", async () => {
    const bad = await alice.api("/v1/runs/events", { headers: { "Last-Event-ID": "12:running" } });
    expect(bad.status).toBe(422);
    expect((await bad.json()).detail[0].loc).toEqual(["header", "Last-Event-ID"]);
    const badAfter = await alice.api("/v1/runs/events?after=-1");
    expect(badAfter.status).toBe(422);
    expect((await alice.api(`/v1/runs/events?repository_id=${bobRepo}`)).status).toBe(404);
  });
});
