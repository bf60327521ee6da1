import { GitHubError, toGitHubError, type GitHubApp } from "../../integrations/github/index.ts";
import type { CheckRunRequest, CheckRunsApi } from "./check-run-syncer.ts";

// The check-runs API through the App's installation: what the syncer sends,
// as GitHub's REST calls. An installation or repository that is gone (or an
// App whose credentials GitHub refuses) will not come back by asking again:
// those failures are permanent; the rest (unreachable, 5xx, rate limits) are
// retried by the syncer.

const PERMANENT = new Set(["installation_not_found", "installation_suspended", "repository_not_found", "app_credentials_refused"]);

class CheckRunFailure extends Error {
  readonly permanent: boolean;
  constructor(message: string, permanent: boolean, cause: unknown) {
    super(message, { cause });
    this.permanent = permanent;
  }
}

function split(fullName: string): { owner: string; repo: string } {
  const [owner, repo] = fullName.split("/");
  return { owner: owner ?? "", repo: repo ?? "" };
}

export function githubCheckRuns(app: GitHubApp): CheckRunsApi {
  const call = async <T>(installationId: number, what: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      const e = toGitHubError(err, { op: "request", installationId }, app.config.requestTimeoutMs);
      if (!(e instanceof GitHubError)) throw e;
      // A 422 says the request itself is wrong (GitHub's validation): sending it again will not help either.
      const permanent = PERMANENT.has(e.kind) || e.status === 422 || e.status === 404;
      throw new CheckRunFailure(`${what}: ${e.message}`, permanent, e);
    }
  };
  return {
    async create(installationId: number, fullName: string, body: CheckRunRequest): Promise<string> {
      const octokit = await call(installationId, "creating the check run", () => app.installationOctokit(installationId));
      const res = await call(installationId, "creating the check run", () =>
        octokit.request("POST /repos/{owner}/{repo}/check-runs", { ...split(fullName), ...body }),
      );
      return String((res.data as { id: number }).id);
    },
    async update(installationId, fullName, checkRunId, body): Promise<void> {
      const octokit = await call(installationId, "updating the check run", () => app.installationOctokit(installationId));
      await call(installationId, "updating the check run", () =>
        octokit.request("PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}", { ...split(fullName), check_run_id: Number(checkRunId), ...body }),
      );
    },
  };
}
