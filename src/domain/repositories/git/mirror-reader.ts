import { readFile } from "node:fs/promises";
import { isUtf8 } from "node:buffer";
import { join } from "node:path";
import { badRequest, type DomainError, notFound } from "../../errors.ts";
import { normalizeRepoPath, validateRef, type Loc } from "./paths.ts";
import type { RunGitResult } from "./run.ts";
import type { GitEntryType, GitFile, GitRef, GitRefs, GitTree, GitTreeEntry } from "../git-port.ts";

/** What reading needs from the mirror cache (MirrorCache provides it). */
export interface MirrorAccess {
  /** Where the mirror of `repoKey` lives; throws on a key that is not a plain identifier. */
  mirrorPath(repoKey: string): string;
  /** Makes sure the mirror exists and is fresh; `force` fetches even when it is. */
  sync(repoKey: string, url: string, opts?: { force?: boolean }): Promise<void>;
  /** Milliseconds since a fetch of `repoKey` last finished, successful or not. */
  sinceLastFetch(repoKey: string): number;
  /** Runs a local git command in the mirror at `dir`. */
  exec(dir: string, args: string[], opts?: { input?: string; maxStdout?: number }): Promise<RunGitResult>;
  /** Runs a local read command and returns stdout, or throws. */
  read(dir: string, args: string[], input?: string): Promise<Buffer>;
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

  constructor(mirrors: MirrorAccess, opts: MirrorReaderOptions) {
    this.#mirrors = mirrors;
    this.#opts = opts;
  }

  async listRefs(repoKey: string, url: string): Promise<GitRefs> {
    const dir = this.#mirrors.mirrorPath(repoKey);
    await this.#mirrors.sync(repoKey, url);
    const out = await this.#mirrors.read(dir, ["for-each-ref", FOR_EACH_REF_FORMAT, "refs/heads", "refs/tags"]);
    const { branches, tags, nested } = parseForEachRef(out.toString("utf8"));
    if (nested.length > 0) {
      const peeled = await this.#batchCheck(dir, nested.map((n) => `refs/tags/${n}^{commit}`));
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
  async resolveCommit(repoKey: string, url: string, ref: string, refLoc: Loc = ["query", "ref"]): Promise<string> {
    validateRef(ref, refLoc);
    const dir = this.#mirrors.mirrorPath(repoKey);
    await this.#mirrors.sync(repoKey, url);
    const found = await this.#revParse(dir, ref);
    if (found) return found;

    const minInterval = this.#opts.missRefreshMinIntervalMs ?? 5000;
    if (this.#mirrors.sinceLastFetch(repoKey) >= minInterval) {
      await this.#mirrors.sync(repoKey, url, { force: true });
      const retry = await this.#revParse(dir, ref);
      if (retry) return retry;
    }
    throw notFound(`Ref '${ref}'`);
  }

  /** Lists a directory; the root is "". Directories first, then by name. */
  async listTree(repoKey: string, url: string, ref: string, path: string): Promise<GitTree> {
    const norm = normalizeRepoPath(path, ["query", "path"]);
    const commit = await this.resolveCommit(repoKey, url, ref);
    const dir = this.#mirrors.mirrorPath(repoKey);
    // The trailing slash lists the directory's children; a file or a missing
    // path lists nothing, and both are "no such directory" to the caller.
    const args = ["ls-tree", "-z", "-l", commit, "--"];
    if (norm !== "") args.push(`${norm}/`);
    const out = await this.#mirrors.read(dir, args);

    const entries = parseLsTree(out.toString("utf8"), norm === "" ? "" : `${norm}/`);
    if (entries.length === 0 && norm !== "") throw notFound(`Directory '${norm}'`);
    entries.sort((a, b) => (a.type === "dir") !== (b.type === "dir") ? (a.type === "dir" ? -1 : 1) : compare(a.name, b.name));
    return { commit_hash: commit, path: norm, entries };
  }

  /**
   * Reads a file (a symlink reads as its target). Content is UTF-8 text when
   * it is valid UTF-8 without NUL bytes, base64 otherwise, and at most
   * maxFileBytes long (cut on a character boundary for text).
   */
  async readFile(repoKey: string, url: string, ref: string, path: string): Promise<GitFile> {
    const norm = normalizeRepoPath(path, ["path", "path"]);
    if (norm === "") throw badRequest("The repository root is a directory");
    const commit = await this.resolveCommit(repoKey, url, ref);
    const dir = this.#mirrors.mirrorPath(repoKey);
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

/**
 * The entries of `ls-tree -z -l` output under `prefix` ("" for the root,
 * else the directory path with a trailing slash), in git's order.
 */
export function parseLsTree(out: string, prefix: string): GitTreeEntry[] {
  const entries: GitTreeEntry[] = [];
  for (const record of out.split("\0")) {
    if (record === "") continue;
    const tab = record.indexOf("\t");
    const [mode, , , size] = record.slice(0, tab).split(/ +/) as [string, string, string, string];
    const entryPath = record.slice(tab + 1);
    // For a submodule, "<path>/" matches the gitlink itself, not children.
    if (!entryPath.startsWith(prefix) || entryPath.length === prefix.length) continue;
    const type = entryType(mode);
    entries.push({
      name: entryPath.slice(entryPath.lastIndexOf("/") + 1),
      path: entryPath,
      type,
      size: type === "dir" || type === "submodule" ? null : Number(size),
    });
  }
  return entries;
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
