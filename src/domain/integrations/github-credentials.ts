import type { Db } from "../../db/database.ts";
import { GitHubError, type GitHubApp } from "../../integrations/github/index.ts";
import type { Logger } from "../../logger.ts";
import { DomainError, unavailable } from "../errors.ts";
import type { GitAuth } from "../repositories/git-port.ts";
import { findLiveIntegrationById, setInstallationSuspended } from "./integration-rows.ts";

// The mirror's credentials for repositories registered through a GitHub App
// installation: an installation access token, asked of Octokit just before
// each fetch (it keeps one per installation until shortly before its hour is
// up) and handed to git through its environment only (see MirrorCache). A
// repository whose installation is suspended, deleted or disconnected fails
// its fetch at once with a clear error, before git runs; a read of it is then
// served from the mirror as of its last fetch, and one that needs a fetch
// (a first read, an unknown ref) answers that error.

export type MirrorCredentials = (repoKey: string, url: string, opts: { refresh: boolean }) => Promise<GitAuth | null>;

const refusedFetch = (message: string) => new DomainError("conflict", message);

export function githubMirrorCredentials(deps: { db: Db; github: GitHubApp | null; missing: readonly string[]; logger: Logger }): MirrorCredentials {
  const { db, github, logger } = deps;
  return async (repoKey, url, { refresh }) => {
    const repo = await db
      .selectFrom("repositories")
      .select(["id", "provider", "integration_id", "github_repository_id"])
      .where("id", "=", repoKey)
      .executeTakeFirst();
    // Registration fetches before the row exists and passes its own token; other repositories fetch without credentials.
    if (!repo || repo.provider !== "github" || repo.github_repository_id === null) return null;
    if (repo.integration_id === null) {
      throw refusedFetch(
        "This repository's GitHub App installation was disconnected (or lost access to it): it is no longer fetched, and is served as of its last fetch",
      );
    }
    const integration = await findLiveIntegrationById(db, repo.integration_id);
    if (!integration)
      throw refusedFetch("This repository's GitHub App installation was disconnected: it is no longer fetched, and is served as of its last fetch");
    const installationId = Number(integration.installation_id);
    if (integration.suspended)
      throw refusedFetch(`The GitHub App installation ${installationId} of this repository is suspended: it is not fetched until it is unsuspended on GitHub`);
    if (!github) throw unavailable(`The GitHub integration is not configured on this server: set ${deps.missing.join(", ")}`);
    // The token is for GitHub's git host only, never for a URL elsewhere.
    if (!sameOrigin(url, github.config.webUrl)) {
      logger.warn({ repository_id: repoKey }, "a GitHub repository's URL is not on the configured GitHub host; fetching without a token");
      throw refusedFetch("This repository's URL is not on the configured GitHub host, so no installation token is sent to it");
    }
    try {
      const { token } = await github.installationToken(installationId, { refresh });
      return { username: "x-access-token", password: token };
    } catch (err) {
      if (!(err instanceof GitHubError)) throw err;
      if (err.kind === "installation_suspended") {
        // GitHub knew before its webhook reached us: record it, so later fetches stop before asking.
        await setInstallationSuspended(db, installationId, true).catch(() => undefined);
        throw refusedFetch(
          `The GitHub App installation ${installationId} of this repository is suspended: it is not fetched until it is unsuspended on GitHub`,
        );
      }
      if (err.kind === "installation_not_found") {
        throw refusedFetch(
          `The GitHub App installation ${installationId} of this repository no longer exists on GitHub: it is no longer fetched, and is served as of its last fetch`,
        );
      }
      throw unavailable(`Could not get a token for the GitHub App installation ${installationId}: ${err.message}`, err);
    }
  };
}

function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}
