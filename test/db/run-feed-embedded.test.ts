import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type DatabaseHandle } from "../../src/db/database.ts";
import { migrateToLatest } from "../../src/db/migrate.ts";
import { createAccount } from "../../src/domain/accounts/accounts.ts";
import { RunFeed, type RunFeedSink } from "../../src/domain/runs/run-feed.ts";
import { createRootLogger } from "../../src/logger.ts";
import { feedRun, feedSink } from "../helpers/run-feed.ts";
import { until } from "../helpers/until.ts";

// The run feed (GET /v1/runs/events) on the embedded database, PGlite, which
// `make run` uses when no DATABASE_URL is set: migration 0026's trigger and
// the feed's reads (xid8 positions, the snapshot's xmin) work there as on a
// Postgres server (test/api/run-events.test.ts covers the server, replicas and
// the HTTP side).

let dir: string;
let handle: DatabaseHandle;
let accountId: string;
let repositoryId: string;
let feed: RunFeed;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "codeplane-feed-"));
  const logger = createRootLogger("silent");
  handle = await openDatabase({ url: null, poolMax: 1, dataDir: dir, logger });
  await migrateToLatest(handle.db, logger);
  accountId = (await createAccount(handle.db, "feed")).id;
  repositoryId = randomUUID();
  const now = new Date();
  await handle.db
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
  feed = new RunFeed({ db: handle.db, logger, pollMs: 100 });
}, 120_000);

afterAll(async () => {
  feed?.close();
  await handle?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const sink = feedSink;
const run = () => feedRun(handle.db, accountId, repositoryId);

describe("the run feed on PGlite", () => {
  it("sends changes as they come, and from a resume point what changed since", async () => {
    const live = sink();
    const release = feed.reserve(accountId);
    const leave = await feed.subscribe({ accountId }, live.s, null);
    const r = run();
    await r.mirror();
    await until("pending", 30_000, () => live.status(r.runId).includes("pending"));
    const resumeFrom = live.got.positions.at(-1)!;
    await r.mirror({ phase: "running", startTime: new Date().toISOString() });
    await until("running", 30_000, () => live.status(r.runId).includes("running"));
    leave();
    release();
    // A client that left after `pending` comes back: `running` is sent, then ready.
    const back = sink();
    const release2 = feed.reserve(accountId);
    const leave2 = await feed.subscribe({ accountId }, back.s, resumeFrom);
    expect(back.status(r.runId)).toEqual(["running"]);
    leave2();
    release2();
  });

  it("keeps looking while notifications come closer together than its wake delay", async () => {
    // Every mirror write of a busy installation can notify; a look that each
    // notification pushed back (a debounce) would never come while they do.
    const live = sink();
    const release = feed.reserve(accountId);
    const leave = await feed.subscribe({ accountId }, live.s, null);
    const storm = setInterval(() => feed.onNotify(), 1);
    try {
      const r = run();
      await r.mirror();
      await until("pending, during the notifications", 30_000, () => live.status(r.runId).includes("pending"));
    } finally {
      clearInterval(storm);
      leave();
      release();
    }
  });

  it("ends a stream that was starting when the process shut down", async () => {
    // Shutdown ends the streams it has; one still starting (its first read
    // under way) joined after, and was left open on a feed that no longer
    // looks, holding its client and the server's shutdown until its timeout.
    const starting = new RunFeed({ db: handle.db, logger: createRootLogger("silent"), pollMs: 100 });
    let closed = false;
    const s: RunFeedSink = { ...sink().s, close: () => void (closed = true) };
    const release = starting.reserve(accountId);
    const subscribed = starting.subscribe({ accountId }, s, null);
    starting.close();
    const ended = await subscribed.then(
      (leave) => {
        leave();
        return closed;
      },
      () => true,
    );
    release();
    expect(ended, "the stream was ended (or refused)").toBe(true);
  });
});
