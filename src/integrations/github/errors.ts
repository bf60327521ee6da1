import { RequestError } from "@octokit/request-error";

// What can go wrong talking to GitHub, as a few kinds with messages that are
// safe to show API clients: GitHub's own text (which can name hosts, and in
// a response body anything) goes to the log, never into these messages.

export type GitHubErrorKind =
  /** No GitHub App configured on this server (503). */
  | "not_configured"
  /** The installation exists but is suspended on GitHub. */
  | "installation_suspended"
  /** The installation does not exist (deleted) or is not visible to this App. */
  | "installation_not_found"
  /** The repository does not exist or the installation cannot see it. */
  | "repository_not_found"
  /** GitHub refused the App's own credentials (app id or private key wrong). */
  | "app_credentials_refused"
  /** GitHub could not be reached, timed out, failed (5xx) or rate-limited us. */
  | "unavailable";

export class GitHubError extends Error {
  readonly kind: GitHubErrorKind;
  /** GitHub's HTTP status, when it answered. */
  readonly status: number | undefined;
  /** Seconds to wait before trying again (rate limits), when GitHub said. */
  readonly retryAfterSeconds: number | undefined;
  constructor(kind: GitHubErrorKind, message: string, opts: { status?: number; retryAfterSeconds?: number; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "GitHubError";
    this.kind = kind;
    this.status = opts.status;
    this.retryAfterSeconds = opts.retryAfterSeconds;
  }
}

/** No GitHub App: the 503 names the settings that are missing. */
export class GitHubNotConfiguredError extends GitHubError {
  readonly missing: readonly string[];
  constructor(missing: readonly string[]) {
    super("not_configured", `The GitHub integration is not configured on this server: set ${missing.join(", ")}`);
    this.name = "GitHubNotConfiguredError";
    this.missing = missing;
  }
}

/** Which call failed, for the messages: they say what was being done. */
export type GitHubOperation =
  | { op: "installation"; installationId: number }
  | { op: "token"; installationId: number }
  | { op: "repositories"; installationId: number }
  | { op: "repository"; installationId: number; fullName: string }
  | { op: "request"; installationId?: number };

function retryAfterOf(err: RequestError): number | undefined {
  const headers = (err.response?.headers ?? {}) as Record<string, string | number | undefined>;
  const retry = Number(headers["retry-after"]);
  if (Number.isFinite(retry) && retry > 0) return retry;
  if (String(headers["x-ratelimit-remaining"]) === "0") {
    const reset = Number(headers["x-ratelimit-reset"]);
    if (Number.isFinite(reset)) return Math.max(1, Math.ceil(reset - Date.now() / 1000));
  }
  return undefined;
}

const isTimeout = (err: unknown): boolean => {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e.name === "TimeoutError" || e.name === "AbortError") return true;
  }
  return false;
};

/** GitHub's rate limit answers 429, or 403 with a message or a Retry-After that says so. */
function rateLimited(e: RequestError, message: string): boolean {
  return e.status === 429 || (e.status === 403 && (/rate limit/i.test(message) || retryAfterOf(e) !== undefined));
}

/** A 404 (or 410, or a 403 for a repository): the repository or the installation asked for is not there; null when the operation names neither. */
function notFound(what: GitHubOperation, id: number | null, status: number, err: unknown): GitHubError | null {
  if (what.op === "repository") {
    return new GitHubError("repository_not_found", `The repository ${what.fullName} does not exist or the installation cannot see it`, { status, cause: err });
  }
  if (id !== null) {
    return new GitHubError("installation_not_found", `The GitHub App installation ${id} does not exist or is not an installation of this App`, {
      status,
      cause: err,
    });
  }
  return null;
}

/**
 * Turns whatever an Octokit call threw into a GitHubError. Errors that are
 * already GitHubErrors pass through; anything that is neither an HTTP answer
 * nor a network failure is returned as it is (a bug, not GitHub's doing).
 */
export function toGitHubError(err: unknown, what: GitHubOperation, timeoutMs: number): unknown {
  if (err instanceof GitHubError) return err;
  if (!(err instanceof RequestError) && !isTimeout(err)) return err;
  const id = "installationId" in what && what.installationId !== undefined ? what.installationId : null;
  if (isTimeout(err)) {
    return new GitHubError("unavailable", `GitHub did not answer within ${Math.round(timeoutMs / 1000)}s`, { cause: err });
  }
  const e = err as RequestError;
  const status = e.status;
  const body = e.response?.data as { message?: unknown } | undefined;
  const message = typeof body?.message === "string" ? body.message : "";
  // fetch failed before any answer (DNS, connection refused, TLS): @octokit/request reports 500 without a response.
  if (!e.response) return new GitHubError("unavailable", "GitHub could not be reached", { cause: err });
  if (status === 401) {
    return new GitHubError("app_credentials_refused", "GitHub refused the App's credentials: check CODEPLANE_GITHUB_APP_ID and the private key", {
      status,
      cause: err,
    });
  }
  if (status === 403 && /suspend/i.test(message)) {
    return new GitHubError(
      "installation_suspended",
      id !== null ? `The GitHub App installation ${id} is suspended` : "The GitHub App installation is suspended",
      { status, cause: err },
    );
  }
  if (rateLimited(e, message)) {
    const retry = retryAfterOf(e);
    return new GitHubError("unavailable", "GitHub's rate limit was reached; try again later", {
      status,
      cause: err,
      ...(retry !== undefined && { retryAfterSeconds: retry }),
    });
  }
  const gone = status === 404 || status === 410 || (status === 403 && what.op === "repository") ? notFound(what, id, status, err) : null;
  if (gone) return gone;
  if (status >= 500) return new GitHubError("unavailable", `GitHub failed (HTTP ${status})`, { status, cause: err });
  return new GitHubError("unavailable", `GitHub refused the request (HTTP ${status})`, { status, cause: err });
}
