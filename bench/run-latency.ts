// Run benchmark: `make bench-runs` (needs a cluster: `make cluster-up`).
//
// 1. Time from POST /runs to the first stdout line at an SSE client, against
//    the baseline of creating the same Job (and its checkout Secret) directly
//    and following its pod log through the Kubernetes API: BENCH_RUNS (20) of
//    each, interleaved so drift hits both alike; medians, the ratio, and the
//    time split into the steps between (seen through watches in this process,
//    the line's own timestamp from the entrypoint), so what codeplane adds
//    over a raw Job shows where it is.
// 2. A burst of BENCH_BURST (200) runs submitted at once: time until all their
//    Jobs exist, against the same Jobs created directly with the controller's
//    concurrency (8 at a time), and until all runs have finished; repeated
//    BENCH_BURST_ROUNDS (3) times, the two taking turns at going first, and the
//    ratio is the rounds' median.
//
// 3. Warm pools (issue 33): BENCH_WARM_RUNS (20) runs of a small repository whose environment
//    (one pip requirement, installed through the node's package mirror) is cached, each on a pool
//    of 2 waiting pods: POST to the first stdout line at an SSE client, against the same raw Job +
//    log follow baseline in the same loop, with the warm path's steps (claim, assignment, checkout,
//    environment restore, exec, line printed, line delivered) read from the claim's row. Each warm
//    sample starts once the pool has a pod waiting (its refill after the last claim).
//
// Figures go to $BENCH_JSON when it is set. The SSE fan-out has its own
// benchmark (bench/sse-fanout.ts).
import { Writable } from "node:stream";
import * as k8s from "@kubernetes/client-node";
import { FrameSplitter } from "@codeplane/frames";
import { BENCH_COMPUTE, createJobDirectly, deleteJobDirectly } from "./direct-job.ts";
import { sseClient } from "../test/helpers/sse-client.ts";
import { median, percentile, startClusterBench, writeBenchJson, type ClusterBench } from "./lib.ts";
import { execFile as execFileCb } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { MIRROR } from "../test/helpers/cluster.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const BURST = Number(process.env.BENCH_BURST ?? 200);
const BURST_ROUNDS = Number(process.env.BENCH_BURST_ROUNDS ?? 3);
const WARM_RUNS = Number(process.env.BENCH_WARM_RUNS ?? RUNS);
/** The controller's reconcile concurrency (src/controller/controller.ts), for the burst's baseline. */
const CONTROLLER_CONCURRENCY = 8;
// Small requests so a burst is limited by the node's pod capacity, not CPU accounting.
const COMPUTE = {
  "cpu-general": BENCH_COMPUTE,
  // BENCH_WARM_PRESET=cpu-chart runs the warm case with the chart's cpu-general requests (a pod's CPU share follows its request).
  "cpu-chart": { requests: { cpu: "250m", memory: "256Mi" }, limits: { cpu: "1", memory: "1Gi" }, nodeSelector: {}, tolerations: [] },
};
const WARM_PRESET = process.env.BENCH_WARM_PRESET ?? "cpu-general";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = (x: number) => `${x.toFixed(0)} ms`.padStart(8);

/** The steps between submission and the first line at the client, in order; each is when it was first seen. */
const STEPS = ["accepted", "resource", "job", "pod", "scheduled", "initialised", "started", "printed", "delivered"] as const;
type Step = (typeof STEPS)[number];
const STEP_NAMES: Record<Step, string> = {
  accepted: "request answered (201)",
  resource: "Run resource seen",
  job: "Job created",
  pod: "pod created",
  scheduled: "pod scheduled",
  initialised: "init containers done (checkout)",
  started: "main container running",
  printed: "line printed (its timestamp)",
  delivered: "line at the client",
};

/** When each step was first seen, per Job name, by this process's watches. */
class Timeline {
  readonly #marks = new Map<string, Partial<Record<Step, number>>>();
  mark(job: string, step: Step, at = Date.now()): void {
    const m = this.#marks.get(job) ?? {};
    m[step] ??= at;
    this.#marks.set(job, m);
  }
  of(job: string): Partial<Record<Step, number>> {
    return this.#marks.get(job) ?? {};
  }
  has(job: string, step: Step): boolean {
    return this.#marks.get(job)?.[step] !== undefined;
  }
}

/** Watches the namespace's Runs, Jobs and Pods for the timeline, re-watching from the last version when a watch ends. */
function watchTimeline(kc: k8s.KubeConfig, namespace: string, timeline: Timeline): () => void {
  let stopped = false;
  const aborts: AbortController[] = [];
  const watch = (path: string, onObject: (type: string, o: k8s.KubernetesObject) => void) => {
    let rv: string | undefined;
    const start = () => {
      if (stopped) return;
      void new k8s.Watch(kc)
        .watch(
          path,
          { allowWatchBookmarks: true, ...(rv && { resourceVersion: rv }) },
          (type, o: k8s.KubernetesObject) => {
            if (o.metadata?.resourceVersion) rv = o.metadata.resourceVersion;
            if (type === "ERROR") rv = undefined;
            else if (type !== "BOOKMARK") onObject(type, o);
          },
          () => setTimeout(start, 100),
        )
        .then(
          (a) => aborts.push(a),
          () => setTimeout(start, 500),
        );
    };
    start();
  };
  watch(`/apis/codeplane.dev/v1alpha1/namespaces/${namespace}/runs`, (type, o) => {
    if (type === "ADDED") timeline.mark(o.metadata!.name!, "resource");
  });
  watch(`/apis/batch/v1/namespaces/${namespace}/jobs`, (type, o) => {
    if (type === "ADDED") timeline.mark(o.metadata!.name!, "job");
  });
  watch(`/api/v1/namespaces/${namespace}/pods`, (type, o) => {
    const pod = o as k8s.V1Pod;
    const job = pod.metadata?.labels?.["job-name"];
    if (!job || type === "DELETED") return;
    timeline.mark(job, "pod");
    if (pod.spec?.nodeName) timeline.mark(job, "scheduled");
    const inits = pod.status?.initContainerStatuses ?? [];
    if (inits.length && inits.every((c) => c.state?.terminated?.exitCode === 0)) timeline.mark(job, "initialised");
    const main = pod.status?.containerStatuses?.find((c) => c.name === "main")?.state;
    if (main?.running || main?.terminated) timeline.mark(job, "started");
  });
  return () => {
    stopped = true;
    for (const a of aborts) a.abort();
  };
}

/** Follows the Job's pod log once its main container runs; resolves with the first line's own timestamp and when it arrived. */
async function firstLineOfPod(bench: ClusterBench, timeline: Timeline, job: string): Promise<{ printed: number; delivered: number }> {
  const core = bench.kc.makeApiClient(k8s.CoreV1Api);
  const log = new k8s.Log(bench.kc);
  for (;;) {
    while (!timeline.has(job, "started")) await sleep(2);
    const pods = await core.listNamespacedPod({ namespace: bench.namespace, labelSelector: `job-name=${job}` });
    const pod = pods.items[0];
    if (!pod) continue;
    const got = await new Promise<{ printed: number; delivered: number } | null>((resolve) => {
      const splitter = new FrameSplitter();
      const sink = new Writable({
        write(chunk: Buffer, _e, cb) {
          const line = splitter.push(chunk).find((f) => f.kind === "line");
          if (line?.kind === "line") resolve({ printed: Date.parse(line.line.ts), delivered: Date.now() });
          cb();
        },
        final(cb) {
          resolve(null);
          cb();
        },
      });
      sink.on("pipe", (source) => source.on("error", () => resolve(null)));
      void log.log(bench.namespace, pod.metadata!.name!, "main", sink, { follow: true }).then(
        (c) => sink.once("finish", () => c.abort()),
        () => resolve(null),
      );
    });
    if (got) return got;
    await sleep(50);
  }
}

/**
 * The median time from submission to each step, over the samples that saw it.
 * Steps are seen by different observers (watch events, the kubelet's status
 * updates, the line's own timestamp), so one can show before the step listed
 * above it: a container's "running" reaches the API server after it printed.
 */
function breakdown(samples: { t0: number; marks: Partial<Record<Step, number>> }[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const step of STEPS) {
    const since = samples.filter((s) => s.marks[step] !== undefined).map((s) => s.marks[step]! - s.t0);
    if (since.length) out[step] = median(since);
  }
  return out;
}

async function main(): Promise<void> {
  const bench = await startClusterBench({
    CODEPLANE_COMPUTE_TYPES: JSON.stringify(COMPUTE),
    // The warm case's environment installs through the node's package mirror.
    CODEPLANE_RUN_EGRESS_ALLOW: MIRROR.egressAllow,
    CODEPLANE_RUN_PREPROCESS_ENV: JSON.stringify(MIRROR.preprocessEnv),
  });
  const { kc, namespace, key, service, api } = bench;
  const timeline = new Timeline();
  const stopWatching = watchTimeline(kc, namespace, timeline);
  const figures: Record<string, unknown> = { runs: RUNS, burst: BURST };
  try {
    await sleep(1000); // the watches are listening
    const repo = bench.repositoryId;

    // 1. Time to the first line, codeplane and the baseline taking turns (BENCH_RUNS=0 skips it).
    if (RUNS > 0) {
      const viaApi: { t0: number; marks: Partial<Record<Step, number>> }[] = [];
      const direct: { t0: number; marks: Partial<Record<Step, number>> }[] = [];
      for (let i = 0; i < RUNS; i++) {
        {
          const t0 = Date.now();
          const run = await api(`/v1/repositories/${repo}/main/runs`, { command: ["sh", "-c", "echo ready"] });
          const job = `run-${run.run_id as string}`;
          timeline.mark(job, "accepted");
          const client = sseClient(`${service.url}/v1/runs/${run.run_id as string}/logs/stream`, key);
          while (!client.lines.length) await sleep(1);
          timeline.mark(job, "delivered");
          timeline.mark(job, "printed", Date.parse(client.lines[0]!.data.ts!));
          client.es.close();
          viaApi.push({ t0, marks: timeline.of(job) });
        }
        {
          const t0 = Date.now();
          const job = await createJobDirectly(bench, ["sh", "-c", "echo ready"]);
          const first = await firstLineOfPod(bench, timeline, job);
          timeline.mark(job, "printed", first.printed);
          timeline.mark(job, "delivered", first.delivered);
          direct.push({ t0, marks: timeline.of(job) });
          await deleteJobDirectly(bench, job);
        }
      }
      const total = (s: { t0: number; marks: Partial<Record<Step, number>> }) => s.marks.delivered! - s.t0;
      const apiTotals = viaApi.map(total);
      const directTotals = direct.map(total);
      const apiSteps = breakdown(viaApi);
      const directSteps = breakdown(direct);
      const ratio = median(apiTotals) / median(directTotals);
      console.log(`\nTime from submission to the first stdout line at the client (${RUNS} runs each, interleaved)`);
      console.log(`  codeplane: POST + SSE         median ${ms(median(apiTotals))}   p90 ${ms(percentile(apiTotals, 90))}`);
      console.log(`  baseline: Job + pod log       median ${ms(median(directTotals))}   p90 ${ms(percentile(directTotals, 90))}`);
      console.log(`  ratio codeplane/baseline      ${ratio.toFixed(2)}`);
      console.log(`\n  median time from submission to each step (as first seen here)   codeplane  baseline`);
      for (const step of STEPS) {
        const a = apiSteps[step];
        const d = directSteps[step];
        if (a === undefined && d === undefined) continue;
        console.log(`  ${STEP_NAMES[step].padEnd(62)} ${a === undefined ? "       -" : ms(a)}  ${d === undefined ? "       -" : ms(d)}`);
      }
      figures.first_line = {
        codeplane_ms: { median: median(apiTotals), p90: percentile(apiTotals, 90), samples: apiTotals },
        baseline_ms: { median: median(directTotals), p90: percentile(directTotals, 90), samples: directTotals },
        ratio,
        steps_ms: { codeplane: apiSteps, baseline: directSteps },
      };
    }

    // 2. Bursts: BENCH_BURST_ROUNDS rounds of the baseline and codeplane's burst, taking turns at going
    // first, each on a quiet node (the other's Jobs deleted and their pods gone). One pair of bursts moved between
    // 18 and 30 s for the same baseline from one run to the next: the ratio is the median of the rounds'.
    if (BURST > 0) {
      const core = kc.makeApiClient(k8s.CoreV1Api);
      /** Until none of these (deleted) Jobs' pods is left. */
      const quiet = async (jobs: string[]) => {
        const names = new Set(jobs);
        for (;;) {
          const left = (await core.listNamespacedPod({ namespace })).items.filter((p) => names.has(p.metadata?.labels?.["job-name"] ?? ""));
          if (!left.length) return;
          await sleep(1000);
        }
      };
      const baseline = async () => {
        const t0 = Date.now();
        const jobs: string[] = [];
        let next = 0;
        await Promise.all(
          Array.from({ length: CONTROLLER_CONCURRENCY }, async () => {
            while (next < BURST) {
              next++;
              jobs.push(await createJobDirectly(bench, ["true"]));
            }
          }),
        );
        while (!jobs.every((j) => timeline.has(j, "job"))) await sleep(20);
        const allJobs = Math.max(...jobs.map((j) => timeline.of(j).job!)) - t0;
        await Promise.all(jobs.map((j) => deleteJobDirectly(bench, j)));
        await quiet(jobs);
        return allJobs;
      };
      const viaCodeplane = async () => {
        const t0 = Date.now();
        const burst = await Promise.all(
          Array.from({ length: BURST }, () => api(`/v1/repositories/${repo}/main/runs`, { command: ["true"] }).then((r) => `run-${r.run_id as string}`)),
        );
        const accepted = Date.now() - t0;
        while (!burst.every((j) => timeline.has(j, "job"))) await sleep(20);
        const allJobs = Math.max(...burst.map((j) => timeline.of(j).job!)) - t0;
        const ids = new Set(burst);
        let allDone = 0;
        while (!allDone) {
          const runs = (await kc
            .makeApiClient(k8s.CustomObjectsApi)
            .listNamespacedCustomObject({ group: "codeplane.dev", version: "v1alpha1", namespace, plural: "runs" })) as {
            items: { metadata: { name: string }; status?: { phase?: string } }[];
          };
          const finished = runs.items.filter((r) => ids.has(r.metadata.name) && ["completed", "failed", "cancelled"].includes(r.status?.phase ?? "")).length;
          if (finished === BURST) allDone = Date.now() - t0;
          else await sleep(500);
          if (Date.now() - t0 > 30 * 60_000) throw new Error("burst did not finish in 30 minutes");
        }
        // Their Jobs go now rather than at their TTL, which would land the deletions in the next round's measurement.
        const batch = kc.makeApiClient(k8s.BatchV1Api);
        await Promise.all(burst.map((name) => batch.deleteNamespacedJob({ name, namespace, propagationPolicy: "Background" }).catch(() => undefined)));
        await quiet(burst);
        return { accepted, allJobs, allDone };
      };
      const rounds: { codeplane: { accepted: number; allJobs: number; allDone: number }; baseline: number; ratio: number }[] = [];
      console.log(
        `\n${BURST} runs submitted at once, ${BURST_ROUNDS} rounds (the baseline: the same Jobs created directly, ${CONTROLLER_CONCURRENCY} at a time)`,
      );
      console.log("  round  first      all accepted  all Jobs exist  baseline Jobs   ratio  all runs finished");
      for (let i = 0; i < BURST_ROUNDS; i++) {
        const baselineFirst = i % 2 === 0;
        let base = 0;
        if (baselineFirst) base = await baseline();
        const ours = await viaCodeplane();
        if (!baselineFirst) base = await baseline();
        rounds.push({ codeplane: ours, baseline: base, ratio: ours.allJobs / base });
        console.log(
          `  ${String(i + 1).padStart(5)}  ${(baselineFirst ? "baseline" : "codeplane").padEnd(9)} ${ms(ours.accepted)}      ${ms(ours.allJobs)}        ${ms(base)}  ${(ours.allJobs / base).toFixed(2).padStart(6)}  ${ms(ours.allDone)} (${(BURST / (ours.allDone / 1000)).toFixed(1)} runs/s)`,
        );
      }
      const ratio = median(rounds.map((r) => r.ratio));
      console.log(
        `  median: all Jobs exist ${ms(median(rounds.map((r) => r.codeplane.allJobs)))}, baseline ${ms(median(rounds.map((r) => r.baseline)))}; ratio codeplane/baseline ${ratio.toFixed(2)} (median of the rounds' ratios)`,
      );
      figures.burst_ms = {
        rounds: rounds.map((r) => ({
          accepted: r.codeplane.accepted,
          all_jobs: r.codeplane.allJobs,
          baseline_all_jobs: r.baseline,
          ratio: r.ratio,
          all_finished: r.codeplane.allDone,
        })),
        ratio,
      };
    }
    if (WARM_RUNS > 0) figures.warm = await warmCase(bench, timeline);
    writeBenchJson("run-latency", figures);
  } finally {
    stopWatching();
    await bench.close();
  }
}

const WARM_STEPS = ["claimed", "assigned", "checked_out", "environment_ready", "started", "printed", "delivered"] as const;
const WARM_STEP_NAMES: Record<(typeof WARM_STEPS)[number], string> = {
  claimed: "pod claimed (the run admitted)",
  assigned: "assignment taken by the pod",
  checked_out: "checked out",
  environment_ready: "environment restored",
  started: "command started",
  printed: "line printed (its timestamp)",
  delivered: "line at the client",
};

/** Section 3: a pool of 2 for a cached environment, against the raw Job baseline, interleaved. */
async function warmCase(bench: ClusterBench, timeline: Timeline): Promise<Record<string, unknown>> {
  const execFile = promisify(execFileCb);
  const dir = mkdtempSync(path.join(tmpdir(), "cp-bench-warm-"));
  try {
    const git = (...args: string[]) =>
      execFile("git", ["-c", "user.name=B", "-c", "user.email=b@example.com", "-c", "commit.gpgsign=false", ...args], { cwd: dir });
    await git("init", "-q", "-b", "main");
    writeFileSync(path.join(dir, "requirements.txt"), "click==8.5.1\n");
    writeFileSync(path.join(dir, "hello.py"), "import click\nprint('ready')\n");
    await git("add", "-A");
    await git("commit", "-q", "-m", "warm bench");
    const commit = (await git("rev-parse", "HEAD")).stdout.trim();
    await git("clone", "-q", "--bare", dir, `${dir}.git`);
    const root = path.join(import.meta.dirname, "..");
    const url = (await execFile(path.join(root, "hack/cluster/git-publish.sh"), [`${dir}.git`, `warm-${bench.namespace}`])).stdout.trim().split("\n").pop()!;
    const repo = (await bench.api("/v1/repositories", { url, name: "warm" })).id as string;
    await bench.api(`/v1/repositories/${repo}/analysis/${commit}`, {});
    for (;;) {
      const a = await bench.api(`/v1/repositories/${repo}/analysis/${commit}`);
      if (a.status === "completed") break;
      if (a.status === "failed") throw new Error(`the warm case's analysis failed: ${a.error}`);
      await sleep(500);
    }
    const command = ["python3", "hello.py"];
    const finished = async (runId: string) => {
      for (;;) {
        const r = await bench.api(`/v1/runs/${runId}`);
        if (["completed", "failed", "cancelled"].includes(r.status)) return r;
        await sleep(500);
      }
    };
    // The environment is built (and cached) by an ordinary run; its key names the pool.
    const built = await finished((await bench.api(`/v1/repositories/${repo}/${commit}/runs`, { command, compute_type: WARM_PRESET })).run_id);
    if (built.status !== "completed" || !built.environment?.key) throw new Error(`the warm case's first run: ${built.status} ${built.error}`);
    const key = built.environment.key as string;
    await bench.restart({
      CODEPLANE_WARM_POOLS: JSON.stringify([{ name: "bench", environment: key, compute_type: WARM_PRESET, size: 2, idle_seconds: 3600 }]),
    });
    const readyWaiting = async (n: number) => {
      for (const t0 = Date.now(); ;) {
        const rows = await bench.db
          .selectFrom("pool_pods")
          .select("id")
          .where("namespace", "=", bench.namespace)
          .where("state", "=", "waiting")
          .where("ready_at", "is not", null)
          .execute();
        if (rows.length >= n) return;
        if (Date.now() - t0 > 600_000) throw new Error("the warm pool never had a pod waiting");
        await sleep(100);
      }
    };
    await readyWaiting(2);
    const warm: { total: number; steps: Record<string, number>; agent: Record<string, number>; notes: string[] }[] = [];
    const direct: number[] = [];
    let cold = 0;
    for (let i = 0; i < WARM_RUNS; i++) {
      await readyWaiting(1);
      {
        const t0 = Date.now();
        const run = await bench.api(`/v1/repositories/${repo}/${commit}/runs`, { command, compute_type: WARM_PRESET });
        const client = sseClient(`${bench.service.url}/v1/runs/${run.run_id as string}/logs/stream`, bench.key);
        while (!client.lines.length) await sleep(1);
        const delivered = Date.now();
        const printed = Date.parse(client.lines[0]!.data.ts!);
        client.es.close();
        const row = await bench.db.selectFrom("pool_pods").selectAll().where("run_id", "=", run.run_id).executeTakeFirst();
        if (!row) {
          cold++;
          continue;
        }
        const at = (d: Date | null) => (d ? d.getTime() - t0 : NaN);
        warm.push({
          total: delivered - t0,
          steps: {
            claimed: at(row.claimed_at),
            assigned: at(row.assigned_at),
            checked_out: at(row.checked_out_at),
            environment_ready: at(row.environment_ready_at),
            started: at(row.started_at),
            printed: printed - t0,
            delivered: delivered - t0,
          },
          // The agent's own clock, from its assignment's arrival (migration 0029).
          agent: row.diagnostics?.steps_ms ?? {},
          notes: row.diagnostics?.notes ?? [],
        });
        await finished(run.run_id);
      }
      {
        const t0 = Date.now();
        const job = await createJobDirectly(bench, ["sh", "-c", "echo ready"]);
        const first = await firstLineOfPod(bench, timeline, job);
        direct.push(first.delivered - t0);
        await deleteJobDirectly(bench, job);
      }
    }
    const totals = warm.map((w) => w.total);
    console.log(`\nWarm pool (2 pods, cached environment): POST to the first stdout line at an SSE client (${warm.length} warm runs; ${cold} found no pod)`);
    console.log(`  codeplane, warm: POST + SSE   median ${ms(median(totals))}   p95 ${ms(percentile(totals, 95))}`);
    console.log(`  baseline: Job + pod log       median ${ms(median(direct))}   p95 ${ms(percentile(direct, 95))}`);
    console.log(`\n  median time from submission to each step of a warm run`);
    const steps: Record<string, number> = {};
    for (const s of WARM_STEPS) {
      const xs = warm.map((w) => w.steps[s]!).filter((x) => Number.isFinite(x));
      if (!xs.length) continue;
      steps[s] = median(xs);
      console.log(`  ${WARM_STEP_NAMES[s].padEnd(40)} ${ms(steps[s])}`);
    }
    const agentSteps: Record<string, number> = {};
    const names = [...new Set(warm.flatMap((w) => Object.keys(w.agent)))];
    if (names.length) console.log(`\n  median time from the assignment's arrival in the pod to each of its sub-steps (the agent's clock)`);
    for (const name of names.sort(
      (x, y) => median(warm.map((w) => w.agent[x] ?? NaN).filter(Number.isFinite)) - median(warm.map((w) => w.agent[y] ?? NaN).filter(Number.isFinite)),
    )) {
      agentSteps[name] = median(warm.map((w) => w.agent[name] ?? NaN).filter(Number.isFinite));
      console.log(`  ${name.padEnd(40)} ${ms(agentSteps[name])}`);
    }
    // The restore's own line: its whole time, and how long codeplane took to answer.
    const restoreLines = warm.map((w) => /in ([\d.]+) s \(answered after ([\d.]+) s/.exec(w.notes.find((n) => n.startsWith("restored the environment")) ?? ""));
    const restoreTotals = restoreLines.filter((m) => m !== null).map((m) => Number(m[1]) * 1000);
    const restoreAnswers = restoreLines.filter((m) => m !== null).map((m) => Number(m[2]) * 1000);
    if (restoreTotals.length) {
      console.log(`  the restore by its own clock: median ${ms(median(restoreTotals))}, of which codeplane's answer ${ms(median(restoreAnswers))}`);
      agentSteps.restore_own = median(restoreTotals);
      agentSteps.restore_answer = median(restoreAnswers);
    }
    const retried = warm.filter((w) => w.notes.some((n) => n.includes("trying again"))).length;
    console.log(`  runs whose restore was tried again: ${retried} of ${warm.length}`);
    const lastNotes = warm.at(-1)?.notes ?? [];
    if (lastNotes.length) console.log(`  the last run's restore said:\n${lastNotes.map((n) => `    ${n}`).join("\n")}`);
    return {
      agent_steps_ms: agentSteps,
      restores_retried: retried,
      warm_ms: { median: median(totals), p95: percentile(totals, 95), samples: totals },
      baseline_ms: { median: median(direct), p95: percentile(direct, 95), samples: direct },
      cold_fallbacks: cold,
      steps_ms: steps,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(`${dir}.git`, { recursive: true, force: true });
  }
}

await main();
