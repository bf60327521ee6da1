import type { GitHubDouble } from "./github-double/index.ts";

/** The settings of a service whose GitHub App is the double's. */
export function githubEnvFor(gh: GitHubDouble, publicUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    CODEPLANE_GITHUB_APP_ID: String(gh.appId),
    CODEPLANE_GITHUB_PRIVATE_KEY: gh.privateKey,
    CODEPLANE_GITHUB_WEBHOOK_SECRET: gh.webhookSecret,
    CODEPLANE_GITHUB_APP_SLUG: gh.appSlug,
    CODEPLANE_GITHUB_API_URL: gh.apiUrl,
    CODEPLANE_GITHUB_TIMEOUT_SECONDS: "5",
    CODEPLANE_PUBLIC_URL: publicUrl,
    ...extra,
  };
}
