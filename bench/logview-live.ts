// The run page at 1,000 lines a second: `node bench/logview-live.ts` writes a
// running run's lines into Postgres at BENCH_LINES_PER_SECOND (1,000) for
// BENCH_SECONDS (60), as the archiver does, while the service (in its own
// process, no cluster: its log stream follows Postgres) streams them to a plain
// SSE client and to the run page in Chromium. It prints, from the DevTools
// protocol and the page: long tasks (count, longest), the renderer main
// thread's busy share, and each sampled line's delay from the plain client's
// receipt to its row in the page's DOM (p50, p95, max), and how far behind the
// plain client the page's last line was at each second. The renderer's time
// is split as the DevTools protocol's Performance metrics split it (script,
// layout, style); BENCH_PROFILE=1 also samples the renderer's JavaScript with
// the protocol's Profiler and prints the functions with the most self time.
// Figures go to $BENCH_JSON when it is set.
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { sql } from "kysely";
import { createApiKey } from "../src/domain/auth/api-keys.ts";
import { launchBrowser } from "../test/helpers/browser.ts";
import { startPostgres } from "../test/helpers/postgres-server.ts";
import { insertRunRow, seedAccountWithRepository } from "../test/helpers/seed.ts";
import { benchServiceEnv, createBenchDatabase, percentile, serveInChildProcess, writeBenchJson } from "./lib.ts";

const RATE = Number(process.env.BENCH_LINES_PER_SECOND ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const SAMPLE_EVERY = 50;
const PROFILE = process.env.BENCH_PROFILE === "1";
const LONG_GOAL_MS = 200;

interface TraceEvent {
  ph: string;
  name: string;
  pid: number;
  tid: number;
  dur?: number;
  tdur?: number;
  args?: { name?: string };
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
/** The functions with the most self time in a CPU profile (sample counts times the mean interval). */
function topSelf(profile: { nodes: ProfileNode[]; samples?: number[]; startTime: number; endTime: number }, n: number): string[] {
  const byId = new Map(profile.nodes.map((x) => [x.id, x]));
  const counts = new Map<string, number>();
  const samples = profile.samples ?? [];
  for (const id of samples) {
    const f = byId.get(id)!.callFrame;
    const key = `${f.functionName || "(anonymous)"} ${f.url.replace(/^.*\//, "")}${f.url ? `:${f.lineNumber + 1}` : ""}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const msPerSample = (profile.endTime - profile.startTime) / 1000 / Math.max(1, samples.length);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, c]) => `${(c * msPerSample).toFixed(0).padStart(7)} ms  ${k}`);
}

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
        if (s && s % ${SAMPLE_EVERY} === 0 && !(s in window.__seen) && !window.__done) window.__seen[s] = now;
      }
    }).observe(document.querySelector("#log .rows"), { childList: true });
  })()`);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Performance.enable");
  const METRICS = ["TaskDuration", "ScriptDuration", "LayoutDuration", "RecalcStyleDuration"] as const;
  const metricSeconds = async () => {
    const { metrics } = await cdp.send("Performance.getMetrics");
    return Object.fromEntries(METRICS.map((k) => [k, metrics.find((m) => m.name === k)?.value ?? 0])) as Record<(typeof METRICS)[number], number>;
  };
  // The renderer's tasks from a trace (the toplevel category): each task's wall time and its thread's
  // CPU time, which tell a task that worked long from one that waited for a core on a loaded machine.
  const trace: TraceEvent[] = [];
  cdp.on("Tracing.dataCollected", (e) => trace.push(...(e.value as unknown as TraceEvent[])));
  await cdp.send("Tracing.start", { categories: "toplevel", transferMode: "ReportEvents" });
  if (PROFILE) {
    await cdp.send("Profiler.enable");
    await cdp.send("Profiler.setSamplingInterval", { interval: 1000 });
    await cdp.send("Profiler.start");
  }

  const t0 = Date.now();
  const m0 = await metricSeconds();
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
  const m1 = await metricSeconds();
  const share = (k: (typeof METRICS)[number]) => (m1[k] - m0[k]) / wall;
  const busy = share("TaskDuration");
  const profile = PROFILE ? (await cdp.send("Profiler.stop")).profile : null;
  const traced = new Promise((r) => cdp.once("Tracing.tracingComplete", r));
  await cdp.send("Tracing.end");
  await traced;
  const mains = new Set(trace.filter((e) => e.ph === "M" && e.name === "thread_name" && e.args?.name === "CrRendererMain").map((e) => `${e.pid}:${e.tid}`));
  const tasks = trace.filter((e) => e.ph === "X" && /RunTask$/.test(e.name) && mains.has(`${e.pid}:${e.tid}`) && e.dur !== undefined);
  const wallOver = tasks.filter((e) => e.dur! > LONG_GOAL_MS * 1000);
  const cpuOver = tasks.filter((e) => (e.tdur ?? 0) > LONG_GOAL_MS * 1000);
  const maxCpu = Math.max(0, ...tasks.map((e) => e.tdur ?? 0)) / 1000;
  const cpuOfWallOver = wallOver.map((e) => (e.tdur ?? 0) / 1000);
  // Rows drawn after this are the ended view's (it draws more rows above the end), not live lines arriving.
  await page.evaluate("window.__done = true");
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
  const over = long.filter((d) => d > LONG_GOAL_MS).length;
  const longest = long.length ? Math.max(...long) : 0;
  console.log(
    `long tasks: ${long.length} (over ${LONG_GOAL_MS} ms: ${over}), longest ${longest.toFixed(0)} ms; renderer main thread busy ${(busy * 100).toFixed(1)}% of the time (script ${(share("ScriptDuration") * 100).toFixed(1)}%, layout ${(share("LayoutDuration") * 100).toFixed(1)}%, style ${(share("RecalcStyleDuration") * 100).toFixed(1)}%)`,
  );
  console.log(
    `plain client -> row in the page's DOM, ${delays.length} sampled lines: p50 ${percentile(delays, 50).toFixed(0)} ms, p95 ${percentile(delays, 95).toFixed(0)} ms, max ${Math.max(...delays).toFixed(0)} ms`,
  );
  console.log(`lines behind the plain client, each second: p50 ${percentile(behind, 50)}, p95 ${percentile(behind, 95)}, max ${Math.max(...behind)}`);
  console.log(
    `renderer main-thread tasks (trace): ${tasks.length}; over ${LONG_GOAL_MS} ms of wall time ${wallOver.length} (their CPU time: max ${Math.max(0, ...cpuOfWallOver).toFixed(0)} ms), over ${LONG_GOAL_MS} ms of CPU time ${cpuOver.length}; longest CPU time of one task ${maxCpu.toFixed(0)} ms`,
  );
  if (profile) console.log(`renderer JavaScript, most self time:\n${topSelf(profile, 15).join("\n")}`);
  writeBenchJson("logview-live", {
    lines_per_second: RATE,
    seconds: SECONDS,
    written: seq,
    plain_received: plain.size,
    page_received: received,
    duplicates: Number(duplicates),
    long_tasks: long.length,
    long_tasks_over_200ms: over,
    longest_task_ms: Math.round(longest),
    renderer_busy: busy,
    trace_tasks_over_200ms_wall: wallOver.length,
    trace_tasks_over_200ms_cpu: cpuOver.length,
    trace_longest_task_cpu_ms: Math.round(maxCpu),
    renderer_script: share("ScriptDuration"),
    renderer_layout: share("LayoutDuration"),
    renderer_style: share("RecalcStyleDuration"),
    row_delay_ms: { p50: percentile(delays, 50), p95: percentile(delays, 95), max: Math.max(...delays) },
    lines_behind: { p50: percentile(behind, 50), p95: percentile(behind, 95), max: Math.max(...behind) },
    load_average: loadavg()[0],
  });
} finally {
  await browser.close();
  await svc.close();
  await db.destroy();
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
