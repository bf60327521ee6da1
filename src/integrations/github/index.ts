// The GitHub App integration's adapter: everything codeplane says to GitHub's
// REST API goes through here. Stable interface (other parts import these
// names; keep them):
//
//   GitHubApp (./app.ts), built from config.github and a logger:
//     installationOctokit(installationId) -> Octokit acting as the installation,
//       e.g. octokit.request("POST /repos/{owner}/{repo}/check-runs", {...})
//     installationToken(installationId, {refresh?}) -> {token, expiresAt}
//       (cached by Octokit until shortly before it expires; for git over HTTPS
//       as x-access-token; never log, store or pass it on)
//     getInstallation(installationId) -> GitHubInstallation
//     listInstallationRepositories(installationId, {page, perPage})
//     getRepository(installationId, "owner/name") -> GitHubRepository
//     installUrl(state), cloneUrl(fullName), config, appOctokit
//   GitHubError (./errors.ts) with `kind`: not_configured, installation_suspended,
//     installation_not_found, repository_not_found, app_credentials_refused,
//     unavailable (unreachable, timed out, 5xx, rate limited: retryAfterSeconds);
//     GitHubNotConfiguredError (kind not_configured, `missing` settings).
//   toGitHubError(err, operation, timeoutMs): what an Octokit call threw, as a GitHubError.
//
// Every request is limited to config.github.requestTimeoutMs
// (CODEPLANE_GITHUB_TIMEOUT_SECONDS), so nothing waits on GitHub for ever.
// Rows of connected installations are the domain's: src/domain/integrations.
export { GitHubApp, type GitHubAppOptions, type GitHubInstallation, type GitHubRepository, type InstallationOctokit, type InstallationToken } from "./app.ts";
export { GitHubError, GitHubNotConfiguredError, toGitHubError, type GitHubErrorKind, type GitHubOperation } from "./errors.ts";
