// Idle memory benchmark: `make bench-memory`.
//
// The service's resident memory when idle with Postgres configured: started in
// its own process against a throw-away Postgres, warmed with a few hundred
// requests, left alone for 10 s, then sampled once a second for 10 s (median
// and maximum). Measured without a cluster (the API alone) and, when a
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
import { createAccount } from "../src/domain/accounts/accounts.ts";
import { createApiKey } from "../src/domain/auth/api-keys.ts";
import { applyCrds, ensureNamespace } from "../src/k8s/install.ts";
import { startPostgres } from "../test/helpers/postgres-server.ts";
import { benchServiceEnv, createBenchDatabase, median, serveInChildProcess, writeBenchJson } from "./lib.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN) / 1024;

async function sample(rss: () => number): Promise<{ median: number; max: number }> {
  await sleep(10_000);
  const samples: number[] = [];
  for (let i = 0; i < 10; i++) {
    samples.push(rss());
    await sleep(1000);
  }
  return { median: median(samples), max: Math.max(...samples) };
}

async function bareNode(): Promise<{ median: number; max: number }> {
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
  const answered = await Promise.race([kc.makeApiClient(k8s.VersionApi).getCode().then(() => true, () => false), sleep(5000).then(() => false)]);
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
    const measure = async (extra: Record<string, string>) => {
      const service = await serveInChildProcess({ ...env, ...extra });
      try {
        for (let i = 0; i < 300; i++) {
          const res = await fetch(`${service.url}/v1/repositories`, { headers: { authorization: `Bearer ${key}` } });
          if (!res.ok) throw new Error(`warm-up: ${res.status}`);
        }
        return await sample(() => service.rssMiB());
      } finally {
        await service.close();
      }
    };

    const bare = await bareNode();
    const apiOnly = await measure({});
    let withController: { median: number; max: number } | null = null;
    if (kc) {
      await applyCrds(kc);
      await ensureNamespace(kc, namespace);
      withController = await measure({ KUBECONFIG: kubeconfig, CODEPLANE_NAMESPACE: namespace });
    }
    const mib = (x: number) => `${x.toFixed(0)} MiB`.padStart(8);
    console.log("\nResident memory when idle, with Postgres (median of 10 samples over 10 s; max)");
    console.log(`  codeplane, API only              ${mib(apiOnly.median)}  max ${mib(apiOnly.max)}`);
    if (withController) console.log(`  codeplane, API and controller    ${mib(withController.median)}  max ${mib(withController.max)}`);
    else console.log("  codeplane, API and controller    (no cluster: make cluster-up to measure it)");
    console.log(`  baseline: bare Node              ${mib(bare.median)}  max ${mib(bare.max)}`);
    console.log(`  codeplane over bare Node         ${mib((withController ?? apiOnly).median - bare.median)}`);
    writeBenchJson("idle-memory", { rss_mib: { api_only: apiOnly, api_and_controller: withController, bare_node: bare } });
  } finally {
    if (kc) await kc.makeApiClient(k8s.CoreV1Api).deleteNamespace({ name: namespace }).catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
    await server.stop();
  }
}

await main();
