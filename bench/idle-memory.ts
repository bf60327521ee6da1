// Idle memory benchmark: `make bench-memory`.
//
// The service's resident memory when idle with Postgres configured: started in
// its own process against a throw-away Postgres, warmed with a few hundred
// requests, left alone for 10 s, then sampled once a second for 10 s (median
// and maximum); then loaded for BENCH_LOAD_SECONDS (10 by default; 0 skips)
// with 10 connections on GET /v1/repositories and sampled the same way once
// the service has been quiet for 10 s longer than it waits before giving
// memory back (CODEPLANE_IDLE_MEMORY_RELEASE_SECONDS), since what a service
// holds after traffic is what an operator sees. Then twice more, loaded
// straight after start (a replica put into traffic as soon as it is ready),
// with that release and without it, to show what it gives back.
// Measured without a cluster (the API alone) and, when a
// cluster is reachable (KUBECONFIG, or the local one from `make cluster-up`),
// with the controller running on it (its informers, leader election, the log
// archiver). The baseline, in the same run: a bare Node process doing nothing.
// Figures go to $BENCH_JSON when it is set.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import * as k8s from "@kubernetes/client-node";
import autocannon from "autocannon";
import { createAccount } from "../src/domain/accounts/accounts.ts";
import { createApiKey } from "../src/domain/auth/api-keys.ts";
import { applyCrds, ensureNamespace } from "../src/k8s/install.ts";
import { startPostgres } from "../test/helpers/postgres-server.ts";
import { benchServiceEnv, createBenchDatabase, median, serveInChildProcess, writeBenchJson, type ChildService } from "./lib.ts";

const LOAD_SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 10);
/** The service's default quiet time before it gives memory back (CODEPLANE_IDLE_MEMORY_RELEASE_SECONDS). */
const RELEASE_SECONDS = 10;

interface Rss {
  median: number;
  max: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN) / 1024;

async function sample(rss: () => number, waitMs = 10_000): Promise<Rss> {
  await sleep(waitMs);
  const samples: number[] = [];
  for (let i = 0; i < 10; i++) {
    samples.push(rss());
    await sleep(1000);
  }
  return { median: median(samples), max: Math.max(...samples) };
}

async function bareNode(): Promise<Rss> {
  const proc = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  try {
    return await sample(() => rssOf(proc.pid!));
  } finally {
    proc.kill("SIGTERM");
  }
}

/** The cluster KUBECONFIG (or the local one) names, if its API server answers: a kubeconfig left by a cluster that is down is no cluster. */
async function reachableCluster(kubeconfig: string): Promise<k8s.KubeConfig | null> {
  if (!existsSync(kubeconfig)) return null;
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  const answered = await Promise.race([
    kc
      .makeApiClient(k8s.VersionApi)
      .getCode()
      .then(
        () => true,
        () => false,
      ),
    sleep(5000).then(() => false),
  ]);
  return answered ? kc : null;
}

async function main(): Promise<void> {
  const server = await startPostgres();
  const dataDir = mkdtempSync(path.join(tmpdir(), "codeplane-bench-"));
  const kubeconfig = process.env.KUBECONFIG || new URL("../.cluster/kubeconfig", import.meta.url).pathname;
  const namespace = `cp-bench-${randomBytes(3).toString("hex")}`;
  const kc = await reachableCluster(kubeconfig);
  try {
    const { db } = await createBenchDatabase(server, 2);
    const account = await createAccount(db, "bench");
    const { key } = await createApiKey(db, account.id, { name: "bench" });
    const env = benchServiceEnv(server.urlFor("bench"), dataDir);
    /** Load, then the service's memory once it has been quiet for longer than it waits before giving memory back. */
    const loadThenSample = async (service: ChildService) => {
      const load = await autocannon({
        url: `${service.url}/v1/repositories?limit=20`,
        connections: 10,
        duration: LOAD_SECONDS,
        headers: { authorization: `Bearer ${key}` },
      });
      if (load.non2xx + load.errors > 0) throw new Error(`load: ${load.non2xx} non-2xx answers, ${load.errors} errors`);
      return { ...(await sample(() => service.rssMiB(), (RELEASE_SECONDS + 10) * 1000)), requests: load.requests.total };
    };
    const measure = async (extra: Record<string, string>) => {
      const service = await serveInChildProcess({ ...env, ...extra });
      try {
        for (let i = 0; i < 300; i++) {
          const res = await fetch(`${service.url}/v1/repositories`, { headers: { authorization: `Bearer ${key}` } });
          if (!res.ok) throw new Error(`warm-up: ${res.status}`);
        }
        const warm = await sample(() => service.rssMiB());
        return { warm, loaded: LOAD_SECONDS > 0 ? await loadThenSample(service) : null };
      } finally {
        await service.close();
      }
    };
    // A replica put into traffic as soon as it is ready, with no quiet time
    // after start-up for V8's memory reducer to settle first.
    const measureStraightIntoLoad = async (extra: Record<string, string>) => {
      const service = await serveInChildProcess({ ...env, ...extra });
      try {
        return await loadThenSample(service);
      } finally {
        await service.close();
      }
    };

    const bare = await bareNode();
    const apiOnly = await measure({});
    // With and without the service's idle release, to show what it gives back.
    const straight =
      LOAD_SECONDS > 0
        ? { release: await measureStraightIntoLoad({}), releaseOff: await measureStraightIntoLoad({ CODEPLANE_IDLE_MEMORY_RELEASE_SECONDS: "0" }) }
        : null;
    let withController: Awaited<ReturnType<typeof measure>> | null = null;
    if (kc) {
      await applyCrds(kc);
      await ensureNamespace(kc, namespace);
      withController = await measure({ KUBECONFIG: kubeconfig, CODEPLANE_NAMESPACE: namespace });
    }
    const mib = (x: number) => `${x.toFixed(0)} MiB`.padStart(8);
    const row = (label: string, r: Rss | null) => console.log(`  ${label.padEnd(46)} ${r ? `${mib(r.median)}  max ${mib(r.max)}` : "(not measured)"}`);
    console.log("\nResident memory when idle, with Postgres (median of 10 samples over 10 s; max)");
    row("codeplane, API only, after 300 requests", apiOnly.warm);
    row(`codeplane, API only, after ${LOAD_SECONDS} s of load`, apiOnly.loaded);
    if (straight) {
      row(`codeplane, API only, ${LOAD_SECONDS} s of load straight after start`, straight.release);
      row("  the same with the idle release off", straight.releaseOff);
    }
    if (withController) {
      row("codeplane, API and controller, after 300 requests", withController.warm);
      row(`codeplane, API and controller, after ${LOAD_SECONDS} s of load`, withController.loaded);
    } else console.log("  codeplane, API and controller                  (no cluster: make cluster-up to measure it)");
    row("baseline: bare Node", bare);
    console.log(`  codeplane over bare Node, after 300 requests   ${mib((withController ?? apiOnly).warm.median - bare.median)}`);
    writeBenchJson("idle-memory", {
      load_seconds: LOAD_SECONDS,
      rss_mib: { api_only: apiOnly, api_only_straight_into_load: straight, api_and_controller: withController, bare_node: bare },
    });
  } finally {
    if (kc)
      await kc
        .makeApiClient(k8s.CoreV1Api)
        .deleteNamespace({ name: namespace })
        .catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
    await server.stop();
  }
}

await main();
