// Issue 32's done-means scenario at full size, measured: `make bench-burst-scenario`
// (the built-in limiter) and `make bench-burst-kueue` (Kueue); both need the local
// cluster, the second Kueue on it (make kueue).
//
// Two accounts. Account A submits BENCH_SCENARIO_A (60) runs of `sleep
// BENCH_SCENARIO_SECONDS` (5), then account B submits BENCH_SCENARIO_B (5).
//
// - builtin: the built-in limiter with an executing limit of
//   BENCH_SCENARIO_EXECUTING (4) per account and the same for the installation,
//   so the accounts take turns for 4 slots;
// - kueue: a ClusterQueue of BENCH_SCENARIO_KUEUE_CPU (4) CPUs, made by this
//   benchmark (with its ResourceFlavor, both removed at the end), fair sharing
//   between the accounts' LocalQueues, each run's pod requesting a quarter of it,
//   so again 4 at a time. A node without that much CPU free to schedule
//   (the local cluster has 2 cores) gets both scaled down by the same factor
//   (BENCH_SCENARIO_KUEUE_SCALE, default: 1 when the node has the room, else
//   0.1): Kueue's decisions depend on the quota over the requests only, so it
//   still admits 4 at a time; the factor is printed and in the JSON.
//
// Printed, and written to $BENCH_JSON: B's first run's queue wait (B's first
// POST → its admission) minus the slot turnover (the median admitted → ended),
// which fair share bounds it by (at most 0 is within one turnover), and how
// many of A's runs were admitted after B submitted and before B's first; how
// many of A's runs were admitted against submission order; completed, failed,
// lost (gone from the API) and stuck (not finished by the deadline); the most
// runs executing at once; the p99 of GET /v1/runs (one client, back to back,
// as A) during the scenario against the same probe on the idle service before
// it (the baseline, in the same run).
import { loadavg } from "node:os";
import * as k8s from "@kubernetes/client-node";
import { KUEUE_API_VERSION, KUEUE_GROUP, kueueInstalled } from "../src/controller/kueue.ts";
import { createAccount } from "../src/domain/accounts/accounts.ts";
import { createApiKey } from "../src/domain/auth/api-keys.ts";
import { cpuMillis, formatCpu } from "../src/resources/quantity.ts";
import { admittedAt, call, inversions, probeList, type Tenant } from "./burst-lib.ts";
import { BENCH_COMPUTE } from "./direct-job.ts";
import { median, percentile, startClusterBench, writeBenchJson, type ClusterBench } from "./lib.ts";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const PATH = process.argv[2];
if (PATH !== "builtin" && PATH !== "kueue") throw new Error("usage: node bench/burst-scenario.ts builtin|kueue");
const A_RUNS = env("BENCH_SCENARIO_A", 60);
const B_RUNS = env("BENCH_SCENARIO_B", 5);
const SECONDS = env("BENCH_SCENARIO_SECONDS", 5);
const EXECUTING = env("BENCH_SCENARIO_EXECUTING", 4);
/** Millicores. */
const KUEUE_CPU = cpuMillis(process.env.BENCH_SCENARIO_KUEUE_CPU ?? "4") ?? 4000;
const IDLE_PROBE_SECONDS = env("BENCH_SCENARIO_IDLE_SECONDS", 10);
/** Runs not finished this long after B submitted count as stuck. */
const DEADLINE_MS = env("BENCH_SCENARIO_DEADLINE_MINUTES", 25) * 60_000;
const TERMINAL = ["completed", "failed", "cancelled"];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const s = (ms: number) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : "-");

interface Outcome {
  account: string;
  index: number;
  runId: string;
  /** The run's status, or "lost" (gone from the API). */
  status: string;
  admitted?: number;
  started?: number;
  ended?: number;
}

/** The CPU (millicores) the node can still give pods: allocatable minus what its pods request. */
async function freeCpu(kc: k8s.KubeConfig): Promise<number> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const nodes = (await core.listNode()).items;
  const pods = (await core.listPodForAllNamespaces()).items.filter((p) => p.status?.phase !== "Succeeded" && p.status?.phase !== "Failed");
  const requested = pods.reduce(
    (n, p) => n + (p.spec?.containers ?? []).reduce((m, c) => m + (cpuMillis(String(c.resources?.requests?.cpu ?? "0")) ?? 0), 0),
    0,
  );
  return nodes.reduce((n, node) => n + (cpuMillis(String(node.status?.allocatable?.cpu ?? "0")) ?? 0), 0) - requested;
}

/** The benchmark's ResourceFlavor and ClusterQueue (cluster-scoped: made here, removed by `remove`). */
function kueueObjects(kc: k8s.KubeConfig, name: string) {
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const base = { group: KUEUE_GROUP, version: KUEUE_API_VERSION };
  const apiVersion = `${KUEUE_GROUP}/${KUEUE_API_VERSION}`;
  return {
    async create(namespace: string, cpuMillis: number): Promise<void> {
      await custom.createClusterCustomObject({ ...base, plural: "resourceflavors", body: { apiVersion, kind: "ResourceFlavor", metadata: { name } } });
      await custom.createClusterCustomObject({
        ...base,
        plural: "clusterqueues",
        body: {
          apiVersion,
          kind: "ClusterQueue",
          metadata: { name, labels: { "app.kubernetes.io/managed-by": "codeplane-bench" } },
          spec: {
            namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } },
            queueingStrategy: "StrictFIFO",
            admissionScope: { admissionMode: "UsageBasedAdmissionFairSharing" },
            resourceGroups: [
              {
                coveredResources: ["cpu", "memory"],
                flavors: [
                  {
                    name,
                    resources: [
                      { name: "cpu", nominalQuota: formatCpu(cpuMillis) },
                      { name: "memory", nominalQuota: "16Gi" },
                    ],
                  },
                ],
              },
            ],
          },
        },
      });
    },
    /** Deletes both and waits until they are gone (Kueue's finalizers hold them while its Workloads are there). */
    async remove(): Promise<void> {
      for (const plural of ["clusterqueues", "resourceflavors"]) {
        await custom.deleteClusterCustomObject({ ...base, plural, name }).catch(() => undefined);
        for (let i = 0; ; i++) {
          const there = await custom.getClusterCustomObject({ ...base, plural, name }).then(
            () => true,
            () => false,
          );
          if (!there) break;
          if (i === 120) {
            console.warn(`the ${plural} ${name} is still there after 2 minutes: delete it by hand`);
            break;
          }
          await sleep(1000);
        }
      }
    },
  };
}

/** Submits A's runs, then B's; every run's id in submission order per account; when B's first POST was sent. */
async function submit(bench: ClusterBench, a: Tenant, b: Tenant): Promise<{ ids: Map<string, { account: string; index: number }>; bSubmitted: number }> {
  const ids = new Map<string, { account: string; index: number }>();
  const post = async (t: Tenant, index: number) => {
    const run = await call(bench, t.key, `/v1/repositories/${t.repositoryId}/main/runs`, { command: ["sh", "-c", `sleep ${SECONDS}`], environment: "none" });
    ids.set(run.run_id as string, { account: t.name, index });
  };
  for (let i = 0; i < a.runs; i++) await post(a, i);
  const bSubmitted = Date.now();
  for (let i = 0; i < b.runs; i++) await post(b, i);
  return { ids, bSubmitted };
}

/** Waits until every run finished (or the deadline); each run's last state as the API shows it. */
async function follow(bench: ClusterBench, ts: Tenant[], ids: Map<string, { account: string; index: number }>, since: number): Promise<Outcome[]> {
  const out = new Map<string, Outcome>();
  let lastLine = 0;
  for (;;) {
    let finished = 0;
    for (const [runId, mine] of ids) {
      const prev = out.get(runId);
      if (prev && (TERMINAL.includes(prev.status) || prev.status === "lost")) {
        finished++;
        continue;
      }
      const t = ts.find((x) => x.name === mine.account)!;
      const res = await fetch(`${bench.service.url}/v1/runs/${runId}`, { headers: { authorization: `Bearer ${t.key}` } });
      if (res.status === 404) {
        out.set(runId, { ...mine, runId, status: "lost" });
        finished++;
        continue;
      }
      if (!res.ok) throw new Error(`GET /v1/runs/${runId}: ${res.status} ${await res.text()}`);
      const run = await res.json();
      const at = (event: string) => {
        const e = (run.timeline as { event: string; at: string }[]).find((x) => x.event === event);
        return e ? Date.parse(e.at) : undefined;
      };
      out.set(runId, { ...mine, runId, status: run.status, admitted: at("admitted"), started: at("started"), ended: at("ended") });
      if (TERMINAL.includes(run.status)) finished++;
    }
    if (Date.now() - lastLine > 10_000) {
      lastLine = Date.now();
      process.stderr.write(`  … ${finished} of ${ids.size} runs finished\n`);
    }
    if (finished === ids.size || Date.now() - since > DEADLINE_MS) return [...out.values()];
    await sleep(2000);
  }
}

/** The most runs whose commands overlapped (started → ended). */
function mostAtOnce(outcomes: readonly Outcome[]): number {
  const edges = outcomes
    .filter((o) => o.started !== undefined && o.ended !== undefined)
    .flatMap((o) => [
      [o.started!, 1],
      [o.ended!, -1],
    ])
    .sort((x, y) => x[0]! - y[0]! || x[1]! - y[1]!);
  let n = 0;
  let most = 0;
  for (const [, d] of edges) most = Math.max(most, (n += d!));
  return most;
}

async function main(): Promise<void> {
  const kubeconfig = process.env.KUBECONFIG || new URL("../.cluster/kubeconfig", import.meta.url).pathname;
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  let scale = 1;
  let queue: ReturnType<typeof kueueObjects> | undefined;
  const serviceEnv: Record<string, string> = {};
  let slotMillis = 0;
  if (PATH === "kueue") {
    if (!(await kueueInstalled({ custom: kc.makeApiClient(k8s.CustomObjectsApi) }))) throw new Error("the cluster serves no Kueue (make kueue)");
    const free = await freeCpu(kc);
    scale = process.env.BENCH_SCENARIO_KUEUE_SCALE ? Number(process.env.BENCH_SCENARIO_KUEUE_SCALE) : free >= KUEUE_CPU ? 1 : 0.1;
    slotMillis = Math.floor(Math.round(KUEUE_CPU * scale) / EXECUTING);
    const name = `cp-bench-${Math.random().toString(36).slice(2, 8)}`;
    queue = kueueObjects(kc, name);
    serviceEnv.CODEPLANE_KUEUE_CLUSTER_QUEUE = name;
    // The pod requests what the compute type does (its init containers ask no more): a quarter of the quota.
    serviceEnv.CODEPLANE_COMPUTE_TYPES = JSON.stringify({ "cpu-general": { ...BENCH_COMPUTE, requests: { cpu: formatCpu(slotMillis), memory: "32Mi" } } });
    console.log(
      `Kueue: a ClusterQueue of ${formatCpu(KUEUE_CPU)} CPUs` +
        (scale === 1 ? "" : `, scaled by ${scale} to ${formatCpu(Math.round(KUEUE_CPU * scale))} (the node has ${formatCpu(free)} CPU free to schedule)`) +
        `; each run's pod requests ${formatCpu(slotMillis)}, so ${Math.floor(Math.round(KUEUE_CPU * scale) / slotMillis)} run at once`,
    );
  } else {
    serviceEnv.CODEPLANE_COMPUTE_TYPES = JSON.stringify({ "cpu-general": BENCH_COMPUTE });
    serviceEnv.CODEPLANE_LIMIT_EXECUTING_PER_ACCOUNT = String(EXECUTING);
    serviceEnv.CODEPLANE_LIMIT_EXECUTING_TOTAL = String(EXECUTING);
    console.log(`Built-in limiter: an executing limit of ${EXECUTING} per account and ${EXECUTING} for the installation`);
  }
  const bench = await startClusterBench(serviceEnv);
  try {
    await queue?.create(bench.namespace, Math.round(KUEUE_CPU * scale));
    const a: Tenant = { name: "A", key: bench.key, repositoryId: bench.repositoryId, runs: A_RUNS };
    const accountB = await createAccount(bench.db, "account-b");
    const { key } = await createApiKey(bench.db, accountB.id, { name: "bench" });
    const repo = await call(bench, key, "/v1/repositories", { url: bench.gitUrl, name: "fixture" });
    const b: Tenant = { name: "B", key, repositoryId: repo.id, runs: B_RUNS };
    console.log(
      `A submits ${A_RUNS} runs of ${SECONDS} s, then B submits ${B_RUNS} (uptime: ${loadavg()
        .map((x) => x.toFixed(2))
        .join(" ")})`,
    );

    const idleProbe = probeList(bench, a.key);
    await sleep(IDLE_PROBE_SECONDS * 1000);
    const idle = await idleProbe.stop();

    const probe = probeList(bench, a.key);
    const t0 = Date.now();
    const { ids, bSubmitted } = await submit(bench, a, b);
    const outcomes = await follow(bench, [a, b], ids, bSubmitted);
    const during = await probe.stop();
    const elapsed = Date.now() - t0;

    const decided = await admittedAt(bench);
    const count = (status: string) => outcomes.filter((o) => o.status === status).length;
    const stuck = outcomes.filter((o) => o.status !== "lost" && !TERMINAL.includes(o.status)).length;
    const turnover = median(outcomes.filter((o) => o.admitted !== undefined && o.ended !== undefined).map((o) => o.ended! - o.admitted!));
    const b1 = outcomes.find((o) => o.account === "B" && o.index === 0)!;
    const b1Queue = (b1.admitted ?? NaN) - bSubmitted;
    const b1Decided = decided.get(b1.runId) ?? NaN;
    // Admitted conditions have whole seconds: A's runs decided in a later second than B's POST and an earlier one than B's first.
    const aBetween = outcomes.filter((o) => {
      const at = decided.get(o.runId) ?? NaN;
      return o.account === "A" && at > Math.floor(bSubmitted / 1000) * 1000 && at < b1Decided;
    }).length;
    const outOfOrder = await inversions(bench, outcomes, "A");
    const p99 = (xs: number[]) => percentile(xs, 99);

    const title = PATH === "kueue" ? "Kueue" : "built-in limiter";
    console.log(`\n${title}: ${ids.size} runs in ${s(elapsed)}`);
    console.log(`  completed ${count("completed")}, failed ${count("failed")}, cancelled ${count("cancelled")}, lost ${count("lost")}, stuck ${stuck}`);
    console.log(`  most runs executing at once: ${mostAtOnce(outcomes)}`);
    console.log(`  slot turnover (median admitted → ended): ${s(turnover)}`);
    console.log(
      `  B's first run: admitted ${s(b1Queue)} after B submitted, command started ${s((b1.started ?? NaN) - bSubmitted)}; ` +
        `queue wait − one turnover: ${s(b1Queue - turnover)} (≤ 0: within one turnover); A's runs admitted in between: ${aBetween} (slots: ${EXECUTING})`,
    );
    console.log(`  A's runs admitted against submission order (neighbours, whole seconds): ${outOfOrder}`);
    console.log(
      `  GET /v1/runs p99: idle ${p99(idle).toFixed(0)} ms (${idle.length} requests), during the scenario ${p99(during).toFixed(0)} ms (${during.length} requests, p50 ${median(during).toFixed(0)} ms); ratio ${(p99(during) / p99(idle)).toFixed(2)}`,
    );
    writeBenchJson(`burst-scenario-${PATH}`, {
      config: {
        path: PATH,
        a_runs: A_RUNS,
        b_runs: B_RUNS,
        run_seconds: SECONDS,
        ...(PATH === "builtin"
          ? { executing_per_account: EXECUTING, executing_total: EXECUTING }
          : {
              cluster_queue_cpu: formatCpu(KUEUE_CPU),
              scale,
              scaled_cluster_queue_cpu: formatCpu(Math.round(KUEUE_CPU * scale)),
              run_pod_cpu: formatCpu(slotMillis),
            }),
      },
      elapsed_ms: elapsed,
      runs: { submitted: ids.size, completed: count("completed"), failed: count("failed"), cancelled: count("cancelled"), lost: count("lost"), stuck },
      most_executing_at_once: mostAtOnce(outcomes),
      turnover_ms: turnover,
      b_first: { queue_ms: b1Queue, started_ms: (b1.started ?? NaN) - bSubmitted, queue_minus_turnover_ms: b1Queue - turnover, a_admitted_between: aBetween },
      a_out_of_order: outOfOrder,
      list_ms: {
        idle: { requests: idle.length, p50: median(idle), p99: p99(idle) },
        during: { requests: during.length, p50: median(during), p99: p99(during) },
      },
    });
  } finally {
    await bench.close();
    await queue?.remove();
  }
}

await main();
