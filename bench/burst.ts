// Burst benchmark (issue 32): `make bench-burst` (needs the local cluster).
//
// One big account submits BENCH_BURST_BIG (40) short runs, then each of the
// other BENCH_BURST_ACCOUNTS - 1 (2) small accounts submits BENCH_BURST_SMALL
// (5), every run `sleep BENCH_BURST_SECONDS` (5). Twice, in one process:
//
// - baseline: the same runs as plain Kubernetes Jobs (the Job codeplane would
//   make, created directly: bench/direct-job.ts), no limits, every one at once;
// - codeplane: through the API, with the built-in limiter on: an executing
//   limit of BENCH_BURST_EXECUTING (4) per account and BENCH_BURST_TOTAL (4)
//   for the installation, so accounts take turns for slots.
//
// Printed for each: per-account wait (created → command started, the main
// container's start as the kubelet recorded it, whole seconds) p50, p90, p99,
// max and the account's first run's wait; the time until every run ended.
// For codeplane also the slot turnover (median admitted → ended) and the
// fairness ratio: the worst small account's first-run queue wait (created →
// admitted) divided by the turnover. Fair share (docs/operators/limits.md)
// promises at most about one turnover, so a ratio at or under 1 means the big
// account's backlog did not hold the small ones back; the baseline's first-run
// wait of the small accounts is printed beside it. And the p99 latency of
// `GET /v1/runs` (one client, back to back) while each burst runs, against the
// same probe on the idle service before them.
//
// Figures go to $BENCH_JSON when it is set.
import * as k8s from "@kubernetes/client-node";
import { createAccount } from "../src/domain/accounts/accounts.ts";
import { createApiKey } from "../src/domain/auth/api-keys.ts";
import { BENCH_COMPUTE, createJobDirectly, deleteJobDirectly } from "./direct-job.ts";
import { call, inversions, probeList, type Tenant } from "./burst-lib.ts";
import { median, percentile, startClusterBench, writeBenchJson, type ClusterBench } from "./lib.ts";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const ACCOUNTS = env("BENCH_BURST_ACCOUNTS", 3);
const BIG = env("BENCH_BURST_BIG", 40);
const SMALL = env("BENCH_BURST_SMALL", 5);
const EXECUTING = env("BENCH_BURST_EXECUTING", 4);
const TOTAL = env("BENCH_BURST_TOTAL", 4);
const SECONDS = env("BENCH_BURST_SECONDS", 5);
const IDLE_PROBE_SECONDS = env("BENCH_BURST_IDLE_SECONDS", 10);
/** Give up on a burst after this long: something is stuck. */
const BURST_DEADLINE_MS = 30 * 60_000;
const TERMINAL = ["completed", "failed", "cancelled"];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A line on stderr at most every 10 s, so a burst that hangs shows where. */
let lastProgress = 0;
const progress = (line: string) => {
  if (Date.now() - lastProgress < 10_000) return;
  lastProgress = Date.now();
  process.stderr.write(`  … ${line}\n`);
};
const s = (ms: number) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : "-").padStart(8);

/** One run of the burst, in either mode; times in ms since the epoch. */
interface Sample {
  account: string;
  /** Its place in its account's submission order. */
  index: number;
  created: number;
  admitted?: number;
  started?: number;
  ended?: number;
  ok: boolean;
  /** codeplane's runs: the run's id. */
  runId?: string;
}

/** The bench's own account is the big one; the small ones are made here, each with its key and the fixture registered. */
async function tenants(bench: ClusterBench): Promise<Tenant[]> {
  const out: Tenant[] = [{ name: "big", key: bench.key, repositoryId: bench.repositoryId, runs: BIG }];
  for (let i = 1; i < ACCOUNTS; i++) {
    const account = await createAccount(bench.db, `small-${i}`);
    const { key } = await createApiKey(bench.db, account.id, { name: "bench" });
    const repo = await call(bench, key, "/v1/repositories", { url: bench.gitUrl, name: "fixture" });
    out.push({ name: `small-${i}`, key, repositoryId: repo.id, runs: SMALL });
  }
  return out;
}

/** The burst as plain Jobs: created in the same order, no limits; times from the pods' status. */
async function baselineBurst(bench: ClusterBench, ts: Tenant[]): Promise<Sample[]> {
  const samples = new Map<string, Sample>();
  const command = ["sh", "-c", `sleep ${SECONDS}`];
  for (const t of ts) {
    for (let i = 0; i < t.runs; i++) {
      const created = Date.now();
      samples.set(await createJobDirectly(bench, command), { account: t.name, index: i, created, ok: false });
    }
  }
  const core = bench.kc.makeApiClient(k8s.CoreV1Api);
  const t0 = Date.now();
  for (;;) {
    for (const pod of (await core.listNamespacedPod({ namespace: bench.namespace })).items) {
      const sample = samples.get(pod.metadata?.labels?.["job-name"] ?? "");
      if (!sample || sample.ended !== undefined) continue;
      const main = pod.status?.containerStatuses?.find((c) => c.name === "main")?.state;
      const started = main?.running?.startedAt ?? main?.terminated?.startedAt;
      if (started) sample.started = new Date(started).getTime();
      if (main?.terminated) {
        sample.ended = new Date(main.terminated.finishedAt ?? Date.now()).getTime();
        sample.ok = main.terminated.exitCode === 0;
      } else if (pod.status?.phase === "Failed") sample.ended = Date.now(); // e.g. its checkout failed
    }
    const ended = [...samples.values()].filter((x) => x.ended !== undefined).length;
    progress(`baseline: ${ended} of ${samples.size} Jobs ended`);
    if (ended === samples.size) break;
    if (Date.now() - t0 > BURST_DEADLINE_MS) throw new Error("the baseline burst did not finish in 30 minutes");
    await sleep(1000);
  }
  // Gone before the next burst, so its pods do not share the node with it.
  await Promise.all([...samples.keys()].map((name) => deleteJobDirectly(bench, name)));
  for (;;) {
    const left = (await core.listNamespacedPod({ namespace: bench.namespace })).items.filter((p) => samples.has(p.metadata?.labels?.["job-name"] ?? ""));
    if (!left.length) break;
    await sleep(1000);
  }
  return [...samples.values()];
}

/** The burst through the API, the limiter on; times from each run's `timeline`. */
async function codeplaneBurst(bench: ClusterBench, ts: Tenant[]): Promise<Sample[]> {
  const ids = new Map<string, { tenant: Tenant; index: number }>();
  for (const t of ts) {
    for (let i = 0; i < t.runs; i++) {
      const run = await call(bench, t.key, `/v1/repositories/${t.repositoryId}/main/runs`, { command: ["sh", "-c", `sleep ${SECONDS}`], environment: "none" });
      ids.set(run.run_id as string, { tenant: t, index: i });
    }
  }
  const done = new Map<string, Sample>();
  const t0 = Date.now();
  while (done.size < ids.size) {
    if (Date.now() - t0 > BURST_DEADLINE_MS) throw new Error(`the codeplane burst did not finish in 30 minutes (${done.size} of ${ids.size})`);
    progress(`codeplane: ${done.size} of ${ids.size} runs ended`);
    await sleep(2000);
    for (const t of ts) {
      for (let cursor: string | null = ""; cursor !== null;) {
        const page: { items: any[]; next_cursor: string | null } = await call(bench, t.key, `/v1/runs?limit=100${cursor ? `&cursor=${cursor}` : ""}`);
        for (const run of page.items) {
          const mine = ids.get(run.run_id);
          if (!mine || !TERMINAL.includes(run.status)) continue;
          const at = (event: string) => {
            const e = (run.timeline as { event: string; at: string }[]).find((x) => x.event === event);
            return e ? Date.parse(e.at) : undefined;
          };
          done.set(run.run_id, {
            runId: run.run_id,
            account: mine.tenant.name,
            index: mine.index,
            created: at("created")!,
            admitted: at("admitted"),
            started: at("started"),
            ended: at("ended"),
            ok: run.status === "completed",
          });
        }
        cursor = page.next_cursor;
      }
    }
  }
  return [...done.values()];
}

interface AccountFigures {
  runs: number;
  failed: number;
  wait_ms: { p50: number; p90: number; p99: number; max: number };
  first_run_wait_ms: number;
  first_run_queue_ms?: number;
}

function accountFigures(samples: Sample[]): AccountFigures {
  const waits = samples.filter((x) => x.started !== undefined).map((x) => x.started! - x.created);
  const first = samples.find((x) => x.index === 0);
  return {
    runs: samples.length,
    failed: samples.filter((x) => !x.ok).length,
    wait_ms: { p50: median(waits), p90: percentile(waits, 90), p99: percentile(waits, 99), max: Math.max(...waits) },
    first_run_wait_ms: first?.started !== undefined ? first.started - first.created : NaN,
    ...(first?.admitted !== undefined && { first_run_queue_ms: first.admitted - first.created }),
  };
}

function report(title: string, ts: Tenant[], samples: Sample[], probe: number[]): Record<string, unknown> {
  const byAccount = Object.fromEntries(ts.map((t) => [t.name, accountFigures(samples.filter((x) => x.account === t.name))]));
  const makespan = Math.max(...samples.map((x) => x.ended ?? NaN)) - Math.min(...samples.map((x) => x.created));
  console.log(`\n${title}: ${samples.length} runs, every one ended ${s(makespan)} after the first was created`);
  console.log("  account     runs  failed   wait p50      p90      p99      max   first run");
  for (const [name, f] of Object.entries(byAccount)) {
    console.log(
      `  ${name.padEnd(10)} ${String(f.runs).padStart(5)} ${String(f.failed).padStart(7)} ${s(f.wait_ms.p50)} ${s(f.wait_ms.p90)} ${s(f.wait_ms.p99)} ${s(f.wait_ms.max)} ${s(f.first_run_wait_ms)}`,
    );
  }
  const medians = Object.values(byAccount).map((f) => f.wait_ms.p50);
  const spread = Math.max(...medians) / Math.min(...medians);
  console.log(`  median-wait spread (slowest account's median wait / fastest's): ${spread.toFixed(2)}`);
  console.log(`  GET /v1/runs meanwhile: ${probe.length} requests, p50 ${median(probe).toFixed(0)} ms, p99 ${percentile(probe, 99).toFixed(0)} ms`);
  return {
    accounts: byAccount,
    makespan_ms: makespan,
    median_wait_spread: spread,
    list_ms: { requests: probe.length, p50: median(probe), p99: percentile(probe, 99) },
  };
}

async function main(): Promise<void> {
  const bench = await startClusterBench({
    CODEPLANE_COMPUTE_TYPES: JSON.stringify({ "cpu-general": BENCH_COMPUTE }),
    CODEPLANE_LIMIT_EXECUTING_PER_ACCOUNT: String(EXECUTING),
    CODEPLANE_LIMIT_EXECUTING_TOTAL: String(TOTAL),
  });
  try {
    const ts = await tenants(bench);
    console.log(
      `Burst: ${ts.map((t) => `${t.name} ${t.runs}`).join(", ")} runs of ${SECONDS} s; codeplane with executing limits ${EXECUTING} per account, ${TOTAL || "none"} in total`,
    );

    const idleProbe = probeList(bench, bench.key);
    await sleep(IDLE_PROBE_SECONDS * 1000);
    const idle = await idleProbe.stop();
    console.log(`\nGET /v1/runs on the idle service: ${idle.length} requests, p50 ${median(idle).toFixed(0)} ms, p99 ${percentile(idle, 99).toFixed(0)} ms`);

    let probe = probeList(bench, bench.key);
    const baseline = report("Baseline: plain Jobs, no limits", ts, await baselineBurst(bench, ts), await probe.stop());
    probe = probeList(bench, bench.key);
    const samples = await codeplaneBurst(bench, ts);
    const codeplane = report("codeplane: built-in limiter", ts, samples, await probe.stop());

    // Fairness: how long the small accounts' first runs queued behind the big account's backlog, in slot turnovers.
    const turnover = median(samples.filter((x) => x.admitted !== undefined && x.ended !== undefined).map((x) => x.ended! - x.admitted!));
    const small = ts.slice(1).map((t) => t.name);
    const firstQueue = small.map((name) => (codeplane.accounts as Record<string, AccountFigures>)[name]!.first_run_queue_ms ?? NaN);
    const fairness = Math.max(...firstQueue) / turnover;
    const firstWait = (figures: Record<string, unknown>) =>
      Math.max(...small.map((name) => (figures.accounts as Record<string, AccountFigures>)[name]!.first_run_wait_ms));
    const outOfOrder = await inversions(bench, samples, "big");
    console.log(`\nSlot turnover (median admitted → ended): ${s(turnover)}`);
    console.log(
      `Fairness ratio (the worst small account's first-run queue wait / turnover; at most about 1 is fair): ${small.length ? fairness.toFixed(2) : "- (no small account)"}`,
    );
    console.log(`Small accounts' worst first-run wait: codeplane ${s(firstWait(codeplane))}, baseline ${s(firstWait(baseline))}`);
    console.log(`The big account's runs admitted out of submission order: ${outOfOrder}`);
    const list = (f: Record<string, unknown>) => (f.list_ms as { p99: number }).p99;
    console.log(
      `GET /v1/runs p99: idle ${percentile(idle, 99).toFixed(0)} ms, during the baseline ${list(baseline).toFixed(0)} ms, during codeplane's burst ${list(codeplane).toFixed(0)} ms (ratio to idle ${(list(codeplane) / percentile(idle, 99)).toFixed(2)})`,
    );
    writeBenchJson("burst", {
      config: { accounts: ACCOUNTS, big: BIG, small: SMALL, executing_per_account: EXECUTING, executing_total: TOTAL, run_seconds: SECONDS },
      idle_list_ms: { requests: idle.length, p50: median(idle), p99: percentile(idle, 99) },
      baseline,
      codeplane,
      turnover_ms: turnover,
      fairness_ratio: fairness,
      big_account_out_of_order: outOfOrder,
    });
  } finally {
    await bench.close();
  }
}

await main();
