import type { GitFile, GitRefs, GitSource, GitTree } from "../git-port.ts";
import { MirrorCache, type GitAuth, type MirrorCacheOptions } from "./mirror-cache.ts";
import { MirrorReader, type MirrorReaderOptions } from "./mirror-reader.ts";
import type { Loc } from "./paths.ts";

export type { GitEntryType, GitFile, GitRef, GitRefs, GitTree, GitTreeEntry } from "../git-port.ts";
export type { GitAuth } from "./mirror-cache.ts";

export type GitMirrorsOptions = MirrorCacheOptions & MirrorReaderOptions;

/**
 * A cache of bare mirrors, one per repository, driven by the git CLI.
 * Mirrors are fetched on first use and refreshed when stale (MirrorCache);
 * reads go straight to the object database (ls-tree, cat-file), never a
 * checkout (MirrorReader).
 */
export class GitMirrors implements GitSource {
  readonly #cache: MirrorCache;
  readonly #reader: MirrorReader;

  constructor(opts: GitMirrorsOptions) {
    this.#cache = new MirrorCache(opts);
    this.#reader = new MirrorReader(this.#cache, {
      maxFileBytes: opts.maxFileBytes,
      missRefreshMinIntervalMs: opts.missRefreshMinIntervalMs,
    });
  }

  /** Where the mirror of `repoKey` lives. */
  mirrorPath(repoKey: string): string {
    return this.#cache.mirrorPath(repoKey);
  }

  /** See MirrorCache.sync: shared fetches, and the previous fetch served when a refresh fails. */
  sync(repoKey: string, url: string, opts: { force?: boolean; auth?: GitAuth } = {}): Promise<void> {
    return this.#cache.sync(repoKey, url, opts);
  }

  listRefs(repoKey: string, url: string): Promise<GitRefs> {
    return this.#reader.listRefs(repoKey, url);
  }

  resolveCommit(repoKey: string, url: string, ref: string, refLoc?: Loc): Promise<string> {
    return this.#reader.resolveCommit(repoKey, url, ref, refLoc);
  }

  listTree(repoKey: string, url: string, ref: string, path: string): Promise<GitTree> {
    return this.#reader.listTree(repoKey, url, ref, path);
  }

  readFile(repoKey: string, url: string, ref: string, path: string): Promise<GitFile> {
    return this.#reader.readFile(repoKey, url, ref, path);
  }

  /** Deletes the mirror (after any fetch in progress). */
  remove(repoKey: string): Promise<void> {
    return this.#cache.remove(repoKey);
  }
}
