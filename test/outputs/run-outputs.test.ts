import { execFileSync } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintOutputToken } from "../../src/domain/outputs/output-tokens.ts";
import { outputObjectKey } from "../../src/domain/outputs/outputs.ts";
import { startS3Server, type S3Server } from "../helpers/s3-server.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";

// Run outputs end to end through the service, against real Postgres and both
// object stores (the directory store, and versitygw, a real S3 server on
// loopback): a run's pod sends files through the internal door with its
// output token; the API lists them, serves each (ranges, types, headers) and
// all of them as a tar.gz; limits refuse a file before or while its bytes
// arrive and nothing of it is stored or listed; deleting the run, or the
// retention, removes the objects.

const MiB = 1024 * 1024;
const LIMITS = {
  CODEPLANE_OUTPUT_MAX_FILE_BYTES: String(60 * MiB),
  CODEPLANE_OUTPUT_MAX_RUN_BYTES: String(64 * MiB),
  CODEPLANE_OUTPUT_MAX_RUN_FILES: "5",
  CODEPLANE_OUTPUT_MAX_ACCOUNT_BYTES: String(100 * MiB),
};
const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

let s3: S3Server;
beforeAll(async () => {
  s3 = await startS3Server();
}, 1_200_000);
afterAll(async () => {
  await s3?.stop();
});

/** `total` bytes, made 1 MiB at a time as they are read (never held whole), each chunk's bytes a function of its place. */
function generated(total: number): { body: ReadableStream<Uint8Array>; sha256: string } {
  const hash = createHash("sha256");
  for (let at = 0; at < total; at += MiB) hash.update(Buffer.alloc(Math.min(MiB, total - at), (at / MiB) % 251));
  let at = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (at >= total) return c.close();
      const n = Math.min(MiB, total - at);
      c.enqueue(Buffer.alloc(n, (at / MiB) % 251));
      at += n;
    },
  });
  return { body, sha256: hash.digest("hex") };
}

describe.each(["directory", "s3"] as const)("run outputs in the %s store", (kind) => {
  let svc: TestService;
  let alice: Tenant;
  let bob: Tenant;
  let door: string;
  let storeDir: string;

  beforeAll(async () => {
    storeDir = mkdtempSync(path.join(tmpdir(), "codeplane-outputs-"));
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
        : { CODEPLANE_OBJECT_STORE: "directory", CODEPLANE_OBJECT_STORE_DIR: storeDir };
    svc = await startTestService({ CODEPLANE_GIT_PORT: "0", ...LIMITS, ...store });
    door = `http://127.0.0.1:${svc.service.gitPort}`;
    alice = await svc.tenant();
    bob = await svc.tenant();
  }, 120_000);

  afterAll(async () => {
    await svc?.close();
    rmSync(storeDir, { recursive: true, force: true });
  });

  /** Where the store keeps objects on disk, to prove an object is (or is not) there. */
  const objectExists = (runId: string, p: string): boolean => {
    const key = outputObjectKey(runId, p);
    if (kind === "s3") return existsSync(path.join(s3.dataDir, s3.bucket, key));
    const dir = path.join(storeDir, path.dirname(key));
    return existsSync(dir) && readdirSync(dir).some((f) => f.startsWith(path.basename(key)));
  };

  /** A finished run of the tenant (no resource behind it) and its output token, as the controller mints it. */
  async function run(t: Tenant): Promise<{ id: string; token: string }> {
    const id = randomUUID();
    const repositoryId = randomUUID();
    await svc.db
      .insertInto("repositories")
      .values({
        id: repositoryId,
        account_id: t.accountId,
        name: `r-${id.slice(0, 8)}`,
        url: `https://example.invalid/${id}`,
        provider: "git",
        created_at: new Date(),
        updated_at: new Date(),
      })
      .execute();
    await svc.db
      .insertInto("runs")
      .values({
        id,
        account_id: t.accountId,
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
    return { id, token: await mintOutputToken(svc.db, id, t.accountId, new Date(Date.now() + 600_000)) };
  }

  const upload = (runId: string, token: string, p: string, body: RequestInit["body"], size?: number) =>
    fetch(`${door}/internal/runs/${runId}/outputs/${p.split("/").map(encodeURIComponent).join("/")}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${token}`, ...(size !== undefined && { "x-codeplane-size": String(size) }) },
      body,
      duplex: "half",
    });

  it("stores what a run's pod sends and serves it back: list, one file, ranges, the archive", async () => {
    const r = await run(alice);
    const png = Buffer.from("89504e470d0a1a0a0000000d4948445200000001000000010806000000", "hex");
    const csv = Buffer.from("step,loss\n1,0.9\n2,0.5\n");
    expect((await upload(r.id, r.token, "plots/loss.png", png, png.length)).status).toBe(201);
    const res = await upload(r.id, r.token, "scores.csv", csv);
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ path: "scores.csv", size: csv.length, sha256: sha(csv), content_type: "text/csv; charset=utf-8" });

    const list = await alice.api(`/v1/runs/${r.id}/outputs`);
    expect(list.status).toBe(200);
    expect(await list.json()).toEqual({
      items: [
        { path: "plots/loss.png", size: png.length, sha256: sha(png), content_type: "image/png" },
        { path: "scores.csv", size: csv.length, sha256: sha(csv), content_type: "text/csv; charset=utf-8" },
      ],
      refused: [],
    });

    const one = await alice.api(`/v1/runs/${r.id}/outputs/plots/loss.png`);
    expect(one.status).toBe(200);
    expect(Buffer.from(await one.arrayBuffer())).toEqual(png);
    expect(one.headers.get("content-type")).toBe("image/png");
    expect(one.headers.get("content-disposition")).toBe(`attachment; filename="loss.png"; filename*=UTF-8''loss.png`);
    expect(one.headers.get("x-content-type-options")).toBe("nosniff");
    expect(one.headers.get("etag")).toBe(`"${sha(png)}"`);
    expect(one.headers.get("accept-ranges")).toBe("bytes");

    const part = await alice.api(`/v1/runs/${r.id}/outputs/scores.csv`, { headers: { range: "bytes=5-8" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 5-8/${csv.length}`);
    expect(await part.text()).toBe(csv.subarray(5, 9).toString());
    const tail = await alice.api(`/v1/runs/${r.id}/outputs/scores.csv`, { headers: { range: "bytes=-4" } });
    expect(tail.status).toBe(206);
    expect(await tail.text()).toBe(csv.subarray(csv.length - 4).toString());
    const open = await alice.api(`/v1/runs/${r.id}/outputs/scores.csv`, { headers: { range: "bytes=10-" } });
    expect(await open.text()).toBe(csv.subarray(10).toString());
    const past = await alice.api(`/v1/runs/${r.id}/outputs/scores.csv`, { headers: { range: `bytes=${csv.length}-` } });
    expect(past.status).toBe(416);
    expect(past.headers.get("content-range")).toBe(`bytes */${csv.length}`);
    expect(await past.json()).toEqual({ detail: expect.stringContaining("outside") });

    const archive = await alice.api(`/v1/runs/${r.id}/outputs.tar.gz`);
    expect(archive.status).toBe(200);
    expect(archive.headers.get("content-type")).toBe("application/gzip");
    const dir = mkdtempSync(path.join(tmpdir(), "codeplane-outputs-tar-"));
    try {
      const file = path.join(dir, "all.tar.gz");
      const { writeFileSync } = await import("node:fs");
      writeFileSync(file, Buffer.from(await archive.arrayBuffer()));
      mkdirSync(path.join(dir, "x"));
      execFileSync("tar", ["-xzf", file, "-C", path.join(dir, "x")]);
      expect(sha(readFileSync(path.join(dir, "x/plots/loss.png")))).toBe(sha(png));
      expect(sha(readFileSync(path.join(dir, "x/scores.csv")))).toBe(sha(csv));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    // Another account's run is not there; a missing output is a 404 with the usual body.
    expect((await bob.api(`/v1/runs/${r.id}/outputs`)).status).toBe(404);
    expect((await bob.api(`/v1/runs/${r.id}/outputs/scores.csv`)).status).toBe(404);
    const missing = await alice.api(`/v1/runs/${r.id}/outputs/nope.txt`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ detail: "Output not found" });
  });

  it("opens the door only to the run's own token, and only for safe paths", async () => {
    const a = await run(alice);
    const b = await run(bob);
    expect((await upload(a.id, b.token, "x.txt", "x")).status).toBe(401);
    expect((await upload(a.id, "cpo_" + "A".repeat(43), "x.txt", "x")).status).toBe(401);
    expect((await fetch(`${door}/internal/runs/${a.id}/outputs/x.txt`, { method: "PUT", body: "x" })).status).toBe(401);
    // Sent as written (fetch would resolve the dots itself).
    for (const bad of ["a/%2e%2e/b", "%2e%2e/x", "a/../../x", "a//b", "a%5Cb", "%2Fetc%2Fpasswd"]) {
      const status = await new Promise<number>((resolve, reject) => {
        const port = Number(new URL(door).port);
        const options = {
          host: "127.0.0.1",
          port,
          path: `/internal/runs/${a.id}/outputs/${bad}`,
          method: "PUT",
          headers: { authorization: `Bearer ${a.token}` },
        };
        const req = httpRequest(options, (res) => {
          res.resume();
          resolve(res.statusCode!);
        });
        req.on("error", reject);
        req.end("x");
      });
      expect([404, 422], bad).toContain(status);
    }
    expect(((await (await alice.api(`/v1/runs/${a.id}/outputs`)).json()) as { items: unknown[] }).items).toEqual([]);
  });

  it("refuses a file over a limit before or while it arrives, keeps nothing of it, and says why", async () => {
    const r = await run(alice);
    // Declared too large: refused before a byte is read.
    const declared = await upload(r.id, r.token, "big-declared.bin", "tiny", 61 * MiB);
    expect(declared.status).toBe(413);
    expect(((await declared.json()) as { detail: string }).detail).toMatch(/big-declared\.bin.*was not stored.*CODEPLANE_OUTPUT_MAX_FILE_BYTES/);
    // Not declared (or lied about): cut by the counter as the bytes stream.
    const streamed = await upload(r.id, r.token, "big-streamed.bin", generated(61 * MiB).body);
    expect(streamed.status).toBe(413);
    expect(((await streamed.json()) as { detail: string }).detail).toMatch(/more than 60\.0 MiB arrived/);
    expect(objectExists(r.id, "big-streamed.bin")).toBe(false);
    // Within the file limit, then past the run's: the second is refused whole.
    expect((await upload(r.id, r.token, "first.bin", generated(40 * MiB).body, 40 * MiB)).status).toBe(201);
    const over = await upload(r.id, r.token, "second.bin", generated(30 * MiB).body);
    expect(over.status).toBe(413);
    expect(((await over.json()) as { detail: string }).detail).toMatch(/CODEPLANE_OUTPUT_MAX_RUN_BYTES/);
    expect(objectExists(r.id, "second.bin")).toBe(false);
    const listed = (await (await alice.api(`/v1/runs/${r.id}/outputs`)).json()) as { items: { path: string }[]; refused: { path: string; reason: string }[] };
    expect(listed.items.map((i) => i.path)).toEqual(["first.bin"]);
    expect(listed.refused.map((i) => i.path)).toEqual(["big-declared.bin", "big-streamed.bin", "second.bin"]);
    expect((await alice.api(`/v1/runs/${r.id}/outputs/second.bin`)).status).toBe(404);
    // The account's limit counts every run: 40 MiB here, 60 more in another run pass 100 MiB.
    const other = await run(alice);
    const acct = await upload(other.id, other.token, "more.bin", generated(61 * MiB).body, 61 * MiB);
    expect(acct.status).toBe(413);
    const fits = await upload(other.id, other.token, "more.bin", generated(60 * MiB).body, 60 * MiB);
    expect(fits.status).toBe(413);
    expect(((await fits.json()) as { detail: string }).detail).toMatch(/CODEPLANE_OUTPUT_MAX_ACCOUNT_BYTES/);
    expect((await upload(other.id, other.token, "ok.txt", "ok")).status).toBe(201);
    // Files per run.
    const many = await run(bob);
    for (let i = 0; i < 5; i++) expect((await upload(many.id, many.token, `f${i}.txt`, "x")).status).toBe(201);
    const sixth = await upload(many.id, many.token, "f5.txt", "x");
    expect(sixth.status).toBe(413);
    expect(((await sixth.json()) as { detail: string }).detail).toMatch(/at most 5 files/);
  }, 180_000);

  it("deletes a run's outputs with the run, and past the retention", async () => {
    const r = await run(alice);
    expect((await upload(r.id, r.token, "keep.txt", "keep")).status).toBe(201);
    expect(objectExists(r.id, "keep.txt")).toBe(true);
    expect((await alice.api(`/v1/runs/${r.id}`, { method: "DELETE" })).status).toBe(204);
    expect(objectExists(r.id, "keep.txt")).toBe(false);
    expect(await svc.db.selectFrom("run_outputs").select("path").where("run_id", "=", r.id).execute()).toEqual([]);

    // A run whose row went another way (no API call): the sweeper removes its outputs.
    const gone = await run(alice);
    expect((await upload(gone.id, gone.token, "orphan.txt", "orphan")).status).toBe(201);
    await svc.db.deleteFrom("runs").where("id", "=", gone.id).execute();
    const { OutputService } = await import("../../src/domain/outputs/outputs.ts");
    const { createObjectStore } = await import("../../src/storage/create.ts");
    const { loadConfig } = await import("../../src/config.ts");
    const { createRootLogger } = await import("../../src/logger.ts");
    const config = loadConfig({
      DATABASE_URL: svc.databaseUrl,
      CODEPLANE_ENCRYPTION_KEY: svc.encryptionKey,
      ...(kind === "s3"
        ? {
            CODEPLANE_OBJECT_STORE: "s3",
            CODEPLANE_S3_ENDPOINT: s3.endpoint,
            CODEPLANE_S3_BUCKET: s3.bucket,
            CODEPLANE_S3_REGION: s3.region,
            CODEPLANE_S3_FORCE_PATH_STYLE: "true",
            CODEPLANE_S3_ACCESS_KEY_ID: s3.accessKeyId,
            CODEPLANE_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
          }
        : { CODEPLANE_OBJECT_STORE_DIR: storeDir }),
      CODEPLANE_OUTPUT_RETENTION_DAYS: "7",
    });
    const logger = createRootLogger("silent");
    const store = await createObjectStore(config, logger);
    try {
      const sweeper = new OutputService({ store, limits: config.outputs, logger });
      const old = await run(alice);
      expect((await upload(old.id, old.token, "old.txt", "old")).status).toBe(201);
      expect((await upload(old.id, old.token, "new.txt", "new")).status).toBe(201);
      await svc.db
        .updateTable("run_outputs")
        .set({ stored_at: new Date(Date.now() - 8 * 86_400_000) } as never)
        .where("run_id", "=", old.id)
        .where("path", "=", "old.txt")
        .execute();
      expect(await sweeper.sweep(svc.db)).toBeGreaterThanOrEqual(2);
      expect(objectExists(gone.id, "orphan.txt")).toBe(false);
      expect(objectExists(old.id, "old.txt")).toBe(false);
      expect(objectExists(old.id, "new.txt")).toBe(true);
      const left = (await (await alice.api(`/v1/runs/${old.id}/outputs`)).json()) as { items: { path: string }[] };
      expect(left.items.map((i) => i.path)).toEqual(["new.txt"]);
    } finally {
      store.close();
    }
  });
});
