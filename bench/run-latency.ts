// Run benchmark: `make bench-runs` (needs a cluster: `make cluster-up`).
//
// 1. Latency from POST /runs to the first stdout line at an SSE client,
//    against the baseline of creating the same Job directly and following its
//    pod log through the Kubernetes API; BENCH_RUNS (20) of each, medians and ratio.
// 2. A burst of BENCH_BURST (200) runs submitted at once: time until all
//    their Jobs exist and until all have completed.
// 3. BENCH_SUBSCRIBERS (500) SSE clients on one chatty run: delivery latency
//    (p50/p99, from the entrypoint reading a line to a client receiving it)
//    and the service's resident memory.
import { Writable } from "node:stream";
import * as k8s from "@kubernetes/client-node";
import { FrameSplitter } from "../src/logs/frames.ts";
import { newId } from "../src/domain/shared/ids.ts";
import { buildRunJob, CHECKOUT_TOKEN_KEY } from "../src/k8s/run-job.ts";
import { mintCheckoutToken } from "../src/domain/checkout/checkout-tokens.ts";
import { sseClient } from "../test/helpers/sse-client.ts";
import { median, percentile, startClusterBench } from "./lib.ts";

const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const BURST = Number(process.env.BENCH_BURST ?? 200);
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 500);
// Small requests so a burst is limited by the node's pod capacity, not CPU accounting.
const COMPUTE = { "cpu-general": { requests: { cpu: "10m", memory: "32Mi" }, limits: { cpu: "1", memory: "256Mi" }, nodeSelector: {}, tolerations: [] } };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ms = (x: number) => `${x.toFixed(0)} ms`;

async function main(): Promise<void> {
  const bench = await startClusterBench({ CODEPLANE_COMPUTE_TYPES: JSON.stringify(COMPUTE) });
  const { kc, namespace, db, key, service, api, fixture, gitUrl, gitEndpoint } = bench;
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const batch = kc.makeApiClient(k8s.BatchV1Api);
  const account = { id: bench.accountId };
  {
    try {
      const repo = { id: bench.repositoryId };
      const commit = fixture.commits.main;

      // 1. Time to first line.
      const viaApi: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const t0 = performance.now();
        const run = await api(`/v1/repositories/${repo.id}/main/runs`, { command: ["sh", "-c", "echo ready"] });
        const client = sseClient(`${service.url}/v1/runs/${run.run_id}/logs/stream`, key);
        while (!client.lines.length) await sleep(5);
        viaApi.push(performance.now() - t0);
        client.es.close();
      }
      const direct: number[] = [];
      const log = new k8s.Log(kc);
      for (let i = 0; i < RUNS; i++) {
        const runId = newId();
        // The same checkout a run gets: a token of its own, in a Secret, from the service's git endpoint.
        const token = await mintCheckoutToken(db, { workloadKind: "run", workloadId: runId, accountId: account.id, repositoryId: repo.id, commitHash: commit, expiresAt: new Date(Date.now() + 600_000) });
        await core.createNamespacedSecret({ namespace, body: { metadata: { name: `run-${runId}` }, stringData: { [CHECKOUT_TOKEN_KEY]: token } } });
        const job = buildRunJob({
          resource: { metadata: { name: `run-${runId}`, namespace, uid: "" }, spec: { runId, accountId: account.id, repositoryId: repo.id, repositoryUrl: gitUrl, commitHash: commit, command: ["sh", "-c", "echo ready"], computeType: "cpu-general", timeoutSeconds: 600 } },
          images: { runner: "codeplane-runner:dev", codeplane: "codeplane:dev", pullPolicy: "Never" },
          compute: COMPUTE["cpu-general"],
          envNames: [],
          checkout: { gitUrl: `${gitEndpoint}/git/${repo.id}.git`, secretName: `run-${runId}`, egress: "restricted", preprocessEnv: {} },
          ttlSecondsAfterFinished: 30,
        });
        job.metadata!.ownerReferences = [];
        const t0 = performance.now();
        await batch.createNamespacedJob({ namespace, body: job });
        let first = 0;
        while (!first) {
          const pods = await core.listNamespacedPod({ namespace, labelSelector: `job-name=${job.metadata!.name}` });
          const pod = pods.items[0];
          const state = pod?.status?.containerStatuses?.[0]?.state;
          if (pod && (state?.running || state?.terminated)) {
            const splitter = new FrameSplitter();
            await new Promise<void>((resolve) => {
              const sink = new Writable({
                write(chunk: Buffer, _e, cb) {
                  if (splitter.push(chunk).some((f) => f.kind === "line")) {
                    first = performance.now();
                    resolve();
                  }
                  cb();
                },
                final(cb) {
                  resolve();
                  cb();
                },
              });
              sink.on("pipe", (source) => source.on("error", () => resolve()));
              void log.log(namespace, pod.metadata!.name!, "main", sink, { follow: true }).then((c) => sink.once("finish", () => c.abort()));
            });
          } else await sleep(100);
        }
        direct.push(first - t0);
        await batch.deleteNamespacedJob({ name: job.metadata!.name!, namespace, propagationPolicy: "Background" });
      }
      console.log(`\nTime from submission to the first stdout line (${RUNS} runs each)`);
      console.log(`  codeplane: POST + SSE       median ${ms(median(viaApi))}   p90 ${ms(percentile(viaApi, 90))}`);
      console.log(`  baseline: Job + pod log     median ${ms(median(direct))}   p90 ${ms(percentile(direct, 90))}`);
      console.log(`  ratio codeplane/baseline    ${(median(viaApi) / median(direct)).toFixed(2)}`);

      // 2. A burst.
      const t0 = performance.now();
      const burst = await Promise.all(
        Array.from({ length: BURST }, () => api(`/v1/repositories/${repo.id}/main/runs`, { command: ["true"] }).then((r) => r.run_id as string)),
      );
      const accepted = performance.now() - t0;
      const ids = new Set(burst.map((id) => `run-${id}`));
      // Jobs are remembered once seen: a finished one may be gone (TTL) before the next look.
      const seenJobs = new Set<string>();
      let allJobs = 0;
      let allDone = 0;
      while (!allDone) {
        const jobs = await batch.listNamespacedJob({ namespace });
        for (const j of jobs.items) if (ids.has(j.metadata!.name!)) seenJobs.add(j.metadata!.name!);
        if (!allJobs && seenJobs.size === BURST) allJobs = performance.now() - t0;
        const runs = (await kc.makeApiClient(k8s.CustomObjectsApi).listNamespacedCustomObject({ group: "codeplane.dev", version: "v1alpha1", namespace, plural: "runs" })) as {
          items: { metadata: { name: string }; status?: { phase?: string } }[];
        };
        const finished = runs.items.filter((r) => ids.has(r.metadata.name) && ["completed", "failed", "cancelled"].includes(r.status?.phase ?? "")).length;
        if (finished === BURST) allDone = performance.now() - t0;
        else await sleep(500);
        if (performance.now() - t0 > 30 * 60_000) throw new Error("burst did not finish in 30 minutes");
      }
      console.log(`\n${BURST} runs submitted at once`);
      console.log(`  all accepted (201)          ${ms(accepted)}`);
      console.log(`  all Jobs exist              ${ms(allJobs)}`);
      console.log(`  all runs finished           ${ms(allDone)}   (${(BURST / (allDone / 1000)).toFixed(1)} runs/s on this node)`);

      // 3. Many subscribers on one chatty run.
      const lines = 2000;
      const chatty = await api(`/v1/repositories/${repo.id}/main/runs`, {
        command: ["sh", "-c", `sleep 3; i=0; while [ $i -lt ${lines} ]; do i=$((i+1)); echo "line $i"; done`],
      });
      const rssBefore = service.rssMiB();
      const latencies: number[] = [];
      const clients = Array.from({ length: SUBSCRIBERS }, () => sseClient(`${service.url}/v1/runs/${chatty.run_id}/logs/stream`, key));
      for (const c of clients) {
        c.es.addEventListener("stdout", (e: MessageEvent) => latencies.push(Date.now() - Date.parse(JSON.parse(e.data as string).ts)));
      }
      let peakRss = rssBefore;
      const sampler = setInterval(() => (peakRss = Math.max(peakRss, service.rssMiB())), 100);
      await Promise.all(clients.map((c) => c.ended));
      clearInterval(sampler);
      const complete = clients.filter((c) => c.lines.length === lines).length;
      console.log(`\n${SUBSCRIBERS} SSE subscribers on one run writing ${lines} lines`);
      console.log(`  clients with every line     ${complete}/${SUBSCRIBERS}`);
      console.log(`  delivery latency            p50 ${ms(percentile(latencies, 50))}   p99 ${ms(percentile(latencies, 99))}`);
      console.log(`  service RSS                 ${rssBefore.toFixed(0)} MiB before, ${peakRss.toFixed(0)} MiB peak`);
    } finally {
      await bench.close();
    }
  }
}

await main();
