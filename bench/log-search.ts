// The stored log's paged read and search on one run of BENCH_LOG_LINES
// (1,000,000 by default) lines, in Postgres and in the embedded PGlite:
// `node bench/log-search.ts` prints each read's time (median of 5) as the
// service makes it (src/domain/runs/run-logs.ts), and EXPLAIN ANALYZE of the
// search's statement in Postgres.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql, type Kysely } from "kysely";
import { openDatabase } from "../src/db/database.ts";
import { migrateToLatest } from "../src/db/migrate.ts";
import type { Database } from "../src/db/schema.ts";
import { readRunLogPage, searchRunLog } from "../src/domain/runs/run-logs.ts";
import { createRootLogger } from "../src/logger.ts";
import { insertRunRow, seedAccountWithRepository } from "../test/helpers/seed.ts";
import { startPostgres } from "../test/helpers/postgres-server.ts";
import { createBenchDatabase } from "./lib.ts";

const LINES = Number(process.env.BENCH_LOG_LINES ?? 1_000_000);

/** One run with LINES lines: every 1,000th on stderr, a "needle" near the start and one near the end. */
async function seed(db: Kysely<Database>): Promise<{ accountId: string; runId: string }> {
  const { accountId, repositoryId } = await seedAccountWithRepository(db);
  const runId = await insertRunRow(db, { accountId, repositoryId, status: "completed", logsComplete: true });
  const chunk = 100_000;
  for (let from = 1; from <= LINES; from += chunk) {
    const to = Math.min(from + chunk - 1, LINES);
    await sql`insert into run_log_lines (run_id, seq, stream, ts, line)
      select ${runId}::uuid, g, case when g % 1000 = 0 then 'stderr' else 'stdout' end, now(),
        case when g = 10 or g = ${LINES - 10} then 'found the Needle here ' || g else 'step ' || g || ' loss=0.' || (g % 997) || ' lr=3e-4 epoch ' || (g / 1000) end
      from generate_series(${from}::bigint, ${to}::bigint) g`.execute(db);
  }
  await sql`analyze run_log_lines`.execute(db);
  return { accountId, runId };
}

async function time(name: string, f: () => Promise<unknown>): Promise<void> {
  const ms: number[] = [];
  let out: unknown;
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    out = await f();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  const o = out as { lines?: unknown[]; items?: unknown[]; next_after?: number | null };
  console.log(
    `  ${name.padEnd(46)} median ${ms[2]!.toFixed(1).padStart(7)} ms  max ${ms[4]!.toFixed(1).padStart(7)} ms  (${(o.lines ?? o.items ?? []).length} lines, next_after ${o.next_after})`,
  );
}

async function measure(label: string, db: Kysely<Database>): Promise<{ accountId: string; runId: string }> {
  const t = performance.now();
  const { accountId, runId } = await seed(db);
  console.log(`\n== ${label}: ${LINES} lines seeded in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const page = (q: Parameters<typeof readRunLogPage>[3]) => () => readRunLogPage(db, accountId, runId, q);
  const search = (q: Parameters<typeof searchRunLog>[3]) => () => searchRunLog(db, accountId, runId, q);
  await time("first page (limit 1000)", page({ limit: 1000 }));
  await time("last page (before end, limit 1000)", page({ before: LINES + 1, limit: 1000 }));
  await time("middle page (after N/2, limit 5000)", page({ after: LINES / 2, limit: 5000 }));
  await time("stderr first page (limit 1000)", page({ stream: "stderr", limit: 1000 }));
  await time("search 'needle' (both, whole log)", search({ q: "needle", limit: 50 }));
  await time("search 'needle' case-sensitive (none)", search({ q: "needle", caseSensitive: true, limit: 50 }));
  await time("search 'absent' (whole log, no match)", search({ q: "absent", limit: 50 }));
  await time("search 'loss=0.5' (many; first 50)", search({ q: "loss=0.5", limit: 50 }));
  await time("search 'epoch' stderr (first 50)", search({ q: "epoch", stream: "stderr", limit: 50 }));
  return { accountId, runId };
}

const server = await startPostgres();
const dataDir = mkdtempSync(path.join(tmpdir(), "codeplane-bench-pglite-"));
try {
  const { db } = await createBenchDatabase(server, 2);
  const { runId } = await measure("Postgres", db);
  const plan = await sql<{
    "QUERY PLAN": string;
  }>`explain (analyze, buffers) select seq, stream, ts, line from run_log_lines where run_id = ${runId} and seq > 0 and seq <= 100000 and line ilike '%absent%' order by seq limit 50`.execute(
    db,
  );
  console.log(`\n  one search window, EXPLAIN ANALYZE:\n${plan.rows.map((r) => `    ${r["QUERY PLAN"]}`).join("\n")}`);
  await db.destroy();
  const embedded = await openDatabase({ url: null, poolMax: 1, dataDir, logger: createRootLogger("silent") });
  await migrateToLatest(embedded.db, createRootLogger("silent"));
  await measure("PGlite (embedded)", embedded.db);
  await embedded.close();
} finally {
  rmSync(dataDir, { recursive: true, force: true });
  await server.stop();
}
