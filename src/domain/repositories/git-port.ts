// What the repository service needs from git. The implementation (a cache of
// bare mirrors driven by the git CLI) lives in ./git; tests and other
// providers can stand in behind this interface.

export interface GitRef {
  name: string;
  commit_hash: string;
}

export interface GitRefs {
  /** Branch the remote's HEAD pointed at when the mirror was cloned, if it still exists. */
  head: string | null;
  branches: GitRef[];
  tags: GitRef[];
}

export type GitEntryType = "file" | "dir" | "symlink" | "submodule";

export interface GitTreeEntry {
  name: string;
  path: string;
  type: GitEntryType;
  /** Bytes for files and symlinks; null for directories and submodules. */
  size: number | null;
}

export interface GitTree {
  commit_hash: string;
  path: string;
  entries: GitTreeEntry[];
  /** Opaque; lists the rest of the directory (at the same commit). Null on the last page. */
  next_cursor: string | null;
}

/** A page of a directory listing: `cursor` is an opaque token from the previous page's next_cursor. */
export interface TreePageRequest {
  limit: number;
  cursor?: string | undefined;
}

/**
 * A registered repository as git sees it: its mirror is named after `id`, it
 * is fetched from `url`, and its fetches count against `account_id`'s share.
 * (A repository row fits as it is.)
 */
export interface GitRepository {
  id: string;
  url: string;
  account_id: string;
}

export interface GitFile {
  commit_hash: string;
  path: string;
  /** Full size in bytes, also when content is truncated. */
  size: number;
  encoding: "utf-8" | "base64";
  content: string;
  truncated: boolean;
}

/** Who made a commit, and when (RFC 3339, with the offset the commit records, as git wrote it). */
export interface GitPerson {
  name: string;
  email: string;
  date: string;
}

/** A commit as the repository page shows it: its message, author and committer. */
export interface GitCommit {
  commit_hash: string;
  /** The message's first line. */
  title: string;
  /** The whole message (at most MAX_COMMIT_MESSAGE characters). */
  message: string;
  author: GitPerson;
  committer: GitPerson;
  parents: string[];
}

/** A credential for one fetch over http(s), sent as an Authorization header through git's environment. */
export interface GitAuth {
  username: string;
  password: string;
}

export interface GitSource {
  /** `auth`: a credential for this fetch (registration through an integration), instead of the mirror's credentials hook. */
  sync(repo: GitRepository, opts?: { force?: boolean; auth?: GitAuth }): Promise<void>;
  listRefs(repo: GitRepository): Promise<GitRefs>;
  /** refLoc names where the ref came from, for the 422 a malformed ref gets. */
  resolveCommit(repo: GitRepository, ref: string, refLoc?: (string | number)[]): Promise<string>;
  /**
   * A full commit hash the code host has just announced (a webhook): fetched
   * now, whenever the mirror was last refreshed, unless the mirror has it.
   * Not found when the fetch does not bring it.
   */
  fetchCommit(repo: GitRepository, commit: string): Promise<string>;
  /** One page of a directory; with a cursor, `ref` is ignored (the cursor keeps the first page's commit). */
  listTree(repo: GitRepository, ref: string, path: string, page: TreePageRequest): Promise<GitTree>;
  readFile(repo: GitRepository, ref: string, path: string): Promise<GitFile>;
  /** The commit `ref` names: its message, author, committer and parents. */
  readCommit(repo: GitRepository, ref: string): Promise<GitCommit>;
  remove(repoId: string): Promise<void>;
}
