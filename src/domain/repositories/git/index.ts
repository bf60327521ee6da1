// Read-only git access for the repositories domain: a cache of bare mirrors
// driven by the git CLI, and the checks for paths and refs that reach it.
export {
  GitMirrors,
  type GitAuth,
  type GitEntryType,
  type GitFile,
  type GitMirrorsOptions,
  type GitRef,
  type GitRefs,
  type GitTree,
  type GitTreeEntry,
} from "./mirrors.ts";
export { MirrorCache, type MirrorCacheOptions } from "./mirror-cache.ts";
export { MirrorReader, type MirrorAccess, type MirrorReaderOptions } from "./mirror-reader.ts";
export { GitRemoteError, type GitFailureReason } from "./errors.ts";
export { normalizeRepoPath, validateRef, type Loc } from "./paths.ts";
