// What the repository service needs from git. The implementation (a cache of
// bare mirrors driven by the git CLI) lives in ./git; tests and other
// providers can stand in behind this interface.

export interface GitRef {
  name: string;
  commit_hash: string;
}

export interface GitTree {
  commit_hash: string;
  path: string;
  entries: { name: string; path: string; type: "file" | "dir" | "symlink" | "submodule"; size: number | null }[];
}

export interface GitFile {
  commit_hash: string;
  path: string;
  size: number;
  encoding: "utf-8" | "base64";
  content: string;
  truncated: boolean;
}

export interface GitSource {
  sync(repoKey: string, url: string, opts?: { force?: boolean }): Promise<void>;
  listRefs(repoKey: string, url: string): Promise<{ head: string | null; branches: GitRef[]; tags: GitRef[] }>;
  resolveCommit(repoKey: string, url: string, ref: string): Promise<string>;
  listTree(repoKey: string, url: string, ref: string, path: string): Promise<GitTree>;
  readFile(repoKey: string, url: string, ref: string, path: string): Promise<GitFile>;
  remove(repoKey: string): Promise<void>;
}
