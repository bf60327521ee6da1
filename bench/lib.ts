import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { migrateToLatest } from "../src/db/migrate.ts";
import type { Database } from "../src/db/schema.ts";
import { createRootLogger } from "../src/logger.ts";
import type { PostgresServer } from "../test/helpers/postgres-server.ts";

// Shared by the benchmarks: the service in its own process (as deployed, so
// the load generator does not share its event loop) and small statistics.

export interface ChildService {
  url: string;
  pid: number;
  /** Resident memory of the service process, in MiB. */
  rssMiB(): number;
  close(): Promise<void>;
}

/** A port nothing listens on now, on this address. */
export function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise<number>((resolve) => {
    const s = createServer().listen(0, host, () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export async function serveInChildProcess(env: Record<string, string>): Promise<ChildService> {
  const port = await freePort();
  const proc = spawn(process.execPath, [new URL("../src/main.ts", import.meta.url).pathname, "serve"], {
    env: { PATH: process.env.PATH ?? "", ...env, PORT: String(port) },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) {
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
