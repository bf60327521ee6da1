// A run's stored output paged by sequence and searched, as the service reads it
// (src/domain/runs/run-logs.ts), on both database kinds: Postgres and the
// embedded PGlite.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type DatabaseHandle } from "../../src/db/database.ts";
import { migrateToLatest } from "../../src/db/migrate.ts";
import { createAccount } from "../../src/domain/accounts/accounts.ts";
import { LOG_SEARCH, readRunLogPage, searchRunLog } from "../../src/domain/runs/run-logs.ts";
import { createRootLogger } from "../../src/logger.ts";
import { insertRunRow, seedAccountWithRepository } from "../helpers/seed.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/service.ts";

const silent = createRootLogger("silent");
let pgDatabase: TestDatabase;
let dataDir: string;
const kinds: { name: string; handle: DatabaseHandle }[] = [];

// 250,000 lines (more than two search windows): every 100th on stderr, seq 1000..1009 skipped
// (as a truncated stream leaves gaps), a few lines with text to find.
const LINES = 250_000;
const special: Record<number, string> = {
  7: "Found 100% of it_ALL",
  120_000: "found 100% OF IT_all, far back",
  249_990: "the end: error: boom",
};

async function seed(handle: DatabaseHandle): Promise<{ accountId: string; runId: string }> {
  const { accountId, repositoryId } = await seedAccountWithRepository(handle.db);
  const runId = await insertRunRow(handle.db, { accountId, repositoryId, status: "completed", logsComplete: true });
  for (let from = 1; from <= LINES; from += 50_000) {
    await sql`insert into run_log_lines (run_id, seq, stream, ts, line)
      select ${runId}::uuid, g, case when g % 100 = 0 then 'stderr' else 'stdout' end, timestamptz '2026-01-01T00:00:00Z' + g * interval '1 ms', 'line ' || g
      from generate_series(${from}::bigint, ${Math.min(from + 49_999, LINES)}::bigint) g where g not between 1000 and 1009`.execute(handle.db);
  }
  for (const [seq, line] of Object.entries(special)) {
    await handle.db.updateTable("run_log_lines").set({ line }).where("run_id", "=", runId).where("seq", "=", seq).execute();
  }
  return { accountId, runId };
}

beforeAll(async () => {
  pgDatabase = await createTestDatabase();
  kinds.push({ name: "postgres", handle: await openDatabase({ url: pgDatabase.url, poolMax: 2, dataDir: "/nonexistent", logger: silent }) });
  dataDir = mkdtempSync(path.join(tmpdir(), "codeplane-pglite-"));
  const embedded = await openDatabase({ url: null, poolMax: 1, dataDir, logger: silent });
  await migrateToLatest(embedded.db, silent);
  kinds.push({ name: "embedded", handle: embedded });
}, 240_000);
afterAll(async () => {
  for (const k of kinds) await k.handle.close();
  await pgDatabase?.drop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe.each(["postgres", "embedded"])("a run's stored output by sequence (%s)", (kindName) => {
  let db: DatabaseHandle["db"];
  let accountId: string;
  let runId: string;
  beforeAll(async () => {
    db = kinds.find((k) => k.name === kindName)!.handle.db;
    ({ accountId, runId } = await seed(kinds.find((k) => k.name === kindName)!.handle));
  }, 240_000);

  it("pages forwards from the start, both streams interleaved, across a gap, without losing or repeating a line", async () => {
    const first = await readRunLogPage(db, accountId, runId, { after: 0, limit: 1000 });
    expect(first.lines.map((l) => l.seq)).toEqual([...Array.from({ length: 999 }, (_, i) => i + 1), 1010]);
    expect(first.lines[99]).toEqual({ seq: 100, stream: "stderr", ts: new Date(Date.parse("2026-01-01T00:00:00Z") + 100).toISOString(), line: "line 100" });
    expect(first).toMatchObject({ next_after: 1010, last_seq: LINES, complete: true, truncated: false, stream: null });
    const second = await readRunLogPage(db, accountId, runId, { after: first.next_after!, limit: 5 });
    expect(second.lines.map((l) => l.seq)).toEqual([1011, 1012, 1013, 1014, 1015]);
    let after = 0;
    let count = 0;
    let previous = 0;
    for (;;) {
      const page = await readRunLogPage(db, accountId, runId, { after, limit: 5000 });
      for (const l of page.lines) {
        expect(l.seq).toBeGreaterThan(previous);
        previous = l.seq;
      }
      count += page.lines.length;
      if (page.next_after === null) break;
      after = page.next_after;
    }
    expect(count).toBe(LINES - 10);
  }, 120_000);

  it("reads the end with before, oldest first, and says there is nothing after it", async () => {
    const end = await readRunLogPage(db, accountId, runId, { before: Number.MAX_SAFE_INTEGER, limit: 3 });
    expect(end.lines.map((l) => l.seq)).toEqual([LINES - 2, LINES - 1, LINES]);
    expect(end.next_after).toBeNull();
    const before = await readRunLogPage(db, accountId, runId, { before: 1011, limit: 3 });
    expect(before.lines.map((l) => l.seq)).toEqual([998, 999, 1010]);
    expect(before.next_after).toBe(1010);
  });

  it("pages one stream", async () => {
    const page = await readRunLogPage(db, accountId, runId, { stream: "stderr", after: 0, limit: 3 });
    expect(page.lines.map((l) => [l.seq, l.stream])).toEqual([
      [100, "stderr"],
      [200, "stderr"],
      [300, "stderr"],
    ]);
    expect(page).toMatchObject({ stream: "stderr", next_after: 300 });
  });

  it("finds a literal substring in the whole log, case-insensitive by default, % and _ taken literally", async () => {
    const found = await searchRunLog(db, accountId, runId, { q: "found 100% of it_all" });
    expect(found.items.map((l) => l.seq)).toEqual([7, 120_000]);
    expect(found.next_after).toBeNull();
    expect(found.searched_through).toBe(LINES);
    const exact = await searchRunLog(db, accountId, runId, { q: "found 100% OF", caseSensitive: true });
    expect(exact.items.map((l) => l.seq)).toEqual([120_000]);
    expect((await searchRunLog(db, accountId, runId, { q: "100_ of" })).items).toEqual([]);
    expect((await searchRunLog(db, accountId, runId, { q: "%" })).items.map((l) => l.seq)).toEqual([7, 120_000]);
  });

  it("paginates matches with after and limit, one stream at a time", async () => {
    const a = await searchRunLog(db, accountId, runId, { q: "line 1", stream: "stderr", limit: 2 });
    expect(a.items.map((l) => l.seq)).toEqual([100, 1100]);
    expect(a.next_after).toBe(1100);
    const b = await searchRunLog(db, accountId, runId, { q: "line 1", stream: "stderr", after: a.next_after!, limit: 2 });
    expect(b.items.map((l) => l.seq)).toEqual([1200, 1300]);
    const late = await searchRunLog(db, accountId, runId, { q: "error", after: 200_000 });
    expect(late.items.map((l) => l.line)).toEqual(["the end: error: boom"]);
  });

  it("stops at its time budget and says where to go on, so a search is bounded", async () => {
    const partial = await searchRunLog(db, accountId, runId, { q: "absent" }, 0);
    expect(partial.items).toEqual([]);
    expect(partial.next_after).toBe(LOG_SEARCH.window);
    expect(partial.searched_through).toBe(LOG_SEARCH.window);
    let after: number | null = partial.next_after;
    let rounds = 1;
    while (after !== null) {
      after = (await searchRunLog(db, accountId, runId, { q: "absent", after }, 0)).next_after;
      rounds++;
    }
    expect(rounds).toBe(Math.ceil(LINES / LOG_SEARCH.window));
  });

  it("lists the group markers only, those at a line's start, paged, through the partial index on Postgres", async () => {
    // Last in the file: it rewrites lines the other tests do not read.
    const marks: Record<number, string> = {
      50_000: "::group::Setup",
      50_010: "::endgroup::",
      60_000: "echo ::group::not at the start",
      70_000: "::warning::a marker of another kind",
      200_000: "::group::Eval",
    };
    for (const [seq, line] of Object.entries(marks)) {
      await db.updateTable("run_log_lines").set({ line }).where("run_id", "=", runId).where("seq", "=", seq).execute();
    }
    const all = await readRunLogPage(db, accountId, runId, { groups: true, after: 0 });
    expect(all.lines.map((l) => [l.seq, l.line])).toEqual([
      [50_000, "::group::Setup"],
      [50_010, "::endgroup::"],
      [200_000, "::group::Eval"],
    ]);
    expect(all.next_after).toBeNull();
    const paged = await readRunLogPage(db, accountId, runId, { groups: true, after: 0, limit: 2 });
    expect(paged.lines.map((l) => l.seq)).toEqual([50_000, 50_010]);
    expect(paged.next_after).toBe(50_010);
    if (kindName === "postgres") {
      await sql`analyze run_log_lines`.execute(db);
      const plan = await sql<{ "QUERY PLAN": string }>`explain select seq from run_log_lines
        where run_id = ${runId} and line like '::%' and (line like '::group::%' or line like '::endgroup::%') order by seq`.execute(db);
      expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain("run_log_lines_markers");
    }
  });

  it("is a 404 for another account's run", async () => {
    const other = (await createAccount(db, `other-${kindName}-${Date.now()}`)).id;
    await expect(readRunLogPage(db, other, runId, { after: 0 })).rejects.toMatchObject({ kind: "not_found" });
    await expect(searchRunLog(db, other, runId, { q: "line" })).rejects.toMatchObject({ kind: "not_found" });
  });
});
