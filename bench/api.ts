// API benchmark: `make bench` (or `npm run bench`).
//
// Measures GET /v1/repositories (a page of 20 out of 10,000 rows) and
// GET /v1/repositories/{id}/files through the real service over HTTP, and in
// the same run the same work without HTTP as the baseline: the list query
// straight through `pg`, and the tree read straight through the git mirror.
// Both sides use the same concurrency and duration. Prints req/s, p50 and p99
// latency, and the ratio API / baseline.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { sql } from "kysely";
import { createAccount } from "../src/domain/accounts/accounts.ts";
import { createApiKey } from "../src/domain/auth/api-keys.ts";
import { GitMirrors } from "../src/domain/repositories/git/index.ts";
import { newId } from "../src/domain/shared/ids.ts";
import { createRootLogger } from "../src/logger.ts";
import { createFixtureRepo } from "../test/helpers/git-fixture.ts";
import { startPostgres } from "../test/helpers/postgres-server.ts";
import { createBenchDatabase, percentile, serveInChildProcess } from "./lib.ts";

const ROWS = 10_000;
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

/** Runs `op` from CONNECTIONS concurrent loops for SECONDS, like autocannon does over HTTP. */
async function closedLoop(op: () => Promise<unknown>): Promise<Figures> {
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end) {
        const t = performance.now();
        try {
          await op();
          latencies.push(performance.now() - t);
        } catch {
          errors++;
        }
      }
    }),
  );
  return { rps: latencies.length / SECONDS, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors };
}

async function http(url: string, key: string): Promise<Figures> {
  const r = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers: { authorization: `Bearer ${key}` } });
  const bad = r.non2xx + r.errors + r.timeouts;
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: bad };
}

function report(name: string, api: Figures, base: Figures, baseName: string): void {
  const f = (x: number) => x.toFixed(2).padStart(9);
  console.log(`\n${name}`);
  console.log(`  ${"".padEnd(22)} ${"req/s".padStart(9)} ${"p50 ms".padStart(9)} ${"p99 ms".padStart(9)} errors`);
  console.log(`  ${"API (HTTP)".padEnd(22)} ${f(api.rps)} ${f(api.p50)} ${f(api.p99)} ${api.errors}`);
  console.log(`  ${baseName.padEnd(22)} ${f(base.rps)} ${f(base.p50)} ${f(base.p99)} ${base.errors}`);
  console.log(`  ratio API/baseline      throughput ${(api.rps / base.rps).toFixed(3)}   p50 latency ${(api.p50 / base.p50).toFixed(2)}x`);
}

async function main(): Promise<void> {
  console.log(`codeplane API benchmark: ${CONNECTIONS} connections, ${SECONDS}s per measurement, ${ROWS} repositories`);
  const server = await startPostgres();
  const dataDir = mkdtempSync(path.join(tmpdir(), "codeplane-bench-"));
  const fixture = await createFixtureRepo();
  try {
    const { url, pool, db } = await createBenchDatabase(server, CONNECTIONS);
    const silent = createRootLogger("silent");

    const account = await createAccount(db, "bench");
    const { key } = await createApiKey(db, account.id, { name: "bench" });
    for (let i = 0; i < ROWS; i += 1000) {
      const now = new Date();
      await db
        .insertInto("repositories")
        .values(Array.from({ length: 1000 }, (_, j) => {
          const id = newId();
          return { id, account_id: account.id, name: `repo-${i + j}`, url: `https://example.invalid/r/${id}.git`, provider: "git" as const, default_branch: "main", created_at: now, updated_at: now };
        }))
        .execute();
    }
    await sql`analyze`.execute(db);

    // The service runs in its own process, as deployed, so the load generator
    // does not share its event loop.
    const service = await serveInChildProcess({
      DATABASE_URL: url,
      CODEPLANE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      CODEPLANE_DATA_DIR: dataDir,
      CODEPLANE_HOST: "127.0.0.1",
      CODEPLANE_ALLOW_LOCAL_REPOSITORIES: "true",
      CODEPLANE_MIGRATE_ON_START: "false",
      CODEPLANE_RATE_LIMIT_REQUESTS: "0",
      CODEPLANE_LOG_LEVEL: "warn",
      CODEPLANE_DB_POOL_MAX: String(CONNECTIONS),
    });
    try {
      const created = await fetch(`${service.url}/v1/repositories`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ url: fixture.url, name: "fixture" }),
      });
      const repo = (await created.json()) as { id: string };

      const listApi = await http(`${service.url}/v1/repositories?limit=20`, key);
      const listRaw = await closedLoop(() =>
        pool.query("select * from repositories where account_id = $1 order by id desc limit 21", [account.id]),
      );
      report("GET /v1/repositories (20 of 10,000)", listApi, listRaw, "pg query (baseline)");

      const filesApi = await http(`${service.url}/v1/repositories/${repo.id}/files?path=a/b`, key);
      const mirrors = new GitMirrors({
        cacheDir: path.join(dataDir, "baseline-git"),
        refreshIntervalSeconds: 60,
        maxFileBytes: 1024 * 1024,
        commandTimeoutMs: 60_000,
        allowLocal: true,
        logger: silent,
      });
      const filesRaw = await closedLoop(() => mirrors.listTree({ id: repo.id, url: fixture.url, account_id: account.id }, "main", "a/b", { limit: 1000 }));
      report("GET /v1/repositories/{id}/files?path=a/b", filesApi, filesRaw, "git mirror (baseline)");
    } finally {
      await service.close();
      await db.destroy();
    }
  } finally {
    await fixture.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
    await server.stop();
  }
}

await main();
