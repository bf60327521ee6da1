import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import autocannon from "autocannon";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../src/domain/accounts/accounts.ts";
import { createApiKey } from "../src/domain/auth/api-keys.ts";
import { SERVER_NODE_FLAGS } from "../src/server-node-flags.ts";
import { freePort } from "./helpers/free-port.ts";
import { createTestDatabase, type TestDatabase } from "./helpers/service.ts";
import { untilHealthy } from "./helpers/until.ts";

// `codeplane serve` as deployed (bin/codeplane.mjs, its own process): after
// traffic stops it gives its grown heap back to the system, once per quiet
// period, and not at all with the setting at 0.
//
// V8's own memory reducer is turned off in the service under test: when it
// runs first (it usually does some seconds after the load, sooner on a busy
// machine) the heap is already back and the release rightly does nothing, so
// whether the release acted depended on a race with it (CI failed once with
// "no release within 8 s"). Without it, the release is the only thing that
// can give the heap back, which is the case the feature exists for.

const BIN = new URL("../bin/codeplane.mjs", import.meta.url).pathname;
const RELEASED = "idle after traffic: released memory";
let database: TestDatabase;
let key: string;
const dataDir = mkdtempSync(path.join(tmpdir(), "codeplane-idle-"));

interface LogLine {
  msg: string;
  heap_mib: [number, number];
  rss_mib: [number, number];
}

interface Served {
  url: string;
  releases: () => readonly LogLine[];
  rssMiB: () => number;
  /** The process's command line, as it runs now (after bin/codeplane.mjs started it again with the service's node flags). */
  commandLine: () => string[];
  stop: () => Promise<number | null>;
}

async function serve(releaseSeconds: string): Promise<Served> {
  const port = await freePort();
  // Only the release lines are kept: every request is logged at info, and
  // parsing all of them while the service runs would slow this process enough
  // to hold the service's log writes back.
  let partial = "";
  const released: LogLine[] = [];
  const proc: ChildProcess = spawn(process.execPath, ["--no-memory-reducer", BIN, "serve"], {
    env: {
      PATH: process.env.PATH ?? "",
      DATABASE_URL: database.url,
      CODEPLANE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      CODEPLANE_DATA_DIR: dataDir,
      CODEPLANE_MIGRATE_ON_START: "false",
      CODEPLANE_RATE_LIMIT_REQUESTS: "0",
      CODEPLANE_HOST: "127.0.0.1",
      PORT: String(port),
      CODEPLANE_LOG_LEVEL: "info",
      CODEPLANE_IDLE_MEMORY_RELEASE_SECONDS: releaseSeconds,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  proc.stdout!.on("data", (d: Buffer) => {
    const lines = (partial + d.toString()).split("\n");
    partial = lines.pop()!;
    for (const l of lines) if (l.includes(RELEASED)) released.push(JSON.parse(l) as LogLine);
  });
  const exited = new Promise<number | null>((resolve) => proc.once("exit", resolve));
  const url = `http://127.0.0.1:${port}`;
  await untilHealthy(url, exited);
  return {
    url,
    releases: () => released,
    rssMiB: () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${proc.pid}/status`, "utf8"))![1]) / 1024,
    commandLine: () => readFileSync(`/proc/${proc.pid}/cmdline`, "utf8").split("\0").filter(Boolean),
    stop: () => (proc.kill("SIGTERM"), exited),
  };
}

/** A number of requests rather than a time, so a slower machine grows the heap as much (about 20 MiB here). */
async function load(url: string): Promise<void> {
  const r = await autocannon({ url: `${url}/v1/repositories?limit=20`, connections: 10, amount: 15_000, headers: { authorization: `Bearer ${key}` } });
  expect(r.non2xx + r.errors).toBe(0);
}

const releases = (s: Served) => s.releases();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  database = await createTestDatabase();
  const account = await createAccount(database.db, "idle");
  key = (await createApiKey(database.db, account.id, { name: "idle" })).key;
});
afterAll(async () => {
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("idle memory release", () => {
  it("gives the heap grown under load back once the service is quiet, once per quiet period", async () => {
    const s = await serve("2");
    try {
      await load(s.url);
      const loaded = s.rssMiB();
      for (let i = 0; releases(s).length === 0 && i < 80; i++) await sleep(100);
      const [first] = releases(s);
      expect(first, "no release within 8 s of the load's end").toBeDefined();
      const [heapBefore, heapAfter] = first!.heap_mib;
      expect(heapAfter).toBeLessThan(heapBefore - 16);
      expect(s.rssMiB()).toBeLessThan(loaded - 16);

      // Still quiet: nothing more to give back, so no second collection.
      await sleep(3000);
      expect(releases(s)).toHaveLength(1);

      // Traffic again, then quiet again: released again.
      await load(s.url);
      for (let i = 0; releases(s).length === 1 && i < 80; i++) await sleep(100);
      expect(releases(s)).toHaveLength(2);
    } finally {
      expect(await s.stop()).toBe(0);
    }
  }, 300_000);

  it("keeps the heap with CODEPLANE_IDLE_MEMORY_RELEASE_SECONDS=0", async () => {
    const s = await serve("0");
    try {
      // The memory settings only node's command line gives (src/server-node-flags.ts), in place: the same process.
      expect(s.commandLine()).toEqual(expect.arrayContaining([...SERVER_NODE_FLAGS, BIN, "serve"]));
      await load(s.url);
      await sleep(4000);
      expect(releases(s)).toHaveLength(0);
    } finally {
      expect(await s.stop()).toBe(0);
    }
  }, 300_000);
});
