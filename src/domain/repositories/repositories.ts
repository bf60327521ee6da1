import type { Db } from "../../db/database.ts";
import type { Logger } from "../../logger.ts";
import { conflict, DomainValidationError, notFound } from "../errors.ts";
import { isUniqueViolation } from "../shared/db-errors.ts";
import { newId } from "../shared/ids.ts";
import { toPage, type Page, type PageRequest } from "../shared/pagination.ts";
import { iso } from "../shared/time.ts";
import { checkCloneUrl } from "./clone-url-policy.ts";
import type { GitAuth, GitCommit, GitFile, GitSource, GitTree, TreePageRequest } from "./git-port.ts";
import {
  deleteRepository,
  findRepositoryByUrlOrName,
  insertRepository,
  listRepositories,
  requireRepository,
  updateRepository,
  type RepositoryListRow,
} from "./repository-rows.ts";
import type { CreateRepositoryInput, Repository, UpdateRepositoryInput } from "./repositories.schemas.ts";

export interface RepositoryServiceDeps {
  git: GitSource;
  allowLocal: boolean;
  logger: Logger;
}

export const toRepository = (r: RepositoryListRow): Repository => ({
  id: r.id,
  name: r.name,
  url: r.url,
  provider: r.provider,
  default_branch: r.default_branch,
  integration_id: r.integration_id,
  auto_analyze: r.auto_analyze,
  report_check_runs: r.report_check_runs,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

/** "https://host/org/repo.git/" and "https://host/org/repo" are one repository. */
export function normalizeUrl(url: string): string {
  return url.trim().replace(/\/+$/, "");
}

export function nameFromUrl(url: string): string {
  const last = normalizeUrl(url).split(/[/:]/).pop() ?? "";
  const name = last
    .replace(/\.git$/, "")
    .replace(/[^A-Za-z0-9._-]/g, "-")
    .slice(0, 100);
  return name || "repository";
}

function providerOf(url: string): "git" | "github" {
  try {
    return new URL(url).hostname.toLowerCase() === "github.com" ? "github" : "git";
  } catch {
    return "git";
  }
}

const duplicateError = (err: unknown) =>
  isUniqueViolation(err, "repositories_account_url_key")
    ? conflict("A repository with this URL is already registered")
    : isUniqueViolation(err, "repositories_account_name_key")
      ? conflict("A repository with this name already exists")
      : null;

export class RepositoryService {
  readonly #deps: RepositoryServiceDeps;

  constructor(deps: RepositoryServiceDeps) {
    this.#deps = deps;
  }

  async create(db: Db, accountId: string, input: CreateRepositoryInput): Promise<Repository> {
    const url = normalizeUrl(input.url);
    return this.#register(db, accountId, { url, name: input.name ?? nameFromUrl(url), default_branch: input.default_branch, provider: providerOf(url) });
  }

  /**
   * Registers a repository a code-host integration can see: fetched once with
   * `auth` (a credential minted for this fetch, never stored), then recorded
   * with its provider, integration and the host's id for it. Later fetches
   * get their credential from the mirror's credentials hook. A taken name
   * falls back to `<owner>-<name>`, so two owners' repositories of one name
   * can both be registered.
   */
  async createFromIntegration(
    db: Db,
    accountId: string,
    input: {
      url: string;
      name: string;
      fallbackName: string;
      provider: "github";
      integration_id: string;
      github_repository_id: number;
      auto_analyze: boolean;
      report_check_runs: boolean;
      auth: GitAuth;
    },
  ): Promise<Repository> {
    const url = normalizeUrl(input.url);
    const taken = await findRepositoryByUrlOrName(db, accountId, url, input.name);
    const name = taken && taken.url !== url && taken.name === input.name ? input.fallbackName : input.name;
    return this.#register(db, accountId, {
      url,
      name,
      provider: input.provider,
      integration_id: input.integration_id,
      github_repository_id: input.github_repository_id,
      auto_analyze: input.auto_analyze,
      report_check_runs: input.report_check_runs,
      auth: input.auth,
    });
  }

  async #register(
    db: Db,
    accountId: string,
    input: {
      url: string;
      name: string;
      default_branch?: string | undefined;
      provider: "git" | "github";
      integration_id?: string;
      github_repository_id?: number;
      auto_analyze?: boolean;
      report_check_runs?: boolean;
      auth?: GitAuth;
    },
  ): Promise<Repository> {
    const { url, name } = input;
    await checkCloneUrl(url, { allowLocal: this.#deps.allowLocal, allowSsh: false });
    const existing = await findRepositoryByUrlOrName(db, accountId, url, name);
    if (existing) {
      throw conflict(existing.url === url ? "A repository with this URL is already registered" : "A repository with this name already exists");
    }

    // Fetch before inserting: a URL that is not a readable git repository is
    // refused with a clear error instead of becoming a row that can never work.
    const id = newId();
    const repo = { id, url, account_id: accountId };
    await this.#deps.git.sync(repo, { force: true, ...(input.auth && { auth: input.auth }) });
    try {
      const refs = await this.#deps.git.listRefs(repo);
      const defaultBranch = input.default_branch ?? refs.head;
      if (input.default_branch && !refs.branches.some((b) => b.name === input.default_branch)) {
        throw new DomainValidationError([
          { loc: ["body", "default_branch"], msg: `Value error, branch '${input.default_branch}' does not exist in the repository`, type: "value_error" },
        ]);
      }
      const now = new Date();
      const row = await insertRepository(db, {
        id,
        account_id: accountId,
        name,
        url,
        provider: input.provider,
        default_branch: defaultBranch,
        ...(input.integration_id !== undefined && { integration_id: input.integration_id }),
        ...(input.github_repository_id !== undefined && { github_repository_id: input.github_repository_id }),
        ...(input.auto_analyze !== undefined && { auto_analyze: input.auto_analyze }),
        ...(input.report_check_runs !== undefined && { report_check_runs: input.report_check_runs }),
        created_at: now,
        updated_at: now,
      });
      return toRepository(row);
    } catch (err) {
      await this.#deps.git.remove(id).catch((e: unknown) => this.#deps.logger.warn({ err: e, repository_id: id }, "could not remove mirror"));
      throw duplicateError(err) ?? err;
    }
  }

  async list(db: Db, accountId: string, page: PageRequest): Promise<Page<Repository>> {
    return toPage(await listRepositories(db, accountId, page), page.limit, toRepository);
  }

  async get(db: Db, accountId: string, id: string): Promise<Repository> {
    return toRepository(await requireRepository(db, accountId, id));
  }

  async update(db: Db, accountId: string, id: string, input: UpdateRepositoryInput): Promise<Repository> {
    const current = await requireRepository(db, accountId, id);
    if (input.default_branch !== undefined && input.default_branch !== current.default_branch) {
      const refs = await this.#deps.git.listRefs(current);
      if (!refs.branches.some((b) => b.name === input.default_branch)) {
        throw new DomainValidationError([
          { loc: ["body", "default_branch"], msg: `Value error, branch '${input.default_branch}' does not exist in the repository`, type: "value_error" },
        ]);
      }
    }
    // Check runs need the App's installation to write them: a plain git repository, or one whose installation is gone, has none.
    if (input.report_check_runs === true && !current.report_check_runs && (current.provider !== "github" || current.integration_id === null)) {
      throw conflict("Only a repository connected through a GitHub App installation can report check runs");
    }
    const changes = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
    if (Object.keys(changes).length === 0) return toRepository(current);
    try {
      const row = await updateRepository(db, accountId, id, { ...changes, updated_at: new Date() });
      return toRepository(row);
    } catch (err) {
      throw duplicateError(err) ?? err;
    }
  }

  async delete(db: Db, accountId: string, id: string): Promise<void> {
    if (!(await deleteRepository(db, accountId, id))) throw notFound("Repository");
    // The mirror is a cache: failing to remove it loses nothing and must not fail the delete.
    await this.#deps.git.remove(id).catch((err: unknown) => this.#deps.logger.warn({ err, repository_id: id }, "could not remove mirror"));
  }

  async refs(db: Db, accountId: string, id: string) {
    // listRefs refreshes the mirror when it is stale.
    return this.#deps.git.listRefs(await requireRepository(db, accountId, id));
  }

  async tree(db: Db, accountId: string, id: string, ref: string | undefined, path: string, page: TreePageRequest): Promise<GitTree> {
    const repo = await requireRepository(db, accountId, id);
    return this.#deps.git.listTree(repo, ref ?? repo.default_branch ?? "HEAD", path, page);
  }

  async file(db: Db, accountId: string, id: string, ref: string | undefined, path: string): Promise<GitFile> {
    const repo = await requireRepository(db, accountId, id);
    return this.#deps.git.readFile(repo, ref ?? repo.default_branch ?? "HEAD", path);
  }

  /** The commit a branch, tag or hash names (the default branch's head without one). */
  async commit(db: Db, accountId: string, id: string, ref: string | undefined): Promise<GitCommit> {
    const repo = await requireRepository(db, accountId, id);
    return this.#deps.git.readCommit(repo, ref ?? repo.default_branch ?? "HEAD");
  }
}
