import { ListMultipartUploadsCommand } from "@aws-sdk/client-s3";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { S3Settings } from "../../src/config.ts";
import { createRootLogger } from "../../src/logger.ts";
import { createObjectStore } from "../../src/storage/create.ts";
import { DirectoryStore } from "../../src/storage/directory-store.ts";
import { InvalidKeyError, InvalidRangeError, ObjectStoreUnavailableError, ObjectTooLargeError, type ObjectStore } from "../../src/storage/object-store.ts";
import { s3Client, S3Store } from "../../src/storage/s3-store.ts";
import { startS3Server, type S3Server } from "../helpers/s3-server.ts";

// One contract, both backends: the directory store and S3Store against a real
// S3-compatible server (versitygw on loopback, test/helpers/s3-server.ts).
// What an environment cache relies on: whole objects or none, limits held
// while streaming, bodies never held in memory, keys that cannot escape.

const MiB = 1024 * 1024;

let server: S3Server;
let dirRoot: string;
const stores: Record<string, ObjectStore> = {};
const settingsOf = (s: S3Server): S3Settings => ({
  endpoint: s.endpoint,
  bucket: s.bucket,
  region: s.region,
  forcePathStyle: true,
  accessKeyId: s.accessKeyId,
  secretAccessKey: s.secretAccessKey,
});

beforeAll(async () => {
  dirRoot = mkdtempSync(path.join(tmpdir(), "codeplane-objects-"));
  stores.directory = new DirectoryStore(path.join(dirRoot, "objects"));
  await stores.directory.check();
  server = await startS3Server();
  stores.s3 = new S3Store(settingsOf(server));
  await stores.s3.check();
}, 1_200_000);

afterAll(async () => {
  stores.s3?.close();
  await server?.stop();
  rmSync(dirRoot, { recursive: true, force: true });
});

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

/** Everything a listing yields (Array.fromAsync is past the project's ES target). */
async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

async function read(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/**
 * `total` bytes in fresh 1 MiB chunks (fresh, so a store that kept them would
 * show in RSS), each byte `fill`; `pulled` counts what the store has read.
 */
function generated(total: number, fill = 0x61, chunk = MiB, delayMs = 0) {
  const state = { pulled: 0 };
  const stream = new Readable({
    read() {
      const next = () => {
        const n = Math.min(chunk, total - state.pulled);
        if (n <= 0) return void this.push(null);
        state.pulled += n;
        this.push(Buffer.alloc(n, fill));
      };
      if (delayMs) setTimeout(next, delayMs);
      else next();
    },
  });
  return { stream, state };
}

describe.each(["directory", "s3"])("the %s object store", (kind) => {
  const store = () => stores[kind]!;
  const k = (name: string) => `contract/${kind}/${name}`;

  it("stores a body and gives back its bytes, size and SHA-256", async () => {
    const data = Buffer.from("hello, environments\n".repeat(1000));
    const put = await store().put(k("round/trip.txt"), Readable.from([data]), { maxBytes: data.length, contentType: "text/plain" });
    expect(put).toEqual({ size: data.length, sha256: sha(data) });
    const got = (await store().get(k("round/trip.txt")))!;
    expect([got.size, got.totalSize]).toEqual([data.length, data.length]);
    expect((await read(got.body)).equals(data)).toBe(true);
  });

  it("stores an empty object", async () => {
    expect(await store().put(k("empty"), Readable.from([]), { maxBytes: 10 })).toEqual({ size: 0, sha256: sha(Buffer.alloc(0)) });
    const got = (await store().get(k("empty")))!;
    expect(got.size).toBe(0);
    expect((await read(got.body)).length).toBe(0);
    expect((await store().head(k("empty")))?.size).toBe(0);
  });

  it("answers null for an absent object and deletes one that is absent without complaint", async () => {
    expect(await store().get(k("absent"))).toBeNull();
    expect(await store().get(k("absent"), { start: 0 })).toBeNull();
    expect(await store().head(k("absent"))).toBeNull();
    await expect(store().delete(k("absent"))).resolves.toBeUndefined();
  });

  it("serves byte ranges, inclusive, clamped at the end, refused past it", async () => {
    const data = Buffer.from("0123456789");
    await store().put(k("range"), Readable.from([data]), { maxBytes: 100 });
    const part = async (start: number, end?: number) => {
      const got = (await store().get(k("range"), end === undefined ? { start } : { start, end }))!;
      return [(await read(got.body)).toString(), got.size, got.totalSize];
    };
    expect(await part(2, 5)).toEqual(["2345", 4, 10]);
    expect(await part(7)).toEqual(["789", 3, 10]);
    expect(await part(0, 0)).toEqual(["0", 1, 10]);
    expect(await part(8, 100)).toEqual(["89", 2, 10]);
    await expect(store().get(k("range"), { start: 10 })).rejects.toBeInstanceOf(InvalidRangeError);
    await expect(store().get(k("range"), { start: 5, end: 2 })).rejects.toThrow(RangeError);
  });

  it("heads an object: its size and when it was written", async () => {
    const before = Date.now();
    await store().put(k("head"), Readable.from([Buffer.alloc(1234, 1)]), { maxBytes: 2000 });
    const info = (await store().head(k("head")))!;
    expect(info.size).toBe(1234);
    // S3 keeps whole seconds.
    expect(info.modified.getTime()).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 2000);
    expect(info.modified.getTime()).toBeLessThanOrEqual(Date.now() + 2000);
  });

  it("deletes an object: gone from get, head and list", async () => {
    await store().put(k("gone/x"), Readable.from([Buffer.from("x")]), { maxBytes: 1 });
    await store().delete(k("gone/x"));
    expect(await store().get(k("gone/x"))).toBeNull();
    expect(await store().head(k("gone/x"))).toBeNull();
    expect(await all(store().list(k("gone/")))).toEqual([]);
  });

  it("lists by prefix in byte order of the keys, as S3 does", async () => {
    // No key is another's folder ("a" beside "a/b"): S3 allows it, but file-backed servers (versitygw, MinIO) do not.
    const keys = ["b", "a/c/d", "a-b", "a/b", "a.x", "a/c-e", "ab"];
    for (const [i, key] of keys.entries()) await store().put(k(`list/${key}`), Readable.from([Buffer.alloc(i + 1)]), { maxBytes: 100 });
    const listed = async (prefix: string) => (await all(store().list(k(`list/${prefix}`)))).map((o) => [o.key.slice(k("list/").length), o.size]);
    expect(await listed("")).toEqual([
      ["a-b", 3],
      ["a.x", 5],
      ["a/b", 4],
      ["a/c-e", 6],
      ["a/c/d", 2],
      ["ab", 7],
      ["b", 1],
    ]);
    expect((await listed("a/")).map(([key]) => key)).toEqual(["a/b", "a/c-e", "a/c/d"]);
    expect((await listed("a/c")).map(([key]) => key)).toEqual(["a/c-e", "a/c/d"]);
    expect((await listed("a")).map(([key]) => key)).toEqual(["a-b", "a.x", "a/b", "a/c-e", "a/c/d", "ab"]);
    expect(await listed("zz")).toEqual([]);
    const [first] = await all(store().list(k("list/b")));
    expect(first!.modified).toBeInstanceOf(Date);
  });

  it("replaces an object atomically: readers see the old one whole until the new one is whole", async () => {
    const key = k("atomic");
    const old = Buffer.alloc(3 * MiB, 0x6f);
    await store().put(key, Readable.from([old]), { maxBytes: 64 * MiB });
    // The new body arrives slowly; meanwhile every read is the old object, entire.
    const { stream } = generated(12 * MiB, 0x6e, MiB, 40);
    const replacing = store().put(key, stream, { maxBytes: 64 * MiB });
    let done = false;
    replacing.then(
      () => (done = true),
      () => (done = true),
    );
    const seen: string[] = [];
    while (!done) {
      const bytes = await read((await store().get(key))!.body);
      // The old object or the new one, each whole; a read racing the last rename may already get the new one.
      if (bytes.length === old.length && bytes.equals(old)) seen.push("old");
      else if (bytes.length === 12 * MiB && bytes.every((b) => b === 0x6e)) seen.push("new");
      else seen.push(`torn: ${bytes.length} bytes`);
    }
    expect(seen.filter((s) => s !== "old" && s !== "new")).toEqual([]);
    // Reads saw the old one while the new one streamed, and never the old one again after the new one.
    const firstNew = seen.includes("new") ? seen.indexOf("new") : seen.length;
    expect(firstNew).toBeGreaterThan(0);
    expect(seen.slice(firstNew).every((s) => s === "new")).toBe(true);
    expect((await replacing).size).toBe(12 * MiB);
    const after = await read((await store().get(key))!.body);
    expect(after.length).toBe(12 * MiB);
    expect(after.every((b) => b === 0x6e)).toBe(true);
  });

  it("rejects a body over maxBytes while it streams, reading little past the limit and storing nothing", async () => {
    const key = k("too-large");
    const { stream, state } = generated(64 * MiB);
    await expect(store().put(key, stream, { maxBytes: 2 * MiB })).rejects.toBeInstanceOf(ObjectTooLargeError);
    // Read up to the limit and what was buffered ahead of it, never the rest of the body.
    expect(state.pulled).toBeLessThan(2 * MiB + 4 * MiB);
    expect(stream.destroyed).toBe(true);
    expect(await store().head(key)).toBeNull();
    expect(await all(store().list(key))).toEqual([]);
  });

  it("keeps the object a rejected put meant to replace", async () => {
    const key = k("kept");
    const old = Buffer.from("the old archive");
    await store().put(key, Readable.from([old]), { maxBytes: 100 });
    // Past S3's first part, so the rejected put had started a multipart upload.
    await expect(store().put(key, generated(20 * MiB).stream, { maxBytes: 10 * MiB })).rejects.toBeInstanceOf(ObjectTooLargeError);
    expect((await read((await store().get(key))!.body)).equals(old)).toBe(true);
  });

  it("accepts a body of exactly maxBytes", async () => {
    expect((await store().put(k("exact"), generated(MiB + 7).stream, { maxBytes: MiB + 7 })).size).toBe(MiB + 7);
  });

  it("fails a put whose body fails, storing nothing", async () => {
    const body = new Readable({ read() {} });
    body.push(Buffer.alloc(1000));
    setTimeout(() => body.destroy(new Error("the build pod went away")), 50);
    await expect(store().put(k("broken"), body, { maxBytes: MiB })).rejects.toThrow(/the build pod went away/);
    expect(await store().head(k("broken"))).toBeNull();
  });

  it.each(["../escape", "/etc/passwd", "a/../../escape", "a\0b", "a//b", "a/", ".tmp/x", "a\\..\\b", ""])("refuses the key %j everywhere", async (bad) => {
    await expect(store().put(bad, Readable.from([Buffer.from("x")]), { maxBytes: 10 })).rejects.toBeInstanceOf(InvalidKeyError);
    await expect(store().get(bad)).rejects.toBeInstanceOf(InvalidKeyError);
    await expect(store().head(bad)).rejects.toBeInstanceOf(InvalidKeyError);
    await expect(store().delete(bad)).rejects.toBeInstanceOf(InvalidKeyError);
  });

  it("refuses a prefix no key could start with", async () => {
    await expect(all(store().list("../"))).rejects.toBeInstanceOf(InvalidKeyError);
  });

  it("ends concurrent puts of one key with one of them, whole", async () => {
    const key = k("concurrent");
    const sizes = [3, 5, 2, 4, 6, 1].map((n) => n * MiB + n);
    const results = await Promise.all(sizes.map((size, i) => store().put(key, generated(size, 0x41 + i, 256 * 1024).stream, { maxBytes: 16 * MiB })));
    const bytes = await read((await store().get(key))!.body);
    const winner = sizes.indexOf(bytes.length);
    expect(winner).toBeGreaterThanOrEqual(0);
    expect(bytes.every((b) => b === 0x41 + winner)).toBe(true);
    expect(sha(bytes)).toBe(results[winner]!.sha256);
  });

  it("streams a 200 MB body in and out without holding it in memory", async () => {
    const total = 200 * MiB;
    const key = k("big");
    let peak = 0;
    const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 10);
    try {
      const baseline = process.memoryUsage.rss();
      peak = baseline;
      const put = await store().put(key, generated(total, 0x7a).stream, { maxBytes: 300 * MiB });
      const putGrowth = peak - baseline;
      const hash = createHash("sha256");
      peak = process.memoryUsage.rss();
      const getBaseline = peak;
      for await (const c of (await store().get(key))!.body) hash.update(c as Buffer);
      const getGrowth = peak - getBaseline;
      console.log(`${kind}: 200 MiB put: RSS +${(putGrowth / MiB).toFixed(0)} MiB at peak; get: +${(getGrowth / MiB).toFixed(0)} MiB`);
      expect(put.size).toBe(total);
      expect(hash.digest("hex")).toBe(put.sha256);
      // Half the body at most: what is in flight (parts, socket and stream buffers) and garbage not yet collected.
      expect(putGrowth).toBeLessThan(100 * MiB);
      expect(getGrowth).toBeLessThan(100 * MiB);
    } finally {
      clearInterval(sample);
      await store().delete(key);
    }
  }, 120_000);
});

describe("the directory store", () => {
  it("keeps every object inside its folder and leaves no temp file behind", async () => {
    const root = path.join(dirRoot, "objects");
    await stores.directory!.put("inside/x", Readable.from([Buffer.from("x")]), { maxBytes: 1 });
    await expect(stores.directory!.put("inside/y", generated(4 * MiB).stream, { maxBytes: MiB })).rejects.toBeInstanceOf(ObjectTooLargeError);
    expect(existsSync(path.join(root, "inside/x~"))).toBe(true);
    expect(existsSync(path.join(dirRoot, "escape~"))).toBe(false);
    expect(readdirSync(path.join(root, ".tmp"))).toEqual([]);
  });

  it("says which folder cannot be written, at start", async () => {
    const file = path.join(dirRoot, "a-file");
    writeFileSync(file, "");
    const err = await new DirectoryStore(path.join(file, "objects")).check().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ObjectStoreUnavailableError);
    expect((err as Error).message).toMatch(new RegExp(`the directory ${file}/objects \\(CODEPLANE_OBJECT_STORE_DIR\\) is not writable \\(ENOTDIR\\)`));
  });
});

describe("the S3 store", () => {
  it("aborts the multipart upload of a rejected put", async () => {
    const client = s3Client(settingsOf(server));
    try {
      await expect(stores.s3!.put("s3/aborted", generated(40 * MiB).stream, { maxBytes: 20 * MiB })).rejects.toBeInstanceOf(ObjectTooLargeError);
      const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: server.bucket }));
      expect(uploads.Uploads ?? []).toEqual([]);
    } finally {
      client.destroy();
    }
  });

  it.each<[string, (s: S3Settings) => S3Settings, RegExp]>([
    [
      "a bucket that does not exist",
      (s) => ({ ...s, bucket: "no-such-bucket" }),
      /s3 bucket no-such-bucket at http:\/\/127\.0\.0\.1:\d+: the bucket does not exist/,
    ],
    ["a wrong secret", (s) => ({ ...s, secretAccessKey: "wrong-secret-0000" }), /access denied \(HTTP 403; check CODEPLANE_S3_ACCESS_KEY_ID/],
    ["nothing listening", (s) => ({ ...s, endpoint: "http://127.0.0.1:9" }), /at http:\/\/127\.0\.0\.1:9: cannot connect \(ECONNREFUSED/],
  ])("refuses to start on %s, saying which endpoint and bucket and what failed", async (_what, change, message) => {
    const settings = change(settingsOf(server));
    const lines: string[] = [];
    const logger = createRootLogger("debug", { write: (l: string) => void lines.push(l) });
    const err = await createObjectStore({ objectStore: { kind: "s3", s3: settings } }, logger).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ObjectStoreUnavailableError);
    expect((err as Error).message).toMatch(message);
    expect((err as Error).message).not.toContain(settings.secretAccessKey!);
    expect((err as Error).message.split("\n")).toHaveLength(1);
  });

  it("starts on a reachable bucket and never logs the secret", async () => {
    const lines: string[] = [];
    const logger = createRootLogger("trace", { write: (l: string) => void lines.push(l) });
    const store = await createObjectStore({ objectStore: { kind: "s3", s3: settingsOf(server) } }, logger);
    await store.put("s3/logged", Readable.from([Buffer.from("x")]), { maxBytes: 1 });
    expect(store.location).toBe(`s3 bucket ${server.bucket} at ${server.endpoint}`);
    expect(lines.join("")).toContain("object store ready");
    expect(lines.join("")).not.toContain(server.secretAccessKey);
    store.close();
  });

  it("stores an object where any S3 client finds it: the bucket's folder on the server", async () => {
    await stores.s3!.put("s3/visible/file.txt", Readable.from([Buffer.from("seen")]), { maxBytes: 10 });
    expect(existsSync(path.join(server.dataDir, server.bucket, "s3/visible/file.txt"))).toBe(true);
  });
});
