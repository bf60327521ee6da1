import { lstatSync, openSync, readdirSync, readSync, closeSync, type Dirent } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";

// The repository as the analyzer sees it: regular files only, found by a walk
// that never follows a symlink (so a symlink loop or a link to /etc is just a
// counted skip), with limits on depth, file count and bytes read so that a
// hostile or enormous repository costs bounded time and memory.

export interface RepoFile {
  /** Repository-relative, "/"-separated. */
  path: string;
  size: number;
  executable: boolean;
}

export interface WalkLimits {
  maxFiles: number;
  maxDepth: number;
  /** Files larger than this are listed but never read. */
  maxFileBytes: number;
  /** Total bytes all reads may return; past it readText returns null. */
  maxTotalReadBytes: number;
}

export const DEFAULT_LIMITS: WalkLimits = {
  maxFiles: 100_000,
  maxDepth: 48,
  maxFileBytes: 2 * 1024 * 1024,
  maxTotalReadBytes: 1024 * 1024 * 1024,
};

/** Folders that hold dependencies, caches or build output rather than the project's own code. */
export const SKIPPED_DIRS = new Set([
  ".git",
  ".hg",
  ".svn",
  "node_modules",
  ".venv",
  "venv",
  "env",
  "__pycache__",
  ".tox",
  ".nox",
  ".mypy_cache",
  ".pytest_cache",
  ".ruff_cache",
  "site-packages",
  ".ipynb_checkpoints",
  ".next",
  ".nuxt",
  ".cache",
  "bower_components",
  "vendor",
  "target",
  "dist",
  "build",
  "coverage",
]);

export interface WalkResult {
  files: RepoFile[];
  symlinks: number;
  /** A limit cut the walk short: some files were never listed. */
  truncated: boolean;
}

export function walk(root: string, limits: WalkLimits = DEFAULT_LIMITS): WalkResult {
  const files: RepoFile[] = [];
  let symlinks = 0;
  let truncated = false;
  // The file limit ends the walk; the depth limit only skips the too-deep folder.
  let full = false;
  const visit = (rel: string, depth: number) => {
    if (full) return;
    if (depth > limits.maxDepth) {
      truncated = true;
      return;
    }
    let entries: Dirent[];
    try {
      entries = readdirSync(rel === "" ? root : join(root, rel), { withFileTypes: true });
    } catch {
      return; // unreadable folder: skip it rather than fail the analysis
    }
    // Sorted, so results (and which files a limit cuts off) are deterministic.
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const path = rel === "" ? e.name : `${rel}/${e.name}`;
      if (e.isSymbolicLink()) {
        symlinks += 1;
        continue;
      }
      if (e.isDirectory()) {
        if (!SKIPPED_DIRS.has(e.name)) visit(path, depth + 1);
        if (full) return;
        continue;
      }
      if (!e.isFile()) continue;
      if (files.length >= limits.maxFiles) {
        truncated = full = true;
        return;
      }
      let size: number;
      let executable: boolean;
      try {
        const st = lstatSync(join(root, path));
        size = st.size;
        executable = (st.mode & 0o111) !== 0;
      } catch {
        continue;
      }
      files.push({ path, size, executable });
    }
  };
  visit("", 0);
  return { files, symlinks, truncated };
}

export interface Refusals {
  binary: string[];
  too_large: string[];
}

/** Reads files within the limits and tells text from binary; counts what it refused. */
export class FileReader {
  readonly #root: string;
  readonly #limits: WalkLimits;
  #readBytes = 0;
  readonly skipped = { binary: 0, too_large: 0 };
  #refused = new Set<string>();
  #binary = new Set<string>();
  budgetExhausted = false;

  constructor(root: string, limits: WalkLimits = DEFAULT_LIMITS) {
    this.#root = root;
    this.#limits = limits;
  }

  /** The file as UTF-8 text, or null when it is binary, too large, unreadable or past the read budget. */
  readText(file: RepoFile): string | null {
    if (file.size > this.#limits.maxFileBytes) {
      this.#refuse(file, "too_large");
      return null;
    }
    if (this.#readBytes + file.size > this.#limits.maxTotalReadBytes) {
      this.budgetExhausted = true;
      return null;
    }
    let buf: Buffer;
    try {
      buf = readCapped(join(this.#root, file.path), this.#limits.maxFileBytes);
    } catch {
      return null;
    }
    this.#readBytes += buf.length;
    if (isBinary(buf)) {
      this.#refuse(file, "binary");
      return null;
    }
    return buf.toString("utf8");
  }

  /**
   * Hex SHA-256 of the file's bytes, read in chunks through the shared buffer
   * (so a lockfile larger than maxFileBytes costs no more memory than a small
   * one); null past maxHashBytes, when unreadable, or past the read budget.
   */
  sha256(file: RepoFile, maxHashBytes = MAX_HASH_BYTES): string | null {
    if (file.size > maxHashBytes) return null;
    if (this.#readBytes + file.size > this.#limits.maxTotalReadBytes) {
      this.budgetExhausted = true;
      return null;
    }
    try {
      const { hex, bytes } = hashCapped(join(this.#root, file.path), maxHashBytes);
      this.#readBytes += bytes;
      return hex;
    } catch {
      return null;
    }
  }

  isBinary(path: string): boolean {
    return this.#binary.has(path);
  }

  /** What this reader refused, by path, so another reader (in another thread) can take it over. */
  refusals(): Refusals {
    const binary = [...this.#binary];
    return { binary, too_large: [...this.#refused].filter((p) => !this.#binary.has(p)) };
  }

  /** Counts another reader's refusals as this one's, once per file. */
  absorb(r: Refusals): void {
    for (const path of r.binary) this.#refuse({ path }, "binary");
    for (const path of r.too_large) this.#refuse({ path }, "too_large");
  }

  #refuse(file: Pick<RepoFile, "path">, why: "binary" | "too_large") {
    if (why === "binary") this.#binary.add(file.path);
    if (this.#refused.has(file.path)) return;
    this.#refused.add(file.path);
    this.skipped[why] += 1;
  }
}

// One buffer for every read, grown to the largest file read (at most the
// per-file limit): reading a file allocates nothing outside the JS heap but the
// string it becomes. A fresh buffer per read (and a copy to trim it) left tens
// of MiB of dead buffers between collections on a repository of many files.
let scratch = Buffer.allocUnsafeSlow(64 * 1024);

// Reads at most max bytes even if the file grew after it was listed. The bytes
// are in the returned view of the shared buffer until the next read.
function readCapped(path: string, max: number): Buffer {
  const fd = openSync(path, "r");
  try {
    let total = 0;
    for (;;) {
      if (total === scratch.length) {
        if (total >= max) break;
        const bigger = Buffer.allocUnsafeSlow(Math.min(max, scratch.length * 2));
        scratch.copy(bigger, 0, 0, total);
        scratch = bigger;
      }
      const n = readSync(fd, scratch, total, Math.min(scratch.length, max) - total, null);
      if (n === 0) break;
      total += n;
      if (total >= max) break;
    }
    return scratch.subarray(0, total);
  } finally {
    closeSync(fd);
  }
}

/** Lockfiles larger than this are not hashed (the environment notes it): 64 MiB, far above any real lockfile. */
export const MAX_HASH_BYTES = 64 * 1024 * 1024;

function hashCapped(path: string, max: number): { hex: string; bytes: number } {
  const fd = openSync(path, "r");
  try {
    const hash = createHash("sha256");
    let total = 0;
    for (;;) {
      const n = readSync(fd, scratch, 0, scratch.length, null);
      if (n === 0) break;
      total += n;
      // The file grew past the cap after it was listed: refuse rather than hash a part of it.
      if (total > max) throw new Error("too large");
      hash.update(scratch.subarray(0, n));
    }
    return { hex: hash.digest("hex"), bytes: total };
  } finally {
    closeSync(fd);
  }
}

/** Git's own rule: a NUL byte in the first 8000 bytes makes a file binary. */
export function isBinary(buf: Uint8Array): boolean {
  const n = Math.min(buf.length, 8000);
  for (let i = 0; i < n; i++) if (buf[i] === 0) return true;
  return false;
}

export function countLines(text: string): number {
  if (text === "") return 0;
  let n = 0;
  let i = -1;
  while ((i = text.indexOf("\n", i + 1)) !== -1) n++;
  return text.endsWith("\n") ? n : n + 1;
}
