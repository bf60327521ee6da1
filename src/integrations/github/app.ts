import { App } from "@octokit/app";
import { Octokit } from "@octokit/core";
import type { GitHubConfig } from "../../config.ts";
import type { Logger } from "../../logger.ts";
import { GitHubError, toGitHubError, type GitHubOperation } from "./errors.ts";

// The GitHub App as codeplane uses it: the App's own client (JWT), one client
// per installation (installation access tokens, which Octokit mints on
// demand and caches until shortly before they expire: they live an hour), and
// the few calls the integration needs. Every request has a time limit, so a
// GitHub that does not answer fails the caller instead of holding it.

/** An installation as the integration records it. */
export interface GitHubInstallation {
  id: number;
  /** The user or organization the App is installed on. */
  accountLogin: string;
  /** "User", "Organization" or "Enterprise". */
  accountType: string;
  /** "all" or "selected". */
  repositorySelection: string;
  suspended: boolean;
  /** When GitHub created it, and last changed it (repositories selected, permissions accepted); null when not said. */
  createdAt: Date | null;
  updatedAt: Date | null;
}

/** A repository as an installation sees it. */
export interface GitHubRepository {
  id: number;
  /** owner/name */
  fullName: string;
  name: string;
  ownerLogin: string;
  private: boolean;
  defaultBranch: string | null;
  htmlUrl: string;
}

export interface InstallationToken {
  token: string;
  expiresAt: Date;
}

/** What the App client needs; a fetch stands in for the network in tests. */
export interface GitHubAppOptions {
  config: GitHubConfig;
  logger: Logger;
  fetch?: typeof globalThis.fetch;
}

/** The Octokit an installation acts through: `request("POST /repos/{owner}/{repo}/check-runs", {...})`. */
export type InstallationOctokit = Octokit;

const MAX_PER_PAGE = 100;

export class GitHubApp {
  readonly config: GitHubConfig;
  readonly #app: App<{ Octokit: typeof Octokit }>;
  readonly #timeoutMs: number;
  readonly #log: Logger;

  constructor(opts: GitHubAppOptions) {
    this.config = opts.config;
    this.#timeoutMs = opts.config.requestTimeoutMs;
    this.#log = opts.logger;
    const baseFetch = opts.fetch ?? globalThis.fetch;
    const timeoutMs = this.#timeoutMs;
    // Every request, and reading its body, ends by the time limit (AbortSignal.timeout), whoever asked.
    const fetchWithTimeout: typeof globalThis.fetch = (input, init = {}) => {
      const limit = AbortSignal.timeout(timeoutMs);
      return baseFetch(input, { ...init, signal: init.signal ? AbortSignal.any([init.signal, limit]) : limit });
    };
    const log = opts.logger;
    const AppOctokit = Octokit.defaults({
      baseUrl: opts.config.apiUrl,
      userAgent: "codeplane",
      request: { fetch: fetchWithTimeout },
      log: {
        debug: (message: string) => log.debug({ github: true }, message),
        info: (message: string) => log.debug({ github: true }, message),
        warn: (message: string) => log.warn({ github: true }, message),
        error: (message: string) => log.error({ github: true }, message),
      },
    });
    this.#app = new App({
      appId: opts.config.appId,
      privateKey: opts.config.privateKey,
      Octokit: AppOctokit,
      log: {
        debug: (message: string) => log.debug({ github: true }, message),
        info: (message: string) => log.debug({ github: true }, message),
        warn: (message: string) => log.warn({ github: true }, message),
        error: (message: string) => log.error({ github: true }, message),
      },
    });
  }

  /** The App's installation page, where a person picks an account and repositories: no call to GitHub. */
  installUrl(state: string): string {
    return `${this.config.webUrl}/apps/${encodeURIComponent(this.config.appSlug)}/installations/new?state=${encodeURIComponent(state)}`;
  }

  /** The https clone URL of a repository (on github.com, or the Enterprise Server's root). */
  cloneUrl(fullName: string): string {
    return `${this.config.webUrl}/${fullName}.git`;
  }

  /** The Octokit acting as the App itself (JWT): GET /app/installations/..., not repository calls. */
  get appOctokit(): Octokit {
    return this.#app.octokit;
  }

  /**
   * The installation, as the App sees it. Throws GitHubError:
   * installation_not_found (deleted, or another App's), unavailable, app_credentials_refused.
   * A suspended installation is returned with `suspended: true`, not thrown.
   */
  async getInstallation(installationId: number): Promise<GitHubInstallation> {
    const data = await this.#call({ op: "installation", installationId }, async () => {
      const res = await this.#app.octokit.request("GET /app/installations/{installation_id}", { installation_id: installationId });
      return res.data;
    });
    const account = (data.account ?? {}) as { login?: string; slug?: string; name?: string; type?: string };
    return {
      id: data.id,
      accountLogin: account.login ?? account.slug ?? account.name ?? "",
      accountType: account.type ?? (account.slug ? "Enterprise" : "User"),
      repositorySelection: data.repository_selection,
      suspended: data.suspended_at != null,
      createdAt: dateOrNull(data.created_at),
      updatedAt: dateOrNull(data.updated_at),
    };
  }

  /**
   * An Octokit that acts as the installation (its token minted on first use
   * and renewed by Octokit before it expires). Throws GitHubError like
   * installationToken, since it mints one.
   */
  async installationOctokit(installationId: number): Promise<InstallationOctokit> {
    return this.#call({ op: "token", installationId }, () => this.#app.getInstallationOctokit(installationId));
  }

  /**
   * An installation access token (for git over HTTPS as `x-access-token`).
   * Octokit keeps one per installation until shortly before it expires;
   * `refresh` mints a new one (after git was refused with a cached one).
   * Throws GitHubError: installation_suspended, installation_not_found, unavailable, app_credentials_refused.
   */
  async installationToken(installationId: number, opts: { refresh?: boolean } = {}): Promise<InstallationToken> {
    const auth = await this.#call({ op: "token", installationId }, async () => {
      const authenticate = this.#app.octokit.auth as (o: {
        type: "installation";
        installationId: number;
        refresh?: boolean;
      }) => Promise<{ token: string; expiresAt: string }>;
      return authenticate({ type: "installation", installationId, ...(opts.refresh && { refresh: true }) });
    });
    return { token: auth.token, expiresAt: new Date(auth.expiresAt) };
  }

  /**
   * One page of the repositories the installation can see (GET /installation/repositories),
   * `page` counting from 1, at most 100 a page. `total` is GitHub's count.
   */
  async listInstallationRepositories(
    installationId: number,
    page: { page: number; perPage: number },
  ): Promise<{ repositories: GitHubRepository[]; total: number }> {
    const octokit = await this.installationOctokit(installationId);
    const data = await this.#call({ op: "repositories", installationId }, async () => {
      const res = await octokit.request("GET /installation/repositories", { per_page: Math.min(MAX_PER_PAGE, page.perPage), page: page.page });
      return res.data as { total_count: number; repositories: RawRepository[] };
    });
    return { repositories: data.repositories.map(toRepository), total: data.total_count };
  }

  /** A repository the installation can see, by owner/name; GitHubError repository_not_found when it cannot. */
  async getRepository(installationId: number, fullName: string): Promise<GitHubRepository> {
    const [owner, repo, ...rest] = fullName.split("/");
    if (!owner || !repo || rest.length)
      throw new GitHubError("repository_not_found", `The repository ${fullName} does not exist or the installation cannot see it`);
    const octokit = await this.installationOctokit(installationId);
    const data = await this.#call({ op: "repository", installationId, fullName }, async () => {
      const res = await octokit.request("GET /repos/{owner}/{repo}", { owner, repo });
      return res.data as RawRepository;
    });
    return toRepository(data);
  }

  async #call<T>(what: GitHubOperation, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      const mapped = toGitHubError(err, what, this.#timeoutMs);
      if (mapped instanceof GitHubError) {
        // GitHub's status and our kind; never the request (headers) or the body.
        this.#log.info(
          { github_operation: what.op, installation_id: "installationId" in what ? what.installationId : undefined, status: mapped.status, kind: mapped.kind },
          "GitHub call failed",
        );
      }
      throw mapped;
    }
  }
}

function dateOrNull(value: unknown): Date | null {
  const t = typeof value === "string" ? Date.parse(value) : NaN;
  return Number.isFinite(t) ? new Date(t) : null;
}

interface RawRepository {
  id: number;
  name: string;
  full_name: string;
  owner: { login: string } | null;
  private: boolean;
  default_branch?: string;
  html_url: string;
}

function toRepository(r: RawRepository): GitHubRepository {
  return {
    id: r.id,
    fullName: r.full_name,
    name: r.name,
    ownerLogin: r.owner?.login ?? r.full_name.split("/")[0]!,
    private: r.private,
    defaultBranch: r.default_branch ?? null,
    htmlUrl: r.html_url,
  };
}
