// Paired runs of the repository list (decision 0013): one or more builds of
// the service and the bare node:http + pg reference server, each in its own
// process on one Postgres, loaded in turn (the order rotating every round) by
// the same autocannon load, so the machine's swings fall on every side alike.
// Prints, per round and as medians, each side's req/s and CPU per request
// (main thread and process, from /proc), and each build's main-thread CPU per
// request over the reference's in the same round: the figure issue 36 bounds
// at 1.3 (bench/api.ts measures it once per run).
//
//   node bench/list-paired.ts [name=dir[:--flag,...] ...]    default: this checkout
//
// Each dir is a checkout of codeplane with its dependencies installed (say,
// a worktree of main beside this one, sharing this checkout's node_modules).
// PAIRED_ROUNDS (6), PAIRED_SECONDS (5), BENCH_CONNECTIONS (10),
// BENCH_WARMUP_SECONDS (3), PAIRED_RESTART (1: every side started afresh and
// warmed up each round; 0: the same processes throughout).
import { fork, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { sql } from "kysely";
import { createAccount } from "../src/domain/accounts/accounts.ts";
import { createApiKey } from "../src/domain/auth/api-keys.ts";
import { newId } from "../src/domain/shared/ids.ts";
import { startPostgres } from "../test/helpers/postgres-server.ts";
import { benchServiceEnv, cpuMicros, createBenchDatabase, freePort, median } from "./lib.ts";

const ROUNDS = Number(process.env.PAIRED_ROUNDS ?? 6);
const SECONDS = Number(process.env.PAIRED_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
// Fresh processes every round (PAIRED_RESTART=0: the same ones throughout). One process of a build can stay
// 15% cheaper or dearer than another process of the same build for all its rounds (issue 36: two processes of
// one checkout, 367 and 418 µs a request, the first cheaper in 5 of 6 rounds), which a pair of processes
// would read as the builds' difference; started again each round, that chance falls on each build alike.
const RESTART = process.env.PAIRED_RESTART !== "0";
const ROWS = 10_000;

interface Side {
  name: string;
  url: string;
  pid: number;
  proc: ChildProcess;
}

async function waitHealthy(url: string, proc: ChildProcess): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (proc.exitCode !== null) throw new Error(`${url}: exited (${proc.exitCode})`);
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.status < 500,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url}: did not start`);
}

async function stop(side: Side): Promise<void> {
  const exited = new Promise((resolve) => (side.proc.exitCode !== null ? resolve(null) : side.proc.once("exit", resolve)));
  side.proc.kill("SIGTERM");
  await exited;
}

async function main(): Promise<void> {
  const builds = process.argv.slice(2).map((a) => {
    // name=dir:--flag,--flag runs node with exactly those flags on dir's src/main.ts (bin/codeplane.mjs would add the service's own).
    const name = a.slice(0, a.indexOf("="));
    const [dir, flags] = a.slice(a.indexOf("=") + 1).split(":");
    return { name, dir: path.resolve(dir!), flags: flags === undefined ? null : flags.split(",").filter(Boolean) };
  });
  if (!builds.length) builds.push({ name: "this", dir: new URL("..", import.meta.url).pathname, flags: null });
  const server = await startPostgres();
  const dataDirs: string[] = [];
  const sides: Side[] = [];
  try {
    const { url, db } = await createBenchDatabase(server, CONNECTIONS);
    const account = await createAccount(db, "bench");
    const { key } = await createApiKey(db, account.id, { name: "bench" });
    for (let i = 0; i < ROWS; i += 1000) {
      const now = new Date();
      await db
        .insertInto("repositories")
        .values(
          Array.from({ length: 1000 }, (_, j) => {
            const id = newId();
            return {
              id,
              account_id: account.id,
              name: `repo-${i + j}`,
              url: `https://example.invalid/r/${id}.git`,
              provider: "git" as const,
              default_branch: "main",
              created_at: now,
              updated_at: now,
            };
          }),
        )
        .execute();
    }
    await sql`analyze`.execute(db);
    await db.destroy();

    const startBuild = async (b: (typeof builds)[number]): Promise<Side> => {
      const dataDir = mkdtempSync(path.join(tmpdir(), "codeplane-paired-"));
      dataDirs.push(dataDir);
      const port = await freePort();
      const entry = b.flags ? [...b.flags, path.join(b.dir, "src/main.ts")] : [path.join(b.dir, "bin/codeplane.mjs")];
      const proc = spawn(process.execPath, [...entry, "serve"], {
        env: { PATH: process.env.PATH ?? "", ...benchServiceEnv(url, dataDir), CODEPLANE_DB_POOL_MAX: String(CONNECTIONS), PORT: String(port) },
        stdio: ["ignore", "ignore", "inherit"],
      });
      const side = { name: b.name, url: `http://127.0.0.1:${port}`, pid: proc.pid!, proc };
      await waitHealthy(side.url, proc);
      return side;
    };
    const startBare = async (): Promise<Side> => {
      const port = await freePort();
      const bare = fork(new URL("./processes/bare-list-server.ts", import.meta.url).pathname, [], {
        env: { PATH: process.env.PATH ?? "", DATABASE_URL: url, ACCOUNT_ID: account.id, POOL_MAX: String(CONNECTIONS), PORT: String(port) },
        stdio: ["ignore", "ignore", "inherit", "ipc"],
      });
      await new Promise((resolve) => bare.once("message", resolve));
      return { name: "bare", url: `http://127.0.0.1:${port}`, pid: bare.pid!, proc: bare };
    };
    const load = (side: Side, duration: number) =>
      autocannon({ url: `${side.url}/v1/repositories?limit=20`, connections: CONNECTIONS, duration, headers: { authorization: `Bearer ${key}` } });
    // Every side in fresh processes, each warmed up: the first round, and every round with PAIRED_RESTART.
    const startAll = async () => {
      await Promise.all(sides.splice(0).map(stop));
      for (const b of builds) sides.push(await startBuild(b));
      sides.push(await startBare());
      for (const side of sides) await load(side, WARMUP_SECONDS);
    };

    const rows: Record<string, { rps: number[]; main: number[]; proc: number[]; ratio: number[] }> = {};
    for (const name of [...builds.map((b) => b.name), "bare"]) rows[name] = { rps: [], main: [], proc: [], ratio: [] };
    for (let round = 0; round < ROUNDS; round++) {
      if (round === 0 || RESTART) await startAll();
      const order = sides.map((_, i) => sides[(i + round) % sides.length]!);
      const got: Record<string, { rps: number; main: number; proc: number }> = {};
      for (const side of order) {
        const c0 = cpuMicros(side.pid);
        const r = await load(side, SECONDS);
        const c1 = cpuMicros(side.pid);
        if (r.non2xx + r.errors + r.timeouts) throw new Error(`${side.name}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`);
        const n = r.requests.total;
        got[side.name] = { rps: n / SECONDS, main: (c1.mainThread - c0.mainThread) / n, proc: (c1.process - c0.process) / n };
      }
      const line = sides.map((s) => {
        const g = got[s.name]!;
        const ratio = g.main / got.bare!.main;
        rows[s.name]!.rps.push(g.rps);
        rows[s.name]!.main.push(g.main);
        rows[s.name]!.proc.push(g.proc);
        rows[s.name]!.ratio.push(ratio);
        return `${s.name} ${g.rps.toFixed(0)} req/s ${g.main.toFixed(0)} µs (${ratio.toFixed(2)}x)`;
      });
      console.log(`round ${round + 1}: ${line.join(" | ")}`);
    }
    console.log(`\nmedians over ${ROUNDS} rounds of ${SECONDS} s, ${CONNECTIONS} connections:`);
    for (const s of sides) {
      const r = rows[s.name]!;
      console.log(
        `  ${s.name.padEnd(10)} ${median(r.rps).toFixed(0).padStart(6)} req/s  main thread ${median(r.main).toFixed(0).padStart(4)} µs/request  process ${median(r.proc).toFixed(0).padStart(4)} µs/request  main thread / bare ${median(r.ratio).toFixed(2)}x (${Math.min(...r.ratio).toFixed(2)} to ${Math.max(...r.ratio).toFixed(2)})`,
      );
    }
  } finally {
    await Promise.all(sides.splice(0).map(stop));
    for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
    await server.stop();
  }
}

await main();
