// The run feed (GET /v1/runs/events) on a Postgres server, where a resume and
// a look can overlap with a transaction still open: the ordering a test
// cannot get from the service's timers is made here by gating the feed's own
// reads (each read runs as it is; its answer is held until the test lets it go).
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { RunFeed, type RunFeedSink } from "../../src/domain/runs/run-feed.ts";
import { createRootLogger } from "../../src/logger.ts";
import { feedRun, feedSink } from "../helpers/run-feed.ts";
import { seedAccountWithRepository } from "../helpers/seed.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/service.ts";
import { until } from "../helpers/until.ts";

interface Gate {
  reached: () => void;
  released: Promise<void>;
}
const gates = vi.hoisted((): { look?: Gate; resume?: Gate; beforeResume?: Promise<void> } => ({}));
vi.mock("../../src/domain/runs/run-changes.ts", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/domain/runs/run-changes.ts")>();
  return {
    ...real,
    readChanges: async (...args: Parameters<typeof real.readChanges>) => {
      const kind = args[2].accountId === undefined ? "look" : "resume";
      // A resume held before it reads: a look can then read, and reach the stream, first.
      if (kind === "resume" && gates.beforeResume) {
        const before = gates.beforeResume;
        delete gates.beforeResume;
        await before;
      }
      const read = await real.readChanges(...args);
      const gate = gates[kind];
      if (gate) {
        delete gates[kind];
        gate.reached();
        await gate.released;
      }
      return read;
    },
  };
});

/** Gates the next read of that kind: `reached` once it has read, `release` lets its answer go. */
function gate(kind: "look" | "resume") {
  let reached!: () => void;
  let release!: () => void;
  const hit = new Promise<void>((r) => (reached = r));
  gates[kind] = { reached, released: new Promise<void>((r) => (release = r)) };
  return { reached: hit, release };
}

let database: TestDatabase;
let accountId: string;
let repositoryId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ accountId, repositoryId } = await seedAccountWithRepository(database.db));
});

afterAll(async () => {
  await database?.drop();
});

const sink = feedSink;
const run = () => feedRun(database.db, accountId, repositoryId);

/**
 * A feed (looking only when told) with a transaction open all along (any writer's), which keeps every
 * position below the runs' changes, so the feed remembers what it sent of them; and a stream whose
 * filter leaves the runs out, which keeps the feed started and gives `from`, a position to resume from.
 */
async function withOpenTransaction(test: (feed: RunFeed, from: string) => Promise<void>): Promise<void> {
  const open = new pg.Client({ connectionString: database.url });
  await open.connect();
  await open.query("begin");
  await open.query("select pg_current_xact_id()");
  const feed = new RunFeed({ db: database.db, logger: createRootLogger("silent"), pollMs: 3_600_000 });
  try {
    const other = sink();
    const releaseOther = feed.reserve(accountId);
    const leaveOther = await feed.subscribe({ accountId, status: "failed" }, other.s, null);
    await test(feed, other.positions.at(-1)!);
    leaveOther();
    releaseOther();
  } finally {
    feed.close();
    await open.query("rollback");
    await open.end();
  }
}

/** The next look (it brings another run) leaves the stream showing the run `running`. */
async function expectRunningAfterNextLook(feed: RunFeed, stream: ReturnType<typeof sink>, runId: string): Promise<void> {
  const next = run();
  await next.mirror();
  feed.onNotify();
  await until("the next look's run", 30_000, () => stream.status(next.runId).includes("pending"));
  expect(stream.status(runId).at(-1)).toBe("running");
}

describe("the run feed on Postgres", () => {
  it("sends a run's current state after a held batch that was older than the resume's read", async () => {
    await withOpenTransaction(async (feed, from) => {
      // A stream resuming joins; before its resume reads, a look reads the
      // run pending and hands the stream its batch, which it holds; the run
      // goes running; the resume reads it running and is sent that, then the
      // held batch (pending). The next look must send running again, or the
      // client shows pending until the run next changes.
      const r = run();
      await r.mirror();
      let resumeReads!: () => void;
      gates.beforeResume = new Promise<void>((go) => (resumeReads = go));
      const back = sink();
      const release = feed.reserve(accountId);
      const subscribed = feed.subscribe({ accountId }, back.s, from);
      await new Promise((go) => setImmediate(go));
      // A live stream joined after it: the look reaches it after the resuming one, so once it has
      // the run, the resuming stream's batch is held.
      const watch = sink();
      const releaseWatch = feed.reserve(accountId);
      const leaveWatch = await feed.subscribe({ accountId }, watch.s, null);
      const look = gate("look");
      feed.onNotify();
      await look.reached;
      look.release();
      await until("the look reaches the live stream", 30_000, () => watch.status(r.runId).includes("pending"));
      expect(back.status(r.runId)).toEqual([]);
      await r.mirror({ phase: "running", startTime: new Date().toISOString() });
      resumeReads();
      const leave = await subscribed;
      expect(back.status(r.runId)).toEqual(["running", "pending"]);
      await expectRunningAfterNextLook(feed, back, r.runId);
      leave();
      release();
      leaveWatch();
      releaseWatch();
    });
  });

  it("never sends a stream what a look read before the stream's own read, once its resume has ended", async () => {
    await withOpenTransaction(async (feed, from) => {
      // A look reads the run pending and waits; the run goes running; a
      // stream resumes (reads it running, is sent that, and its resume
      // ends); only then does the look hand out what it read.
      const r = run();
      await r.mirror();
      const look = gate("look");
      feed.onNotify();
      await look.reached;
      await r.mirror({ phase: "running", startTime: new Date().toISOString() });
      const back = sink();
      const release = feed.reserve(accountId);
      const leave = await feed.subscribe({ accountId }, back.s, from);
      expect(back.status(r.runId)).toEqual(["running"]);
      look.release();
      await expectRunningAfterNextLook(feed, back, r.runId);
      leave();
      release();
    });
  });

  it("sends a look's reset to a stream still resuming after the stream's ready, not before it", async () => {
    // A client told to read its list again before its stream's `ready` took
    // the ready's position, older than the reset's, for the list it had read.
    const pollLimit = 2;
    const feed = new RunFeed({ db: database.db, logger: createRootLogger("silent"), pollMs: 3_600_000, pollLimit });
    const calls: string[] = [];
    const ordered: RunFeedSink = {
      events: (events) => void calls.push(`events ${events.length}`),
      ready: () => void calls.push("ready"),
      reset: () => void calls.push("reset"),
      close: () => {},
    };
    let otherResets = 0;
    const other: RunFeedSink = { ...feedSink().s, reset: () => void otherResets++ };
    const positions: string[] = [];
    const releaseOther = feed.reserve(accountId);
    const leaveOther = await feed.subscribe({ accountId, status: "failed" }, { ...other, ready: (p) => void positions.push(p) }, null);
    try {
      for (let i = 0; i <= pollLimit; i++) await run().mirror();
      let resumeReads!: () => void;
      gates.beforeResume = new Promise<void>((go) => (resumeReads = go));
      const release = feed.reserve(accountId);
      const subscribed = feed.subscribe({ accountId }, ordered, positions[0]!);
      await new Promise((go) => setImmediate(go));
      // The look reads more than its limit: every stream is told to read its list again.
      feed.onNotify();
      await until("the look's reset", 30_000, () => otherResets > 0);
      resumeReads();
      const leave = await subscribed;
      expect(calls).toEqual([`events ${pollLimit + 1}`, "ready", "reset"]);
      leave();
      release();
    } finally {
      leaveOther();
      releaseOther();
      feed.close();
    }
  });

  it("resets, after a look over its limit, only the streams of accounts whose runs it read", async () => {
    // One account's bulk change made every account's clients read their lists again.
    const pollLimit = 2;
    const feed = new RunFeed({ db: database.db, logger: createRootLogger("silent"), pollMs: 3_600_000, pollLimit });
    const other = await seedAccountWithRepository(database.db);
    let resets = 0;
    const mine = feedSink();
    const quiet = feedSink();
    const releaseMine = feed.reserve(accountId);
    const releaseQuiet = feed.reserve(other.accountId);
    const leaveMine = await feed.subscribe({ accountId }, { ...mine.s, reset: () => void resets++ }, null);
    let quietResets = 0;
    const leaveQuiet = await feed.subscribe({ accountId: other.accountId }, { ...quiet.s, reset: () => void quietResets++ }, null);
    try {
      for (let i = 0; i <= pollLimit; i++) await run().mirror();
      feed.onNotify();
      await until("the bulk's reset", 30_000, () => resets > 0);
      // The other account's stream was not reset, and still hears of its next run.
      const next = feedRun(database.db, other.accountId, other.repositoryId);
      await next.mirror();
      feed.onNotify();
      await until("the other account's run", 30_000, () => quiet.status(next.runId).includes("pending"));
      expect(quietResets, "the other account's stream was told to read its list again").toBe(0);
      expect(mine.got.events).toEqual([]);
    } finally {
      leaveMine();
      leaveQuiet();
      releaseMine();
      releaseQuiet();
      feed.close();
    }
  });

  it("reads each change once while a transaction stays open, so a long one does not make every look a reset", async () => {
    // Positions stop at the oldest transaction still running. A look that
    // read everything at or above its position read every change made since
    // that transaction began, again each second, and once they outnumbered
    // its limit sent every stream a reset each second until it ended.
    const open = new pg.Client({ connectionString: database.url });
    await open.connect();
    await open.query("begin");
    await open.query("select pg_current_xact_id()");
    const pollLimit = 3;
    const feed = new RunFeed({ db: database.db, logger: createRootLogger("silent"), pollMs: 100, pollLimit });
    let resets = 0;
    const live = sink();
    const s: RunFeedSink = { ...live.s, reset: () => void resets++ };
    const release = feed.reserve(accountId);
    const leave = await feed.subscribe({ accountId }, s, null);
    try {
      for (let i = 0; i < pollLimit * 3; i++) {
        const r = run();
        await r.mirror();
        await until(`run ${i + 1} (resets so far: ${resets})`, 30_000, () => live.status(r.runId).includes("pending"));
      }
      expect(resets).toBe(0);
      // Nor does the stream remember, for as long as the transaction stays
      // open, each change a look sent it: no later look reads one again.
      expect(feed.remembered()).toBe(0);
    } finally {
      leave();
      release();
      feed.close();
      await open.query("rollback");
      await open.end();
    }
  }, 120_000);
});
