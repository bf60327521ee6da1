import type { GitCommit, GitFile, GitRefs, GitRepository, GitSource, GitTree, TreePageRequest } from "../git-port.ts";
import { CheckoutServer } from "./checkout-server.ts";
import { MirrorCache, type GitAuth, type MirrorCacheOptions } from "./mirror-cache.ts";
import { MirrorReader, type MirrorReaderOptions } from "./mirror-reader.ts";
import type { Loc } from "../repo-path.ts";

export type { GitEntryType, GitFile, GitRef, GitRefs, GitRepository, GitTree, GitTreeEntry, TreePageRequest } from "../git-port.ts";
export type { GitAuth } from "./mirror-cache.ts";

export type GitMirrorsOptions = MirrorCacheOptions &
  MirrorReaderOptions & {
    /** `git upload-pack` processes serving checkouts at once. Default 8. */
    maxConcurrentUploads?: number;
  };

/**
 * A cache of bare mirrors, one per repository, driven by the git CLI.
 * Mirrors are fetched on first use and refreshed when stale (MirrorCache),
 * in fetch slots shared fairly between accounts (FetchSlots); reads go
 * straight to the object database (ls-tree, cat-file), never a checkout
 * (MirrorReader).
 */
export class GitMirrors implements GitSource {
  readonly #cache: MirrorCache;
  readonly #reader: MirrorReader;
  /** Serves single commits to workloads' checkouts (the /git/ endpoint). */
  readonly checkouts: CheckoutServer;

  constructor(opts: GitMirrorsOptions) {
    this.#cache = new MirrorCache(opts);
    this.#reader = new MirrorReader(this.#cache, {
      maxFileBytes: opts.maxFileBytes,
      missRefreshMinIntervalMs: opts.missRefreshMinIntervalMs,
      readCacheEntries: opts.readCacheEntries,
    });
    this.checkouts = new CheckoutServer(this.#cache, this.#reader, {
      maxConcurrentUploads: opts.maxConcurrentUploads ?? 8,
      queueWaitMs: opts.fetchQueueWaitMs ?? 10_000,
      idleTimeoutMs: opts.commandTimeoutMs,
      logger: opts.logger,
    });
  }

  /** Where the mirror of the repository with this id lives. */
  mirrorPath(repoId: string): string {
    return this.#cache.mirrorPath(repoId);
  }

  /**
   * See MirrorCache.sync: shared fetches, fair fetch slots, the previous fetch
   * served when a refresh fails. A URL the policy refuses is a
   * DomainValidationError here (what registration wants); reads turn it into
   * a conflict.
   */
  sync(repo: GitRepository, opts: { force?: boolean; auth?: GitAuth } = {}): Promise<void> {
    return this.#cache.sync(repo, opts);
  }

  listRefs(repo: GitRepository): Promise<GitRefs> {
    return this.#reader.listRefs(repo);
  }

  resolveCommit(repo: GitRepository, ref: string, refLoc?: Loc): Promise<string> {
    return this.#reader.resolveCommit(repo, ref, refLoc);
  }

  fetchCommit(repo: GitRepository, commit: string): Promise<string> {
    return this.#reader.fetchCommit(repo, commit);
  }

  listTree(repo: GitRepository, ref: string, path: string, page: TreePageRequest): Promise<GitTree> {
    return this.#reader.listTree(repo, ref, path, page);
  }

  readFile(repo: GitRepository, ref: string, path: string): Promise<GitFile> {
    return this.#reader.readFile(repo, ref, path);
  }

  readCommit(repo: GitRepository, ref: string): Promise<GitCommit> {
    return this.#reader.readCommit(repo, ref);
  }

  /** Deletes the mirror (after any fetch in progress) and the checkout views made from it. */
  async remove(repoId: string): Promise<void> {
    await this.#cache.remove(repoId);
    this.#reader.forget(repoId);
    await this.checkouts.remove(repoId);
  }
}
