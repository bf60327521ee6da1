import { readFile } from "node:fs/promises";
import { isUtf8 } from "node:buffer";
import { join } from "node:path";
import { badRequest, DomainError, DomainValidationError, notFound, unavailable } from "../../errors.ts";
import { GitRemoteError } from "./errors.ts";
import { normalizeRepoPath, validateRef, type Loc } from "../repo-path.ts";
import type { RunGitResult } from "./run.ts";
import { ReadCache } from "./read-cache.ts";
import { decodeTreeCursor, encodeTreeCursor, TREE_PAGE_MAX, type TreeCursor } from "./tree-cursor.ts";
import { COMMIT_INFO_ARGS, COMMIT_INFO_MAX_BYTES, parseCommitInfo } from "./commit-info.ts";
import type { GitCommit, GitEntryType, GitFile, GitRef, GitRefs, GitRepository, GitTree, GitTreeEntry, TreePageRequest } from "../git-port.ts";

/** What reading needs from the mirror cache (MirrorCache provides it). */
export interface MirrorAccess {
  /** Where the mirror of `repoKey` lives; throws on a key that is not a plain identifier. */
  mirrorPath(repoKey: string): string;
  /** Makes sure the mirror exists, is fresh and is still allowed; `force` fetches even when it is fresh. */
  sync(repo: GitRepository, opts?: { force?: boolean }): Promise<void>;
  /** Milliseconds since a fetch of `repoKey` last finished, successful or not. */
  sinceLastFetch(repoKey: string): number;
  /** Changes whenever a fetch of `repoKey` finishes or its mirror is removed; refs change only then. Absent: refs are not cached. */
  fetchStamp?(repoKey: string): number;
  /** Runs a local git command in the mirror at `dir`. */
  exec(dir: string, args: string[], opts?: { input?: string; maxStdout?: number }): Promise<RunGitResult>;
  /** Runs a local read command and returns stdout, or throws. */
  read(dir: string, args: string[], input?: string): Promise<Buffer>;
  /** Runs a local read command and streams its NUL-terminated records; false from onRecord stops early. */
  scan(dir: string, args: string[], onRecord: (record: Buffer) => boolean | void): Promise<void>;
  /** The error for a failed read (the details go to the log). */
  readFailure(res: RunGitResult, args: string[]): DomainError;
}

export interface MirrorReaderOptions {
  /** readFile returns at most this many bytes of content. */
  maxFileBytes: number;
  /**
   * An unknown ref makes one forced fetch (it may have just been pushed),
   * but not more often than this per repository, so requests for nonsense
   * refs cannot turn into a stream of fetches. Default 5000.
   */
  missRefreshMinIntervalMs?: number;
  /** Tree pages and resolved refs kept in memory (read-cache.ts), each. Default 2000; 0: none. */
  readCacheEntries?: number;
}

const OID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/**
 * Reads refs, trees and files out of the mirrors. Every read first makes sure
 * the mirror is fresh, then goes straight to the object database (ls-tree,
 * cat-file), never a checkout.
 */
export class MirrorReader {
  readonly #mirrors: MirrorAccess;
  readonly #opts: MirrorReaderOptions;
  readonly #cache: ReadCache;

  constructor(mirrors: MirrorAccess, opts: MirrorReaderOptions) {
    this.#mirrors = mirrors;
    this.#opts = opts;
    this.#cache = new ReadCache(opts.readCacheEntries ?? 2000);
  }

  /** Drops what is cached of a mirror being removed. */
  forget(repoKey: string): void {
    this.#cache.forget(repoKey);
  }

  async listRefs(repo: GitRepository): Promise<GitRefs> {
    const dir = this.#mirrors.mirrorPath(repo.id);
    await this.#sync(repo);
    const out = await this.#mirrors.read(dir, ["for-each-ref", FOR_EACH_REF_FORMAT, "refs/heads", "refs/tags"]);
    const { branches, tags, nested } = parseForEachRef(out.toString("utf8"));
    if (nested.length > 0) {
      const peeled = await this.#batchCheck(
        dir,
        nested.map((n) => `refs/tags/${n}^{commit}`),
      );
      nested.forEach((name, i) => {
        const hit = peeled[i];
        if (hit) tags.push({ name, commit_hash: hit });
      });
      tags.sort((a, b) => compare(a.name, b.name));
    }
    const head = await this.#headBranch(dir);
    return { head: head !== null && branches.some((b) => b.name === head) ? head : null, branches, tags };
  }

  /**
   * Resolves a branch, tag, "HEAD", or full or abbreviated commit hash to a
   * 40-hex commit id. An unknown ref gets one forced refresh (rate-limited)
   * before it is reported as not found.
   */
  async resolveCommit(repo: GitRepository, ref: string, refLoc: Loc = ["query", "ref"]): Promise<string> {
    validateRef(ref, refLoc);
    const dir = this.#mirrors.mirrorPath(repo.id);
    await this.#sync(repo);
    // Read before rev-parse: a fetch finishing meanwhile changes it, and the entry is not used.
    const stamp = this.#mirrors.fetchStamp?.(repo.id);
    const cached = stamp === undefined ? null : this.#cache.commit(repo.id, ref, stamp);
    if (cached) return cached;
    const found = await this.#revParse(dir, ref);
    if (found) {
      if (stamp !== undefined) this.#cache.setCommit(repo.id, ref, stamp, found);
      return found;
    }

    const minInterval = this.#opts.missRefreshMinIntervalMs ?? 5000;
    if (this.#mirrors.sinceLastFetch(repo.id) >= minInterval) {
      await this.#sync(repo, { force: true });
      const retry = await this.#revParse(dir, ref);
      if (retry) return retry;
    }
    throw notFound(`Ref '${ref}'`);
  }

  /** See GitSource.fetchCommit: a forced fetch, not held back by the miss-refresh interval (the host says the commit exists). */
  async fetchCommit(repo: GitRepository, commit: string): Promise<string> {
    if (!/^[0-9a-f]{40}$/.test(commit)) throw notFound(`Commit '${commit}'`);
    const dir = this.#mirrors.mirrorPath(repo.id);
    await this.#sync(repo);
    const found = await this.#revParse(dir, commit);
    if (found) return found;
    await this.#sync(repo, { force: true });
    const fetched = await this.#revParse(dir, commit);
    if (fetched) return fetched;
    throw notFound(`Commit '${commit}' (not on the repository's branches or tags after a fetch)`);
  }

  /**
   * One page of a directory (the root is ""): directories first, then
   * everything else, each group in byte order of the name; at most
   * `page.limit` (capped at TREE_PAGE_MAX) entries, and a cursor to the rest.
   * A cursor continues at the commit the first page read, whatever `ref` says.
   *
   * The listing is streamed from git and never held whole: directories come
   * from `ls-tree -d` (git filters them), of which only the `limit + 1`
   * smallest after the cursor are kept; files come from `ls-tree` in git's
   * order, which for non-directories is byte order, so git is stopped as soon
   * as the page is full. Sizes are looked up for the page's entries only.
   */
  async listTree(repo: GitRepository, ref: string, path: string, page: TreePageRequest): Promise<GitTree> {
    const norm = normalizeRepoPath(path, ["query", "path"]);
    const limit = Math.min(Math.max(1, Math.floor(page.limit)), TREE_PAGE_MAX);
    let cursor: TreeCursor | null = null;
    if (page.cursor !== undefined) {
      cursor = decodeTreeCursor(page.cursor);
      if (!cursor) throw new DomainValidationError([{ loc: ["query", "cursor"], msg: "Invalid cursor", type: "value_error" }]);
    }
    const commit = await this.resolveCommit(repo, cursor ? cursor.commit : ref, cursor ? ["query", "cursor"] : ["query", "ref"]);
    // The page is a function of the commit, the path, the limit and the cursor's position.
    const pageKey = `${commit}\0${norm}\0${limit}\0${page.cursor ?? ""}`;
    const cached = this.#cache.tree(repo.id, pageKey);
    if (cached) return cached;
    const tree = await this.#readTree(repo, commit, norm, limit, cursor);
    this.#cache.setTree(repo.id, pageKey, tree);
    return tree;
  }

  async #readTree(repo: GitRepository, commit: string, norm: string, limit: number, cursor: TreeCursor | null): Promise<GitTree> {
    const dir = this.#mirrors.mirrorPath(repo.id);
    // The trailing slash lists the directory's children; a file or a missing
    // path lists nothing, and both are "no such directory" to the caller.
    const prefix = norm === "" ? "" : `${norm}/`;
    const pathArgs = prefix === "" ? [] : [prefix];
    const prefixBytes = Buffer.from(prefix, "utf8");
    const want = limit + 1; // one more than the page tells whether there is more
    const after = (kind: "d" | "f", name: Buffer) => !cursor || cursor.kind !== kind || Buffer.compare(name, cursor.name) > 0;

    const dirs: TreeRecord[] = [];
    if (!cursor || cursor.kind === "d") {
      await this.#mirrors.scan(dir, ["ls-tree", "-d", "-z", commit, "--", ...pathArgs], (record) => {
        const entry = parseTreeRecord(record, prefixBytes);
        if (entry?.type === "dir" && after("d", entry.name)) keepSmallest(dirs, entry, want);
      });
    }
    const files: TreeRecord[] = [];
    if (dirs.length < want) {
      const need = want - dirs.length;
      await this.#mirrors.scan(dir, ["ls-tree", "-z", commit, "--", ...pathArgs], (record) => {
        const entry = parseTreeRecord(record, prefixBytes);
        if (!entry || entry.type === "dir" || !after("f", entry.name)) return;
        files.push({ ...entry, name: Buffer.from(entry.name) });
        if (files.length >= need) return false;
      });
      // git's order, unless the tree object is malformed; the page is sorted either way.
      files.sort((a, b) => Buffer.compare(a.name, b.name));
    }

    const found = [...dirs, ...files];
    const kept = found.slice(0, limit);
    if (kept.length === 0 && norm !== "" && !(cursor && (await this.#isDirectory(dir, commit, norm)))) {
      throw notFound(`Directory '${norm}'`);
    }
    const sizes = await this.#blobSizes(
      dir,
      kept.filter((e) => e.type === "file" || e.type === "symlink").map((e) => e.oid),
    );
    const entries: GitTreeEntry[] = kept.map((e) => ({
      name: e.name.toString("utf8"),
      path: `${prefix}${e.name.toString("utf8")}`,
      type: e.type,
      size: e.type === "file" || e.type === "symlink" ? (sizes.get(e.oid) ?? null) : null,
    }));
    const last = kept[kept.length - 1];
    const next_cursor = found.length > limit && last ? encodeTreeCursor({ commit, kind: last.type === "dir" ? "d" : "f", name: last.name }) : null;
    return { commit_hash: commit, path: norm, entries, next_cursor };
  }

  /**
   * Reads a file (a symlink reads as its target). Content is UTF-8 text when
   * it is valid UTF-8 without NUL bytes, base64 otherwise, and at most
   * maxFileBytes long (cut on a character boundary for text).
   */
  async readFile(repo: GitRepository, ref: string, path: string): Promise<GitFile> {
    const norm = normalizeRepoPath(path, ["path", "path"]);
    if (norm === "") throw badRequest("The repository root is a directory");
    const commit = await this.resolveCommit(repo, ref);
    const dir = this.#mirrors.mirrorPath(repo.id);
    const max = this.#opts.maxFileBytes;
    // -z: NUL-terminated input, so nothing in a path can end the query early.
    const res = await this.#mirrors.exec(dir, ["cat-file", "--batch", "-z"], { input: `${commit}:${norm}\0`, maxStdout: max + 256 });
    if (res.timedOut || (!res.limited && res.code !== 0)) throw this.#mirrors.readFailure(res, ["cat-file"]);

    const nl = res.stdout.indexOf(0x0a);
    const header = (nl < 0 ? res.stdout : res.stdout.subarray(0, nl)).toString("utf8");
    const m = /^([0-9a-f]{40,64}) (\w+) (\d+)$/.exec(header);
    if (!m) throw notFound(`File '${norm}'`); // "<input> missing" (or a submodule, whose commit is not here)
    const [, , type, sizeText] = m as unknown as [string, string, string, string];
    if (type === "tree") throw badRequest(`'${norm}' is a directory`);
    if (type !== "blob") throw notFound(`File '${norm}'`);

    const size = Number(sizeText);
    const body = res.stdout.subarray(nl + 1, nl + 1 + Math.min(size, max));
    const truncated = size > max;
    return { commit_hash: commit, path: norm, size, ...blobContent(body, truncated), truncated };
  }

  /** The commit `ref` names (a branch, tag or hash): message, author, committer, parents (commit-info.ts). */
  async readCommit(repo: GitRepository, ref: string): Promise<GitCommit> {
    const commit = await this.resolveCommit(repo, ref);
    const dir = this.#mirrors.mirrorPath(repo.id);
    const args = [...COMMIT_INFO_ARGS, commit];
    // A message longer than what is read is cut (limited), not a failure.
    const res = await this.#mirrors.exec(dir, args, { maxStdout: COMMIT_INFO_MAX_BYTES });
    if (res.timedOut || (!res.limited && res.code !== 0)) throw this.#mirrors.readFailure(res, ["show"]);
    const info = parseCommitInfo(res.stdout.subarray(0, utf8Boundary(res.stdout)).toString("utf8"));
    if (!info) throw unavailable("Reading the repository failed");
    return info;
  }

  /**
   * The mirror cache's sync, for reads of a registered repository: a URL the
   * clone URL policy refuses (now) is a conflict with the repository's state,
   * not a validation error of the request (there is no `url` in it).
   */
  async #sync(repo: GitRepository, opts?: { force?: boolean }): Promise<void> {
    try {
      await this.#mirrors.sync(repo, opts);
    } catch (err) {
      throw refusedForReads(err) ?? err;
    }
  }

  async #isDirectory(dir: string, commit: string, path: string): Promise<boolean> {
    const res = await this.#mirrors.exec(dir, ["cat-file", "--batch-check=%(objecttype)", "-z"], { input: `${commit}:${path}\0` });
    if (res.timedOut || res.code !== 0) throw this.#mirrors.readFailure(res, ["cat-file"]);
    return res.stdout.toString("utf8").trim() === "tree";
  }

  /** Sizes of blobs by object id (one cat-file for the lot). */
  async #blobSizes(dir: string, oids: string[]): Promise<Map<string, number>> {
    const sizes = new Map<string, number>();
    if (oids.length === 0) return sizes;
    const out = await this.#mirrors.read(dir, ["cat-file", "--batch-check=%(objectname) %(objectsize)", "-z"], oids.map((o) => `${o}\0`).join(""));
    for (const line of out.toString("utf8").split("\n")) {
      const m = /^([0-9a-f]{40,64}) (\d+)$/.exec(line);
      if (m) sizes.set(m[1]!, Number(m[2]));
    }
    for (const oid of oids) if (!sizes.has(oid)) throw unavailable("Reading the repository failed");
    return sizes;
  }

  async #revParse(dir: string, ref: string): Promise<string | null> {
    const res = await this.#mirrors.exec(dir, ["rev-parse", "--verify", "--quiet", "--end-of-options", `${ref}^{commit}`]);
    if (res.timedOut) throw this.#mirrors.readFailure(res, ["rev-parse"]);
    const out = res.stdout.toString("utf8").trim();
    return res.code === 0 && OID.test(out) ? out : null;
  }

  /** `cat-file --batch-check` for several expressions at once: the object id of each, or null. */
  async #batchCheck(dir: string, exprs: string[]): Promise<(string | null)[]> {
    const out = await this.#mirrors.read(dir, ["cat-file", "--batch-check=%(objectname)", "-z"], exprs.map((e) => `${e}\0`).join(""));
    const lines = out.toString("utf8").split("\n");
    return exprs.map((_, i) => {
      const line = lines[i] ?? "";
      return OID.test(line) ? line : null;
    });
  }

  async #headBranch(dir: string): Promise<string | null> {
    try {
      const head = (await readFile(join(dir, "HEAD"), "utf8")).trim();
      return head.startsWith("ref: refs/heads/") ? head.slice("ref: refs/heads/".length) : null;
    } catch {
      return null;
    }
  }
}

// --- parsing git's output ---------------------------------------------------

/** The for-each-ref format parseForEachRef reads. */
export const FOR_EACH_REF_FORMAT = "--format=%(refname)%00%(objectname)%00%(objecttype)%00%(*objectname)%00%(*objecttype)";

/**
 * Branches and tags from `for-each-ref` output (FOR_EACH_REF_FORMAT, refs/heads
 * and refs/tags), in git's order. `nested` names tags whose commit is more than
 * one peel away; they are not in `tags` yet.
 */
export function parseForEachRef(out: string): { branches: GitRef[]; tags: GitRef[]; nested: string[] } {
  const branches: GitRef[] = [];
  const tags: GitRef[] = [];
  const nested: string[] = [];
  for (const line of out.split("\n")) {
    if (line === "") continue;
    const [ref, oid, type, peeledOid, peeledType] = line.split("\0") as [string, string, string, string, string];
    if (ref.startsWith("refs/heads/")) {
      if (type === "commit") branches.push({ name: ref.slice("refs/heads/".length), commit_hash: oid });
      continue;
    }
    const name = ref.slice("refs/tags/".length);
    if (type === "commit") tags.push({ name, commit_hash: oid });
    else if (type === "tag" && peeledType === "commit") tags.push({ name, commit_hash: peeledOid });
    else if (type === "tag" && peeledType === "tag") nested.push(name); // a tag of a tag: rare, listRefs peels it fully
    // Tags of trees and blobs have no commit to report; they are left out.
  }
  return { branches, tags, nested };
}

/** One entry of `ls-tree -z` output, with the name as git stores it. */
export interface TreeRecord {
  /** The name's bytes (no directory part). */
  name: Buffer;
  type: GitEntryType;
  oid: string;
}

/**
 * One record of `ls-tree -z` (default format, "<mode> <type> <oid>\t<path>")
 * when it is a child of `prefix` ("" for the root, else the directory path
 * with a trailing slash); null otherwise.
 */
export function parseTreeRecord(record: Buffer, prefix: Buffer): TreeRecord | null {
  const tab = record.indexOf(0x09);
  if (tab < 0) return null;
  const [mode = "", , oid = ""] = record.subarray(0, tab).toString("latin1").split(" ");
  const path = record.subarray(tab + 1);
  const p = prefix;
  // For a submodule, "<path>/" matches the gitlink itself, not children.
  if (path.length <= p.length || !path.subarray(0, p.length).equals(p)) return null;
  const name = path.subarray(p.length);
  if (name.includes(0x2f)) return null;
  return { name, type: entryType(mode), oid };
}

/** Inserts `entry` into `sorted` (by name bytes) and keeps only the `max` smallest. */
export function keepSmallest(sorted: TreeRecord[], entry: TreeRecord, max: number): void {
  if (sorted.length >= max && Buffer.compare(entry.name, sorted[sorted.length - 1]!.name) >= 0) return;
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (Buffer.compare(sorted[mid]!.name, entry.name) < 0) lo = mid + 1;
    else hi = mid;
  }
  // A record is only valid during the scan callback: keep copies.
  sorted.splice(lo, 0, { ...entry, name: Buffer.from(entry.name) });
  if (sorted.length > max) sorted.pop();
}

/** A read's policy refusal as the conflict it is for a registered repository; null for any other error. */
export function refusedForReads(err: unknown): DomainError | null {
  let reason: string | null = null;
  if (err instanceof DomainValidationError && err.issues.some((i) => i.loc.join(".") === "body.url")) reason = err.issues[0]!.msg;
  else if (err instanceof GitRemoteError && err.reason === "refused") reason = err.message;
  if (reason === null) return null;
  return new DomainError("conflict", `This repository's clone URL is not allowed by the server's clone URL policy: ${reason}`, { cause: err });
}

/**
 * A blob's (possibly truncated) bytes as the API returns them: UTF-8 text
 * when valid UTF-8 without NUL bytes, base64 otherwise. A truncated text is
 * cut back to a character boundary; base64 keeps every byte.
 */
export function blobContent(body: Buffer, truncated: boolean): Pick<GitFile, "encoding" | "content"> {
  const text = truncated ? body.subarray(0, utf8Boundary(body)) : body;
  if (!text.includes(0) && isUtf8(text)) return { encoding: "utf-8", content: text.toString("utf8") };
  return { encoding: "base64", content: body.toString("base64") };
}

export function entryType(mode: string): GitEntryType {
  if (mode === "040000") return "dir";
  if (mode === "120000") return "symlink";
  if (mode === "160000") return "submodule";
  return "file";
}

/** Code-unit order: stable and locale-independent, like git's own. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The longest prefix of `buf` that does not end inside a UTF-8 sequence. */
export function utf8Boundary(buf: Buffer): number {
  const end = buf.length;
  // Walk back over at most three continuation bytes to the lead byte of the last character.
  for (let i = end - 1; i >= 0 && i >= end - 4; i--) {
    const b = buf[i]!;
    if ((b & 0xc0) === 0x80) continue;
    const need = b < 0x80 ? 1 : (b & 0xe0) === 0xc0 ? 2 : (b & 0xf0) === 0xe0 ? 3 : (b & 0xf8) === 0xf0 ? 4 : 1;
    return i + need <= end ? end : i;
  }
  return end;
}
