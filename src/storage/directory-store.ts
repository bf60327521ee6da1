import { randomBytes } from "node:crypto";
import { createWriteStream, type Dirent } from "node:fs";
import { mkdir, open, readdir, rename, rmdir, stat, unlink, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { checkKey, checkPrefix } from "./keys.ts";
import { MeasuringStream } from "./measure.ts";
import {
  ObjectStoreUnavailableError,
  resolveRange,
  type ByteRange,
  type ListedObject,
  type ObjectBody,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
  type StoredObject,
} from "./object-store.ts";

// The embedded object store: one file per object under a directory
// ($CODEPLANE_DATA_DIR/objects by default), for a single codeplane process
// (development, the embedded database) or a volume all replicas share.
//
// Layout: key "envs/ab/env.tar" is the file "envs/ab/env.tar~". The suffix is
// outside the key alphabet (keys.ts), so an object and a "folder" of the same
// name ("a" and "a/b") never collide, as they may not in S3. A put writes
// ".tmp/<random>" beside them (same filesystem), fsyncs it and renames it into
// place: rename replaces atomically, so readers see the old object or the new
// one, and of concurrent puts of one key the last rename wins, whole. Key
// segments never start with ".", so ".tmp" is never a key's folder.

const SUFFIX = "~";
const TEMP_DIR = ".tmp";
/** Temp files older than this at start are left over from a crash (a put in flight is far younger). */
const STALE_TEMP_MS = 24 * 3600 * 1000;

const isCode = (err: unknown, ...codes: string[]) => codes.includes((err as NodeJS.ErrnoException | null)?.code ?? "");

export class DirectoryStore implements ObjectStore {
  readonly kind = "directory";
  readonly location: string;
  readonly #root: string;

  constructor(root: string) {
    this.#root = path.resolve(root);
    this.location = this.#root;
  }

  /** The object's file; the key is checked first, so it is always inside the root. */
  #file(key: string): string {
    return path.join(this.#root, `${checkKey(key)}${SUFFIX}`);
  }

  async put(key: string, body: Readable, opts: PutOptions): Promise<StoredObject> {
    const file = this.#file(key);
    const measure = new MeasuringStream(opts.maxBytes);
    const tempDir = path.join(this.#root, TEMP_DIR);
    await mkdir(tempDir, { recursive: true });
    const temp = path.join(tempDir, `${randomBytes(12).toString("hex")}.part`);
    try {
      // flush: fsync before close, so the rename below never publishes a file whose data a crash could lose.
      await pipeline(body, measure, createWriteStream(temp, { flags: "wx", mode: 0o600, flush: true }));
      await this.#publish(temp, file);
    } catch (err) {
      await unlink(temp).catch(() => undefined);
      body.destroy();
      throw err;
    }
    return { size: measure.bytesSeen, sha256: measure.digest() };
  }

  /** Renames temp onto file, making its folders; again if a delete pruned a folder in between. */
  async #publish(temp: string, file: string): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      await mkdir(path.dirname(file), { recursive: true });
      try {
        await rename(temp, file);
        break;
      } catch (err) {
        if (!isCode(err, "ENOENT") || attempt >= 5) throw err;
      }
    }
    // The rename itself is durable once the folder is synced.
    const dir = await open(path.dirname(file), "r");
    await dir.sync().finally(() => dir.close());
  }

  async get(key: string, range?: ByteRange): Promise<ObjectBody | null> {
    let handle: FileHandle;
    try {
      // The open file is the version read, whatever puts or deletes come after.
      handle = await open(this.#file(key), "r");
    } catch (err) {
      if (isCode(err, "ENOENT", "ENOTDIR")) return null;
      throw err;
    }
    try {
      const totalSize = (await handle.stat()).size;
      if (totalSize === 0 && !range) {
        await handle.close();
        return { body: Readable.from([]), size: 0, totalSize };
      }
      const { start, end } = range ? resolveRange(range, totalSize) : { start: 0, end: totalSize - 1 };
      return { body: handle.createReadStream({ start, end, autoClose: true }), size: end - start + 1, totalSize };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  async head(key: string): Promise<ObjectInfo | null> {
    try {
      const s = await stat(this.#file(key));
      return { size: s.size, modified: s.mtime };
    } catch (err) {
      if (isCode(err, "ENOENT", "ENOTDIR")) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    const file = this.#file(key);
    try {
      await unlink(file);
    } catch (err) {
      if (isCode(err, "ENOENT", "ENOTDIR")) return;
      throw err;
    }
    // Empty folders left behind go too (a concurrent put makes its folder again, see #publish).
    for (let dir = path.dirname(file); dir !== this.#root; dir = path.dirname(dir)) {
      try {
        await rmdir(dir);
      } catch {
        break;
      }
    }
  }

  async *list(prefix: string): AsyncIterable<ListedObject> {
    checkPrefix(prefix);
    // Walk from the deepest folder the prefix names; keys are filtered by the whole prefix.
    const base = prefix.includes("/") ? prefix.slice(0, prefix.lastIndexOf("/") + 1) : "";
    yield* this.#walk(base, prefix);
  }

  /** Objects under the folder of keys starting with `at`, in byte order of their keys. */
  async *#walk(at: string, prefix: string): AsyncGenerator<ListedObject> {
    let entries: Dirent[];
    try {
      entries = await readdir(path.join(this.#root, at), { withFileTypes: true });
    } catch (err) {
      if (isCode(err, "ENOENT", "ENOTDIR")) return;
      throw err;
    }
    // A folder sorts as "<name>/", an object as its key: then a depth-first walk yields keys in S3's order ("a-b" < "a/b").
    const named = entries
      .filter((e) => !e.name.startsWith("."))
      .flatMap((e) => {
        if (e.isDirectory()) return [{ name: `${at}${e.name}/`, dir: true }];
        if (e.isFile() && e.name.endsWith(SUFFIX)) return [{ name: `${at}${e.name.slice(0, -SUFFIX.length)}`, dir: false }];
        return [];
      })
      .sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
    for (const { name, dir } of named) {
      if (dir) {
        if (name.startsWith(prefix) || prefix.startsWith(name)) yield* this.#walk(name, prefix);
      } else if (name.startsWith(prefix)) {
        const s = await stat(path.join(this.#root, `${name}${SUFFIX}`)).catch(() => null);
        if (s) yield { key: name, size: s.size, modified: s.mtime };
      }
    }
  }

  /** Nothing held open between calls. */
  close(): void {}

  /** Makes the folder, proves it writable and clears temp files a crash left. */
  async check(): Promise<void> {
    const tempDir = path.join(this.#root, TEMP_DIR);
    try {
      await mkdir(tempDir, { recursive: true });
      const probe = path.join(tempDir, `check-${randomBytes(6).toString("hex")}`);
      const h = await open(probe, "wx", 0o600);
      await h.close();
      await unlink(probe);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      throw new ObjectStoreUnavailableError(`object store: the directory ${this.#root} (CODEPLANE_OBJECT_STORE_DIR) is not writable (${code})`, { cause: err });
    }
    const now = Date.now();
    for (const name of await readdir(tempDir)) {
      const p = path.join(tempDir, name);
      const s = await stat(p).catch(() => null);
      if (s && now - s.mtimeMs > STALE_TEMP_MS) await unlink(p).catch(() => undefined);
    }
  }
}
