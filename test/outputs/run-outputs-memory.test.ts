import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { appendFileSync, createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../src/domain/accounts/accounts.ts";
import { createApiKey } from "../../src/domain/auth/api-keys.ts";
import { mintOutputToken } from "../../src/domain/outputs/output-tokens.ts";
import { freePort } from "../helpers/free-port.ts";
import { startS3Server, type S3Server } from "../helpers/s3-server.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/service.ts";
import { untilHealthy } from "../helpers/until.ts";

// `codeplane serve` as deployed (its own process, so its RSS is its own): a
// 50 MiB output goes in through the internal door and comes back out of the
// API, in both object stores, while the service's resident memory is sampled.
// Then a 200 MiB one. Streamed, the service grows by about the same few tens
// of MiB for both (its young generation, socket and file buffers, the S3
// client's parts): measured here 60-110 MiB for either size, which is the
// point: a path that held the file would grow by at least the file, 200 MiB,
// and by 150 MiB more for the larger file than for the smaller one. The bars
// sit halfway between, so a loaded machine's late garbage collection does not
// trip them and a path that holds the file cannot pass them.

const BIN = new URL("../../bin/codeplane.mjs", import.meta.url).pathname;
const MiB = 1024 * 1024;
const SIZES = [50, 200];
const dir = mkdtempSync(path.join(tmpdir(), "codeplane-outputs-rss-"));
const files = new Map<number, { file: string; sha: string }>();
let database: TestDatabase;
let s3: S3Server;
let key: string;
let accountId: string;

beforeAll(async () => {
  // Random bytes, so no layer can compress them away; written a MiB at a time.
  for (const mib of SIZES) {
    const file = path.join(dir, `model-${mib}.bin`);
    const hash = createHash("sha256");
    writeFileSync(file, "");
    for (let i = 0; i < mib; i++) {
      const c = randomBytes(MiB);
      hash.update(c);
      appendFileSync(file, c);
    }
    files.set(mib, { file, sha: hash.digest("hex") });
  }
  database = await createTestDatabase();
  const account = await createAccount(database.db, "outputs-rss");
  accountId = account.id;
  key = (await createApiKey(database.db, account.id, { name: "rss" })).key;
  s3 = await startS3Server();
}, 1_200_000);

afterAll(async () => {
  await s3?.stop();
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function serve(store: Record<string, string>) {
  const port = await freePort();
  let gitPort = await freePort();
  while (gitPort === port) gitPort = await freePort();
  const proc: ChildProcess = spawn(process.execPath, [BIN, "serve"], {
    env: {
      PATH: process.env.PATH ?? "",
      DATABASE_URL: database.url,
      CODEPLANE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      CODEPLANE_DATA_DIR: dir,
      CODEPLANE_MIGRATE_ON_START: "false",
      CODEPLANE_HOST: "127.0.0.1",
      PORT: String(port),
      CODEPLANE_GIT_PORT: String(gitPort),
      CODEPLANE_LOG_LEVEL: "warn",
      ...store,
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const exited = new Promise((resolve) => proc.once("exit", resolve));
  const url = `http://127.0.0.1:${port}`;
  await untilHealthy(url, exited);
  const rssMiB = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${proc.pid}/status`, "utf8"))![1]) / 1024;
  return { url, door: `http://127.0.0.1:${gitPort}`, rssMiB, stop: () => (proc.kill("SIGTERM"), exited) };
}

async function runRow(): Promise<{ id: string; token: string }> {
  const id = randomUUID();
  const repositoryId = randomUUID();
  await database.db
    .insertInto("repositories")
    .values({
      id: repositoryId,
      account_id: accountId,
      name: `r-${id.slice(0, 8)}`,
      url: `https://example.invalid/${id}`,
      provider: "git",
      created_at: new Date(),
      updated_at: new Date(),
    })
    .execute();
  await database.db
    .insertInto("runs")
    .values({
      id,
      account_id: accountId,
      repository_id: repositoryId,
      commit_hash: "c".repeat(40),
      workflow_id: `ns/run-${id}`,
      status: "completed",
      compute_type: "cpu-general",
      run_config: JSON.stringify({ command: ["true"], parameters: {}, timeout_seconds: 60 }),
      resource_deleted_at: new Date(),
      updated_at: new Date(),
    })
    .execute();
  return { id, token: await mintOutputToken(database.db, id, accountId, new Date(Date.now() + 600_000)) };
}

describe.each(["directory", "s3"] as const)("a 50 MiB output through `codeplane serve` with the %s store", (kind) => {
  it("keeps the service's memory bounded on the way in and out", async () => {
    const store: Record<string, string> =
      kind === "s3"
        ? {
            CODEPLANE_OBJECT_STORE: "s3",
            CODEPLANE_S3_ENDPOINT: s3.endpoint,
            CODEPLANE_S3_BUCKET: s3.bucket,
            CODEPLANE_S3_REGION: s3.region,
            CODEPLANE_S3_FORCE_PATH_STYLE: "true",
            CODEPLANE_S3_ACCESS_KEY_ID: s3.accessKeyId,
            CODEPLANE_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
          }
        : { CODEPLANE_OBJECT_STORE: "directory", CODEPLANE_OBJECT_STORE_DIR: path.join(dir, `objects-${randomUUID()}`) };
    const s = await serve(store);
    try {
      const run = await runRow();
      // Warm: one small output in and out, so what is measured is the big one.
      await fetch(`${s.door}/internal/runs/${run.id}/outputs/warm.txt`, { method: "PUT", headers: { authorization: `Bearer ${run.token}` }, body: "warm" });
      await (await fetch(`${s.url}/v1/runs/${run.id}/outputs/warm.txt`, { headers: { authorization: `Bearer ${key}` } })).text();
      const grown: number[] = [];
      for (const mib of SIZES) {
        const { file, sha } = files.get(mib)!;
        const before = s.rssMiB();
        let peak = before;
        const sampler = setInterval(() => (peak = Math.max(peak, s.rssMiB())), 10);
        try {
          const up = await fetch(`${s.door}/internal/runs/${run.id}/outputs/model-${mib}.bin`, {
            method: "PUT",
            headers: { authorization: `Bearer ${run.token}`, "x-codeplane-size": String(mib * MiB) },
            body: Readable.toWeb(createReadStream(file, { highWaterMark: MiB })) as ReadableStream<Uint8Array>,
            duplex: "half",
          });
          expect(up.status).toBe(201);
          expect(((await up.json()) as { sha256: string }).sha256).toBe(sha);
          const down = await fetch(`${s.url}/v1/runs/${run.id}/outputs/model-${mib}.bin`, { headers: { authorization: `Bearer ${key}` } });
          expect(down.status).toBe(200);
          const hash = createHash("sha256");
          // Read slowly at first: a service that did not stream with back-pressure would buffer meanwhile.
          let n = 0;
          for await (const chunk of down.body as unknown as AsyncIterable<Uint8Array>) {
            hash.update(chunk);
            if (n++ < 50) await new Promise((r) => setTimeout(r, 5));
          }
          expect(hash.digest("hex")).toBe(sha);
        } finally {
          clearInterval(sampler);
        }
        grown.push(peak - before);
        console.log(
          `${kind}: codeplane serve's RSS ${before.toFixed(1)} MiB before, peak ${peak.toFixed(1)} MiB (+${(peak - before).toFixed(1)}) over a ${mib} MiB upload and download`,
        );
      }
      // Below the larger file by a quarter of it, and not growing with the size.
      const [small, large] = grown as [number, number];
      expect(large).toBeLessThan(150);
      expect(large - small).toBeLessThan(75);
    } finally {
      await s.stop();
    }
  }, 400_000);
});
