// Read-only git access for the repositories domain: a cache of bare mirrors
// driven by the git CLI (the checks for the paths and refs that reach it are
// in ../repo-path.ts, pure, so the API and MCP layers can use them too).
export {
  GitMirrors,
  type GitAuth,
  type GitEntryType,
  type GitFile,
  type GitMirrorsOptions,
  type GitRef,
  type GitRefs,
  type GitRepository,
  type GitTree,
  type GitTreeEntry,
  type TreePageRequest,
} from "./mirrors.ts";
export { MirrorCache, type MirrorCacheOptions } from "./mirror-cache.ts";
export { CheckoutServer, type CheckoutServerOptions } from "./checkout-server.ts";
export { MirrorReader, type MirrorAccess, type MirrorReaderOptions } from "./mirror-reader.ts";
export { GitRemoteError, type GitFailureReason } from "./errors.ts";
export { FetchSlots, GitBusyError, type FetchSlotsOptions } from "./fetch-slots.ts";
export { decodeTreeCursor, TREE_PAGE_DEFAULT, TREE_PAGE_MAX } from "./tree-cursor.ts";
