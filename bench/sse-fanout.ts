// SSE fan-out benchmark: `make bench-sse` (needs a cluster: `make cluster-up`).
//
// Many subscribers on one run's live log. The service runs in its own
// process; the subscribers in BENCH_SSE_PROCESSES (4) processes of their own
// (bench/processes/sse-subscribers.ts), so no one process is the bottleneck
// and the figures are the server's. The run prints `<ms clock> line <n>` at a
// fixed rate; each line's delivery latency is from that clock to its receipt
// (the pod and the clients share this machine's clock).
//
// Scenarios (subscribers x lines per second, for BENCH_SSE_SECONDS, 20):
// the baseline is 1 subscriber on the same run shape, measured in the same
// run; then 1,000 x 20/s and 1,000 x 200/s (BENCH_SSE_SUBSCRIBERS). Printed:
// p50/p99 latency and the ratio of p99 to the baseline's, lines lost or out
// of order, the service's RSS before and at peak and per subscriber.
// Figures go to $BENCH_JSON when it is set.
import { spawn } from "node:child_process";
import { startClusterBench, writeBenchJson, type ClusterBench } from "./lib.ts";

const PROCESSES = Number(process.env.BENCH_SSE_PROCESSES ?? 4);
const SUBSCRIBERS = Number(process.env.BENCH_SSE_SUBSCRIBERS ?? 1000);
const SECONDS = Number(process.env.BENCH_SSE_SECONDS ?? 20);
const ms = (x: number) => `${x.toFixed(0)} ms`;

interface Outcome {
  subscribers: number;
  rate: number;
  lines: number;
  complete: number;
  outOfOrder: number;
  p50: number;
  p99: number;
  max: number;
  rssBeforeMiB: number;
  rssPeakMiB: number;
}

/** A command printing `rate` lines a second for `seconds`, each starting with the wall clock in ms; it waits first, so subscribers can connect. */
function producer(rate: number, seconds: number, waitSeconds: number): string[] {
  const program = [
    "import sys, time",
    `time.sleep(${waitSeconds})`,
    `rate, total = ${rate}, ${rate * seconds}`,
    "start = time.time()",
    "for n in range(total):",
    "    delay = start + n / rate - time.time()",
    "    if delay > 0: time.sleep(delay)",
    "    sys.stdout.write(f'{int(time.time() * 1000)} line {n}\\n')",
    "    sys.stdout.flush()",
  ].join("\n");
  return ["python3", "-c", program];
}

async function scenario(bench: ClusterBench, subscribers: number, rate: number): Promise<Outcome> {
  const lines = rate * SECONDS;
  // Enough time for every subscriber to connect before the first line.
  const wait = Math.ceil(8 + subscribers / 100);
  const run = await bench.api(`/v1/repositories/${bench.repositoryId}/main/runs`, { command: producer(rate, SECONDS, wait), timeout_seconds: 600 });
  const rssBefore = bench.service.rssMiB();
  const procs = Math.min(PROCESSES, subscribers);
  const results = await Promise.all(
    Array.from({ length: procs }, (_, i) => {
      const share = Math.floor(subscribers / procs) + (i < subscribers % procs ? 1 : 0);
      return new Promise<{ connected: number; complete: number; outOfOrder: number; latencies: Record<string, number> }>((resolve, reject) => {
        const child = spawn(process.execPath, [new URL("./processes/sse-subscribers.ts", import.meta.url).pathname], {
          env: {
            PATH: process.env.PATH ?? "",
            STREAM_URL: `${bench.service.url}/v1/runs/${run.run_id}/logs/stream`,
            API_KEY: bench.key,
            SUBSCRIBERS: String(share),
            EXPECTED_LINES: String(lines),
          },
          stdio: ["ignore", "pipe", "inherit"],
        });
        let out = "";
        child.stdout.on("data", (b: Buffer) => (out += b.toString()));
        child.on("exit", (code) => {
          const last = out.trim().split("\n").pop() ?? "";
          if (code === 0 && last.startsWith("{")) resolve(JSON.parse(last));
          else reject(new Error(`subscriber process exited ${code}: ${out.slice(-500)}`));
        });
      });
    }),
  );
  // Sampled while the subscriber processes ran (main's sampler).
  const rssPeak = Math.max(rssBefore, peakDuring);
  const histogram = new Map<number, number>();
  for (const r of results) for (const [latency, n] of Object.entries(r.latencies)) histogram.set(Number(latency), (histogram.get(Number(latency)) ?? 0) + n);
  return {
    subscribers,
    rate,
    lines,
    complete: results.reduce((n, r) => n + r.complete, 0),
    outOfOrder: results.reduce((n, r) => n + r.outOfOrder, 0),
    p50: fromHistogram(histogram, 50),
    p99: fromHistogram(histogram, 99),
    max: fromHistogram(histogram, 100),
    rssBeforeMiB: rssBefore,
    rssPeakMiB: rssPeak,
  };
}

let peakDuring = 0;

/** The p-th percentile of latencies counted per millisecond. */
function fromHistogram(h: Map<number, number>, p: number): number {
  const total = [...h.values()].reduce((a, b) => a + b, 0);
  const rank = Math.min(total, Math.max(1, Math.ceil((p / 100) * total)));
  let seen = 0;
  for (const latency of [...h.keys()].sort((a, b) => a - b)) {
    seen += h.get(latency)!;
    if (seen >= rank) return latency;
  }
  return NaN;
}

async function main(): Promise<void> {
  const bench = await startClusterBench();
  const sampler = setInterval(() => (peakDuring = Math.max(peakDuring, bench.service.rssMiB())), 100);
  try {
    const outcomes: Outcome[] = [];
    const run = async (subscribers: number, rate: number) => {
      peakDuring = 0;
      const o = await scenario(bench, subscribers, rate);
      outcomes.push(o);
      return o;
    };
    const baseline20 = await run(1, 20);
    const at20 = await run(SUBSCRIBERS, 20);
    const baseline200 = await run(1, 200);
    const at200 = await run(SUBSCRIBERS, 200);
    console.log(`\nSSE fan-out: one run, subscribers in ${PROCESSES} processes of their own, ${SECONDS} s per scenario`);
    for (const [o, base] of [
      [baseline20, baseline20],
      [at20, baseline20],
      [baseline200, baseline200],
      [at200, baseline200],
    ] as const) {
      const perSub = o.subscribers > 1 ? ((o.rssPeakMiB - o.rssBeforeMiB) * 1024) / o.subscribers : NaN;
      console.log(
        `  ${String(o.subscribers).padStart(5)} x ${String(o.rate).padStart(3)} lines/s: every line ${o.complete}/${o.subscribers}, out of order ${o.outOfOrder}, ` +
          `latency p50 ${ms(o.p50)} p99 ${ms(o.p99)} max ${ms(o.max)} (p99 ratio to 1 subscriber ${(o.p99 / Math.max(1, base.p99)).toFixed(2)}), ` +
          `RSS ${o.rssBeforeMiB.toFixed(0)} -> ${o.rssPeakMiB.toFixed(0)} MiB${Number.isFinite(perSub) ? ` (${perSub.toFixed(0)} KiB per subscriber)` : ""}`,
      );
    }
    writeBenchJson("sse-fanout", { processes: PROCESSES, seconds: SECONDS, outcomes });
  } finally {
    clearInterval(sampler);
    await bench.close();
  }
}

await main();
