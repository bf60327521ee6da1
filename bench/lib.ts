import { execFile as execFileCb, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import * as k8s from "@kubernetes/client-node";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { migrateToLatest } from "../src/db/migrate.ts";
import type { Database } from "../src/db/schema.ts";
import { createAccount } from "../src/domain/accounts/accounts.ts";
import { createApiKey } from "../src/domain/auth/api-keys.ts";
import { applyCrds, ensureNamespace } from "../src/k8s/install.ts";
import { createRootLogger } from "../src/logger.ts";
import { freePort } from "../test/helpers/free-port.ts";
import { createFixtureRepo, type FixtureRepo } from "../test/helpers/git-fixture.ts";
import { startPostgres, type PostgresServer } from "../test/helpers/postgres-server.ts";

export { freePort };

// Shared by the benchmarks: the service in its own process (as deployed, so
// the load generator does not share its event loop) and small statistics.

export interface ChildService {
  url: string;
  pid: number;
  /** Resident memory of the service process, in MiB. */
  rssMiB(): number;
  close(): Promise<void>;
}

/** What every benchmark's service is started with: its database and data directory, a fresh key, quiet logs, no rate limit. */
export function benchServiceEnv(databaseUrl: string, dataDir: string): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    CODEPLANE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    CODEPLANE_DATA_DIR: dataDir,
    CODEPLANE_HOST: "127.0.0.1",
    CODEPLANE_ALLOW_LOCAL_REPOSITORIES: "true",
    CODEPLANE_MIGRATE_ON_START: "false",
    CODEPLANE_RATE_LIMIT_REQUESTS: "0",
    CODEPLANE_LOG_LEVEL: "warn",
  };
}

export async function serveInChildProcess(env: Record<string, string>): Promise<ChildService> {
  const port = await freePort();
  // BENCH_PROFILE_DIR: the service writes a CPU profile there when it stops (open it in Chrome's DevTools).
  const profile = process.env.BENCH_PROFILE_DIR ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
  // As deployed: through bin/codeplane.mjs, which gives node the service's flags (src/server-node-flags.ts).
  const proc = spawn(process.execPath, [...profile, new URL("../bin/codeplane.mjs", import.meta.url).pathname, "serve"], {
    env: { PATH: process.env.PATH ?? "", ...env, PORT: String(port) },
    // Its log (warnings and errors only: benchServiceEnv) goes to stderr, so a slow or stuck stop says why.
    stdio: ["ignore", process.stderr, "inherit"],
  });
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    if (
      await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      )
    ) {
      return {
        url,
        pid: proc.pid!,
        rssMiB: () => {
          const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${proc.pid}/status`, "utf8"));
          return m ? Number(m[1]) / 1024 : NaN;
        },
        close: async () => {
          proc.kill("SIGTERM");
          await exited;
        },
      };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  proc.kill("SIGKILL");
  throw new Error("the service did not start");
}

/** Clock ticks per second of /proc's CPU times (getconf CLK_TCK; 100 on Linux as built). */
let clockTicks: number | undefined;
const ticksPerSecond = () => (clockTicks ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100);

const cpuTicksOf = (statPath: string) => {
  const stat = readFileSync(statPath, "utf8");
  // Fields after the command name, which may hold spaces: utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
};

/**
 * CPU time a process has used, in µs: all its threads (V8's garbage collector
 * and libuv's pool work on threads of their own) and its main thread alone,
 * which runs every request's JavaScript and so bounds a Node server's
 * throughput. From /proc, so Linux only (NaN elsewhere).
 */
export function cpuMicros(pid: number): { process: number; mainThread: number } {
  try {
    const us = 1e6 / ticksPerSecond();
    return { process: cpuTicksOf(`/proc/${pid}/stat`) * us, mainThread: cpuTicksOf(`/proc/${pid}/task/${pid}/stat`) * us };
  } catch {
    return { process: NaN, mainThread: NaN };
  }
}

/**
 * Seconds a process has spent in garbage collection, by kind (minor, major,
 * incremental, weakcb), from the histogram prom-client keeps for the service
 * (`codeplane_nodejs_gc_duration_seconds`) on its /metrics.
 */
export async function gcSeconds(metricsUrl: string): Promise<Record<string, number>> {
  const res = await fetch(metricsUrl);
  if (!res.ok) throw new Error(`${metricsUrl}: ${res.status}`);
  const seconds: Record<string, number> = {};
  for (const m of (await res.text()).matchAll(/^codeplane_nodejs_gc_duration_seconds_sum\{kind="([a-z]+)"\} ([0-9.e+-]+)$/gm)) seconds[m[1]!] = Number(m[2]);
  if (!Object.keys(seconds).length) throw new Error(`${metricsUrl}: no codeplane_nodejs_gc_duration_seconds_sum`);
  return seconds;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

export const median = (values: number[]) => percentile(values, 50);

/** A migrated database named `bench` on the throw-away server, and a pool to it. */
export async function createBenchDatabase(server: PostgresServer, poolMax: number): Promise<{ url: string; pool: pg.Pool; db: Kysely<Database> }> {
  const admin = new pg.Client({ connectionString: server.adminUrl });
  await admin.connect();
  await admin.query("create database bench");
  await admin.end();
  const url = server.urlFor("bench");
  const pool = new pg.Pool({ connectionString: url, max: poolMax });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  await migrateToLatest(db, createRootLogger("silent"));
  return { url, pool, db };
}

const root = new URL("..", import.meta.url).pathname;
/** The local cluster's node address (hack/cluster/lib.sh POD_GATEWAY): where pods reach processes on this machine. */
export const NODE_ADDRESS = "10.244.0.1";

/** What the cluster benchmarks start from: a namespace, Postgres, the service in its own process, an account with a key and a registered fixture repository. */
export interface ClusterBench {
  kc: k8s.KubeConfig;
  namespace: string;
  db: Kysely<Database>;
  accountId: string;
  key: string;
  service: ChildService;
  fixture: FixtureRepo;
  /** git:// URL of the fixture, as published to the cluster's git daemon. */
  gitUrl: string;
  /** The service's git endpoint, as pods reach it. */
  gitEndpoint: string;
  repositoryId: string;
  api(path: string, json?: unknown): Promise<any>;
  /** Stops the service and starts it again on the same database, data directory and git port, with these settings added. */
  restart(env: Record<string, string>): Promise<void>;
  close(): Promise<void>;
}

export async function startClusterBench(env: Record<string, string> = {}): Promise<ClusterBench> {
  const kubeconfig = process.env.KUBECONFIG || `${root}.cluster/kubeconfig`;
  if (!existsSync(kubeconfig)) throw new Error(`no cluster: ${kubeconfig} does not exist (run make cluster-up)`);
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  const namespace = `cp-bench-${randomBytes(3).toString("hex")}`;
  await applyCrds(kc);
  await ensureNamespace(kc, namespace);
  const server = await startPostgres();
  const dataDir = mkdtempSync(path.join(tmpdir(), "codeplane-bench-"));
  const fixture = await createFixtureRepo();
  const cleanup = async () => {
    await kc
      .makeApiClient(k8s.CoreV1Api)
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
    await fixture.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
    await server.stop();
  };
  let started: ChildService | undefined;
  try {
    const { db } = await createBenchDatabase(server, 2);
    const account = await createAccount(db, "bench");
    const { key } = await createApiKey(db, account.id, { name: "bench" });
    const gitUrl = (await promisify(execFileCb)(`${root}hack/cluster/git-publish.sh`, [fixture.path, `bench-${namespace}`])).stdout.trim().split("\n").pop()!;
    const gitPort = await freePort(NODE_ADDRESS);
    const serviceEnv = {
      ...benchServiceEnv(server.urlFor("bench"), dataDir),
      KUBECONFIG: kubeconfig,
      CODEPLANE_NAMESPACE: namespace,
      CODEPLANE_IMAGE_PULL_POLICY: "Never",
      CODEPLANE_JOB_TTL_SECONDS: "120",
      // Pods check out from the service's git listener on the node address.
      CODEPLANE_GIT_HOST: NODE_ADDRESS,
      CODEPLANE_GIT_PORT: String(gitPort),
      ...env,
    };
    let service = (started = await serveInChildProcess(serviceEnv));
    const api = async (p: string, json?: unknown) => {
      const res = await fetch(service.url + p, {
        method: json === undefined ? "GET" : "POST",
        headers: { authorization: `Bearer ${key}`, ...(json !== undefined && { "content-type": "application/json" }) },
        ...(json !== undefined && { body: JSON.stringify(json) }),
      });
      if (!res.ok) throw new Error(`${p}: ${res.status} ${await res.text()}`);
      return res.json();
    };
    const repo = await api("/v1/repositories", { url: gitUrl, name: "fixture" });
    return {
      kc,
      namespace,
      db,
      accountId: account.id,
      key,
      get service() {
        return service;
      },
      fixture,
      gitUrl,
      gitEndpoint: `http://${NODE_ADDRESS}:${gitPort}`,
      repositoryId: repo.id,
      api,
      async restart(extra) {
        await service.close();
        service = await serveInChildProcess({ ...serviceEnv, ...extra });
      },
      async close() {
        await service.close();
        await db.destroy();
        await cleanup();
      },
    };
  } catch (err) {
    // A service started before the failure (the fixture's registration, say) would outlive this process.
    await started?.close();
    await cleanup();
    throw err;
  }
}

/** Prints nothing; writes the figures as JSON to $BENCH_JSON when it is set. */
export function writeBenchJson(name: string, figures: Record<string, unknown>): void {
  const file = process.env.BENCH_JSON;
  if (file) writeFileSync(file, JSON.stringify({ benchmark: name, at: new Date().toISOString(), ...figures }, null, 2) + "\n");
}
