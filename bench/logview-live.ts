// The run page at 1,000 lines a second: `node bench/logview-live.ts` writes a
// running run's lines into Postgres at BENCH_LINES_PER_SECOND (1,000) for
// BENCH_SECONDS (60), as the archiver does, while the service (in its own
// process, no cluster: its log stream follows Postgres) streams them to a plain
// SSE client and to the run page in Chromium. It prints, from the DevTools
// protocol and the page: long tasks (count, longest), the renderer main
// thread's busy share, and each sampled line's delay from the plain client's
// receipt to its row in the page's DOM (p50, p95, max), and how far behind the
// plain client the page's last line was at each second.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { createApiKey } from "../src/domain/auth/api-keys.ts";
import { launchBrowser } from "../test/helpers/browser.ts";
import { startPostgres } from "../test/helpers/postgres-server.ts";
import { insertRunRow, seedAccountWithRepository } from "../test/helpers/seed.ts";
import { benchServiceEnv, createBenchDatabase, percentile, serveInChildProcess } from "./lib.ts";

const RATE = Number(process.env.BENCH_LINES_PER_SECOND ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const SAMPLE_EVERY = 50;

const server = await startPostgres();
const dataDir = mkdtempSync(path.join(tmpdir(), "codeplane-bench-logview-"));
const { url, db } = await createBenchDatabase(server, 4);
const svc = await serveInChildProcess(benchServiceEnv(url, dataDir));
const browser = await launchBrowser();
try {
  const { accountId, repositoryId } = await seedAccountWithRepository(db);
  const { key } = await createApiKey(db, accountId, { name: "bench" });
  const runId = await insertRunRow(db, { accountId, repositoryId, status: "running" });

  // The plain client: the stream read as text, each line's receipt time by seq.
  const plain = new Map<number, number>();
  const abort = new AbortController();
  void (async () => {
    const res = await fetch(`${svc.url}/v1/runs/${runId}/logs/stream`, { headers: { authorization: `Bearer ${key}` }, signal: abort.signal });
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of res.body!) {
      buf += decoder.decode(chunk as Uint8Array, { stream: true });
      let i: number;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const m = /^id: (\d+)$/m.exec(buf.slice(0, i));
        if (m && /^event: std(out|err)$/m.test(buf.slice(0, i))) plain.set(Number(m[1]), Date.now());
        buf = buf.slice(i + 2);
      }
    }
  })().catch(() => {});

  const page = await (await browser.newContext({ viewport: { width: 1200, height: 900 } })).newPage();
  await page.goto(`${svc.url}/ui/`);
  await page.locator("#api-key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Repositories" }).waitFor();
  await page.goto(`${svc.url}/ui/#/runs/${runId}`);
  await page.locator("#log-state", { hasText: "live" }).waitFor();
  // In the page: long tasks, and when each sampled seq's row first entered the DOM (epoch ms).
  await page.evaluate(`(() => {
    window.__long = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(e.duration); }).observe({ type: "longtask" });
    window.__seen = {};
    new MutationObserver((ms) => {
      const now = performance.timeOrigin + performance.now();
      for (const m of ms) for (const n of m.addedNodes) {
        const s = n.getAttribute && n.classList.contains("l") ? Number(n.getAttribute("data-seq")) : 0;
        if (s && s % ${SAMPLE_EVERY} === 0 && !(s in window.__seen)) window.__seen[s] = now;
      }
    }).observe(document.querySelector("#log .rows"), { childList: true });
  })()`);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Performance.enable");
  const taskSeconds = async () => {
    const { metrics } = await cdp.send("Performance.getMetrics");
    return metrics.find((m) => m.name === "TaskDuration")!.value;
  };

  const t0 = Date.now();
  const task0 = await taskSeconds();
  const behind: number[] = [];
  let seq = 0;
  for (let s = 1; s <= SECONDS * 10; s++) {
    const batch = RATE / 10;
    await sql`insert into run_log_lines (run_id, seq, stream, ts, line)
      select ${runId}::uuid, g, case when g % 10 = 0 then 'stderr' else 'stdout' end, now(), 'line ' || g || ' \u001b[32mok\u001b[0m loss=0.' || (g % 997)
      from generate_series(${seq + 1}::int, ${seq + batch}::int) g`.execute(db);
    seq += batch;
    if (s % 10 === 0) {
      const pageLast = Number(await page.locator("section[data-last-seq]").getAttribute("data-last-seq"));
      behind.push(Math.max(...plain.keys(), 0) - pageLast);
    }
    const wait = t0 + s * 100 - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  const wall = (Date.now() - t0) / 1000;
  const busy = ((await taskSeconds()) - task0) / wall;
  await db.updateTable("runs").set({ status: "completed", status_rank: 3, exit_code: 0, logs_complete: true }).where("id", "=", runId).execute();
  await page.locator("#log-state", { hasText: "ended" }).waitFor({ timeout: 120_000 });
  const long = await page.evaluate<number[]>("window.__long");
  const seen = await page.evaluate<Record<string, number>>("window.__seen");
  const delays = Object.entries(seen)
    .map(([s, at]) => at - (plain.get(Number(s)) ?? at))
    .filter((d) => Number.isFinite(d));
  const received = Number(await page.locator("section[data-received]").getAttribute("data-received"));
  const duplicates = await page.locator("section[data-duplicates]").getAttribute("data-duplicates");
  abort.abort();
  console.log(
    `${seq} lines written in ${wall.toFixed(1)} s (${(seq / wall).toFixed(0)} lines/s); plain client got ${plain.size}, the page ${received} (duplicates ${duplicates})`,
  );
  console.log(
    `long tasks: ${long.length}, longest ${long.length ? Math.max(...long).toFixed(0) : 0} ms; renderer main thread busy ${(busy * 100).toFixed(1)}% of the time`,
  );
  console.log(
    `plain client -> row in the page's DOM, ${delays.length} sampled lines: p50 ${percentile(delays, 50).toFixed(0)} ms, p95 ${percentile(delays, 95).toFixed(0)} ms, max ${Math.max(...delays).toFixed(0)} ms`,
  );
  console.log(`lines behind the plain client, each second: p50 ${percentile(behind, 50)}, p95 ${percentile(behind, 95)}, max ${Math.max(...behind)}`);
} finally {
  await browser.close();
  await svc.close();
  await db.destroy();
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
