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

export interface GitSource {
  sync(repoKey: string, url: string, opts?: { force?: boolean }): Promise<void>;
  listRefs(repoKey: string, url: string): Promise<GitRefs>;
  /** refLoc names where the ref came from, for the 422 a malformed ref gets. */
  resolveCommit(repoKey: string, url: string, ref: string, refLoc?: (string | number)[]): Promise<string>;
  listTree(repoKey: string, url: string, ref: string, path: string): Promise<GitTree>;
  readFile(repoKey: string, url: string, ref: string, path: string): Promise<GitFile>;
  remove(repoKey: string): Promise<void>;
}
