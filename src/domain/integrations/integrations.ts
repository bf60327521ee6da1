import type { Db } from "../../db/database.ts";
import type { IntegrationRow } from "../../db/schema.ts";
import { GitHubError, GitHubNotConfiguredError, type GitHubApp, type GitHubInstallation } from "../../integrations/github/index.ts";
import type { Logger } from "../../logger.ts";
import { conflict, DomainError, DomainValidationError, notFound } from "../errors.ts";
import type { Repository } from "../repositories/repositories.schemas.ts";
import type { RepositoryService } from "../repositories/repositories.ts";
import { isUniqueViolation } from "../shared/db-errors.ts";
import { newId } from "../shared/ids.ts";
import { toPage, type Page, type PageRequest } from "../shared/pagination.ts";
import { iso } from "../shared/time.ts";
import type { InstallStateSigner } from "./install-state.ts";
import {
  disconnectIntegration,
  findIntegrationRepository,
  findLiveIntegrationByInstallationId,
  insertIntegration,
  listIntegrations,
  requireIntegration,
  updateInstallationDetails,
} from "./integration-rows.ts";
import type { InstallationRepository, Integration, RegisterInstallationRepositoryInput } from "./integrations.schemas.ts";

export interface IntegrationServiceDeps {
  /** null when no GitHub App is configured: every operation is then a 503 naming `missing`. */
  github: GitHubApp | null;
  missing: readonly string[];
  /** CODEPLANE_PUBLIC_URL: where the callback sends the browser afterwards. */
  publicUrl: string | null;
  states: InstallStateSigner;
  repositories: RepositoryService;
  logger: Logger;
}

/** Clock skew allowed between GitHub's timestamps and ours. */
const SKEW_MS = 5 * 60_000;

export const toIntegration = (r: IntegrationRow): Integration => ({
  id: r.id,
  provider: r.provider,
  installation_id: Number(r.installation_id),
  account_login: r.account_login,
  account_type: r.account_type,
  repository_selection: r.repository_selection,
  suspended: r.suspended,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

/**
 * GitHubError as the API answers it: a missing App, GitHub down or the App's
 * credentials refused are 503; a suspended installation is 409; an
 * installation or repository GitHub does not show this App is 404.
 */
export function fromGitHubError(err: unknown): unknown {
  if (!(err instanceof GitHubError)) return err;
  switch (err.kind) {
    case "installation_not_found":
    case "repository_not_found":
      return new DomainError("not_found", err.message, { cause: err });
    case "installation_suspended":
      return new DomainError("conflict", `${err.message}: unsuspend it on GitHub first`, { cause: err });
    case "not_configured":
    case "app_credentials_refused":
    case "unavailable":
      return new DomainError("unavailable", err.message, {
        cause: err,
        ...(err.retryAfterSeconds !== undefined && { retryAfterSeconds: err.retryAfterSeconds }),
      });
  }
}

/** A page of an installation's repositories: GitHub's page number and size, opaque to clients. */
export function encodeGitHubCursor(page: number, perPage: number): string {
  return Buffer.from(`gh1:${page}:${perPage}`, "utf8").toString("base64url");
}

export function decodeGitHubCursor(cursor: string): { page: number; perPage: number } | null {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(cursor)) return null;
  const m = /^gh1:([1-9][0-9]{0,5}):([1-9][0-9]?|100)$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  return m ? { page: Number(m[1]), perPage: Number(m[2]) } : null;
}

export type CallbackOutcome = { kind: "connected"; integration: Integration; location: string } | { kind: "pending"; location: string };

export class IntegrationService {
  readonly #deps: IntegrationServiceDeps;

  constructor(deps: IntegrationServiceDeps) {
    this.#deps = deps;
  }

  /** The App client, or the 503 that names the settings to set. */
  #github(): GitHubApp {
    if (!this.#deps.github) throw fromGitHubError(new GitHubNotConfiguredError(this.#deps.missing));
    return this.#deps.github;
  }

  async #gh<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw fromGitHubError(err);
    }
  }

  /** The App's install page with a state bound to the account: built here, nothing asked of GitHub. */
  installUrl(accountId: string): { install_url: string; expires_at: string } {
    const gh = this.#github();
    const { state, expiresAt } = this.#deps.states.issue(accountId);
    return { install_url: gh.installUrl(state), expires_at: expiresAt.toISOString() };
  }

  /**
   * GitHub's setup URL. The state says which account asked (and that it did
   * within the hour); GitHub's API says the installation exists for this App
   * and was created or changed after the state was issued, so an installation
   * id pasted into someone else's flow from an older installation is refused.
   * See docs/users/github.md for what this does not cover.
   */
  async callback(db: Db, query: { installation_id?: number | undefined; setup_action?: string | undefined; state: string }): Promise<CallbackOutcome> {
    const gh = this.#github();
    const verified = this.#deps.states.verify(query.state);
    if (verified === "expired") {
      throw new DomainError(
        "bad_request",
        "This installation link has expired (it is valid for one hour): ask codeplane for a new one (GET /v1/integrations/github/install) and install again",
      );
    }
    if (typeof verified === "string") {
      throw new DomainError(
        "bad_request",
        "This installation link is not valid (its state was altered or was not issued by this server): ask codeplane for a new one (GET /v1/integrations/github/install)",
      );
    }
    const base = this.#deps.publicUrl ?? "";
    if (query.installation_id === undefined) {
      // setup_action=request: an organization owner has to approve; GitHub then sends the installation webhook.
      return { kind: "pending", location: `${base}/ui/integrations?status=pending` };
    }
    const installation = await this.#gh(() => gh.getInstallation(query.installation_id!));
    const times = [installation.createdAt, installation.updatedAt].filter((t): t is Date => t !== null).map((t) => t.getTime());
    const changed = times.length ? Math.max(...times) : null;
    if (changed !== null && changed < verified.issuedAt * 1000 - SKEW_MS) {
      throw new DomainError(
        "bad_request",
        "This installation was not created or changed during this installation flow: install (or configure) the App from the link codeplane gave, or connect an existing installation with POST /v1/integrations/github",
      );
    }
    const integration = await this.#record(db, verified.accountId, installation);
    return { kind: "connected", integration: integration.integration, location: `${base}/ui/integrations/${integration.integration.id}` };
  }

  /** Connects an installation the App can see, without a browser. `created` is false when this account had it already. */
  async connect(db: Db, accountId: string, installationId: number): Promise<{ integration: Integration; created: boolean }> {
    const gh = this.#github();
    const installation = await this.#gh(() => gh.getInstallation(installationId));
    return this.#record(db, accountId, installation);
  }

  async #record(db: Db, accountId: string, installation: GitHubInstallation): Promise<{ integration: Integration; created: boolean }> {
    const details = {
      account_login: installation.accountLogin,
      account_type: installation.accountType,
      repository_selection: installation.repositorySelection,
      suspended: installation.suspended,
    };
    for (let attempt = 0; attempt < 2; attempt++) {
      const existing = await findLiveIntegrationByInstallationId(db, installation.id);
      if (existing) {
        if (existing.account_id !== accountId)
          throw conflict("This GitHub App installation is connected to another codeplane account; it must be disconnected there first");
        const row = await updateInstallationDetails(db, existing.id, details);
        if (row) return { integration: toIntegration(row), created: false };
        continue; // disconnected meanwhile: connect afresh
      }
      const now = new Date();
      try {
        const row = await insertIntegration(db, {
          id: newId(),
          account_id: accountId,
          provider: "github",
          installation_id: installation.id,
          ...details,
          created_at: now,
          updated_at: now,
        });
        this.#deps.logger.info({ integration_id: row.id, installation_id: installation.id, account_id: accountId }, "GitHub installation connected");
        return { integration: toIntegration(row), created: true };
      } catch (err) {
        // Connected by a concurrent request: look again.
        if (!isUniqueViolation(err, "integrations_live_installation_key")) throw err;
      }
    }
    throw conflict("This GitHub App installation is being connected by another request; try again");
  }

  async list(db: Db, accountId: string, page: PageRequest): Promise<Page<Integration>> {
    this.#github();
    return toPage(await listIntegrations(db, accountId, page), page.limit, toIntegration);
  }

  async get(db: Db, accountId: string, id: string): Promise<Integration> {
    this.#github();
    return toIntegration(await requireIntegration(db, accountId, id));
  }

  /** Disconnects: the repositories registered through it stay, readable as of their last fetch, and are no longer fetched. */
  async delete(db: Db, accountId: string, id: string): Promise<void> {
    this.#github();
    if (!(await disconnectIntegration(db, accountId, id))) throw notFound("Integration");
    this.#deps.logger.info({ integration_id: id, account_id: accountId }, "integration disconnected");
  }

  /** One page of what the installation can see, through GitHub's own pagination. */
  async repositories(db: Db, accountId: string, id: string, page: { limit: number; cursor?: string | undefined }): Promise<Page<InstallationRepository>> {
    const gh = this.#github();
    const integration = await requireIntegration(db, accountId, id);
    const at = page.cursor ? decodeGitHubCursor(page.cursor) : { page: 1, perPage: page.limit };
    if (!at) throw new DomainValidationError([{ loc: ["query", "cursor"], msg: "Value error, Invalid cursor", type: "value_error" }]);
    const installationId = Number(integration.installation_id);
    const { repositories, total } = await this.#gh(() => gh.listInstallationRepositories(installationId, at));
    const items: InstallationRepository[] = [];
    for (const r of repositories) {
      const registered = await findIntegrationRepository(db, integration.id, r.id);
      items.push({
        github_id: r.id,
        full_name: r.fullName,
        name: r.name,
        owner: r.ownerLogin,
        private: r.private,
        default_branch: r.defaultBranch,
        html_url: r.htmlUrl,
        repository_id: registered?.id ?? null,
      });
    }
    const more = at.page * at.perPage < total && repositories.length > 0;
    return { items, next_cursor: more ? encodeGitHubCursor(at.page + 1, at.perPage) : null };
  }

  /**
   * Registers a repository the installation can see: fetched once into a mirror
   * with an installation token minted for it, recorded as provider github.
   */
  async registerRepository(db: Db, accountId: string, id: string, input: RegisterInstallationRepositoryInput): Promise<Repository> {
    const gh = this.#github();
    const integration = await requireIntegration(db, accountId, id);
    const installationId = Number(integration.installation_id);
    if (integration.suspended) throw conflict(`The GitHub App installation ${installationId} is suspended: unsuspend it on GitHub first`);
    const repo = await this.#gh(() => gh.getRepository(installationId, input.full_name));
    const { token } = await this.#gh(() => gh.installationToken(installationId));
    return this.#deps.repositories.createFromIntegration(db, accountId, {
      url: gh.cloneUrl(repo.fullName),
      name: sanitizeName(repo.name),
      fallbackName: sanitizeName(`${repo.ownerLogin}-${repo.name}`),
      provider: "github",
      integration_id: integration.id,
      github_repository_id: repo.id,
      auto_analyze: input.auto_analyze ?? false,
      report_check_runs: input.report_check_runs ?? false,
      auth: { username: "x-access-token", password: token },
    });
  }
}

/** A repository name as codeplane allows them (letters, digits, '.', '_', '-'; at most 100). */
function sanitizeName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, "-").slice(0, 100) || "repository";
}
