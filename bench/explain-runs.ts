// Query plans of the run list at BENCH_RUN_ROWS (1,000,000 by default) rows:
// `node bench/explain-runs.ts` prints EXPLAIN ANALYZE of each query
// bench/api.ts measures, as the service makes it (run-rows.ts listRuns).
import { sql } from "kysely";
import { createAccount } from "../src/domain/accounts/accounts.ts";
import { newId } from "../src/domain/shared/ids.ts";
import { listRunsQuery } from "../src/domain/runs/run-rows.ts";
import { startPostgres } from "../test/helpers/postgres-server.ts";
import { createBenchDatabase } from "./lib.ts";
import { seedRuns } from "./runs-seed.ts";

const RUNS = Number(process.env.BENCH_RUN_ROWS ?? 1_000_000);
const server = await startPostgres();
try {
  const { db } = await createBenchDatabase(server, 2);
  const account = await createAccount(db, "bench");
  const repos = Array.from({ length: 100 }, (_, i) => ({
    id: newId(),
    account_id: account.id,
    name: `r${i}`,
    url: `https://example.invalid/${i}.git`,
    provider: "git" as const,
    default_branch: "main",
    updated_at: new Date(),
  }));
  await db.insertInto("repositories").values(repos).execute();
  await seedRuns(
    db,
    account.id,
    repos.map((r) => r.id),
    RUNS,
  );
  const middle = await db
    .selectFrom("runs")
    .select("id")
    .where("account_id", "=", account.id)
    .orderBy("id", "desc")
    .offset(Math.floor(RUNS / 2))
    .limit(1)
    .executeTakeFirstOrThrow();
  const page = { limit: 20 };
  const cases = {
    "first page": [{}, page],
    "deep page": [{}, { ...page, cursor: middle.id }],
    "status=completed": [{ status: "completed" }, page],
    "status=preprocessing": [{ status: "preprocessing" }, page],
    repository_id: [{ repositoryId: repos[0]!.id }, page],
    "repository_id + status=running": [{ repositoryId: repos[0]!.id, status: "running" }, page],
    "repository_id + status=running, deep": [
      { repositoryId: repos[0]!.id, status: "running" },
      { ...page, cursor: middle.id },
    ],
  } as const;
  for (const [name, [filter, p]] of Object.entries(cases)) {
    // The exact statement listRuns sends, its parameters inlined for EXPLAIN (all are ids, statuses and numbers).
    const compiled = listRunsQuery(db, account.id, filter, p).compile();
    const text = compiled.sql.replace(/\$(\d+)/g, (_, n: string) => `'${String(compiled.parameters[Number(n) - 1])}'`);
    const plan = await sql.raw<{ "QUERY PLAN": string }>(`explain (analyze, buffers) ${text}`).execute(db);
    console.log(`\n== ${name}\n${plan.rows.map((r) => r["QUERY PLAN"]).join("\n")}`);
  }
  await db.destroy();
} finally {
  await server.stop();
}
