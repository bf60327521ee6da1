import { DomainError, type ErrorKind } from "../../errors.ts";

// git reports remote failures only as prose on stderr. They are classified
// here into a few reasons with fixed messages: the raw text can carry URLs,
// server banners and paths of this machine, so it goes to the log, not to
// API clients.

export type GitFailureReason =
  | "not_a_repository" // the URL answers, but not as a git repository (or it is private)
  | "auth_required" // the server wants credentials we do not have or that it refused
  | "redirect" // the server redirected; redirects are not followed (SSRF)
  | "refused" // the transport is not allowed by policy
  | "damaged" // the server answered, but its repository lacks objects it refers to (corrupt or incomplete)
  | "unreachable" // DNS, connect or TLS failure, or a connection dropped mid-transfer
  | "timeout"
  | "failed"; // anything else

export class GitRemoteError extends DomainError {
  readonly reason: GitFailureReason;
  constructor(reason: GitFailureReason, message: string, options?: { cause?: unknown }) {
    super(kindOf(reason), message, options);
    this.name = "GitRemoteError";
    this.reason = reason;
  }
}

function kindOf(reason: GitFailureReason): ErrorKind {
  if (reason === "not_a_repository" || reason === "auth_required" || reason === "redirect" || reason === "refused") return "bad_request";
  // Trying again will not help until someone repairs the repository: a conflict with its state, not an outage.
  if (reason === "damaged") return "conflict";
  return "unavailable";
}

/**
 * A remote whose repository is missing objects answers, then fails while
 * packing: upload-pack says so on the remote: lines (file://, git://, smart
 * HTTP, ssh), and a dumb HTTP fetch names the object it cannot obtain. The
 * client side then prints `early EOF` and `invalid index-pack output`, which a
 * connection dropped mid-pack prints too (with `unexpected disconnect while
 * reading sideband packet`, or curl's `RPC failed`): so those two lines alone
 * decide nothing, and only these markers make a failure "damaged". Samples
 * captured from git 2.39 are the table in errors.test.ts.
 */
const DAMAGED =
  /possible repository corruption|cannot obtain needed (blob|tree|commit|tag|object)|did not send all necessary objects|remote: (fatal|error): (unable|could not) read [0-9a-f]{7,}|failed to traverse parents of commit|fatal: bad object|unpack-objects failed|missing (blob|tree|commit|tag) object|(loose|packed) object [0-9a-f]{7,} .*is corrupt/i;

const PATTERNS: [RegExp, GitFailureReason][] = [
  [/returned error: 30[0-9]|redirect/i, "redirect"],
  [/could not read (username|password)|authentication failed|returned error: 40[13]|permission denied \(publickey/i, "auth_required"],
  [
    /does not appear to be a git repository|repository '.*' (not found|does not exist)|repository not found|not valid: is this a git repository|returned error: 404|not a git repository|no such file or directory|does not look like a v2 or v3 bundle file|invalid gitfile format/i,
    "not_a_repository",
  ],
  [DAMAGED, "damaged"],
  [/transport '.*' not allowed|protocol '.*' is not supported|unsupported protocol/i, "refused"],
  [
    /could not resolve host|failed to connect|couldn't connect|connection refused|connection timed out|network is unreachable|ssl|tls|certificate|host key verification failed|could not resolve hostname|unable to access|early eof|connection reset/i,
    "unreachable",
  ],
];

export function classifyGitFailure(stderr: string): GitFailureReason {
  for (const [pattern, reason] of PATTERNS) if (pattern.test(stderr)) return reason;
  return "failed";
}

export function gitRemoteError(reason: GitFailureReason, host: string | null, timeoutMs: number): GitRemoteError {
  const where = host ? ` at ${host}` : "";
  switch (reason) {
    case "not_a_repository":
      return new GitRemoteError(reason, `No git repository found${where} (check the URL; private repositories need a credential)`);
    case "auth_required":
      return new GitRemoteError(reason, `The git server${where} requires authentication, or refused the credential given`);
    case "redirect":
      return new GitRemoteError(reason, `The git server${where} answered with a redirect; register the final repository URL instead`);
    case "refused":
      return new GitRemoteError(reason, "The clone URL uses a transport that is not allowed");
    case "damaged":
      return new GitRemoteError(
        reason,
        `The repository${where} is damaged: its git server answered but could not send objects the repository refers to (missing or corrupt objects); repair or re-push it on the server, then try again`,
      );
    case "unreachable":
      return new GitRemoteError(reason, `Could not reach the git server${where}, or it dropped the connection`);
    case "timeout":
      return new GitRemoteError(reason, `Fetching the repository${where} timed out after ${Math.round(timeoutMs / 1000)}s`);
    case "failed":
      return new GitRemoteError(reason, `Fetching the repository${where} failed`);
  }
}

/** Drops userinfo from anything URL-shaped, for logs. */
export function redactUrls(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/\s@'"]*@/gi, "$1[redacted]@");
}
