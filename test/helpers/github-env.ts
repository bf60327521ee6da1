import { generateKeyPairSync } from "node:crypto";
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

/**
 * The settings of a service whose GitHub App only receives webhooks signed
 * with `secret`: a fresh key, and an API address where nothing listens, for
 * tests that never need GitHub's API.
 */
export function webhookOnlyGitHubEnv(secret: string, extra: Record<string, string> = {}): Record<string, string> {
  const { privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  return {
    CODEPLANE_GITHUB_APP_ID: "123",
    CODEPLANE_GITHUB_PRIVATE_KEY: privateKey,
    CODEPLANE_GITHUB_WEBHOOK_SECRET: secret,
    CODEPLANE_GITHUB_APP_SLUG: "codeplane-test",
    CODEPLANE_GITHUB_API_URL: "http://127.0.0.1:9/api/v3",
    CODEPLANE_PUBLIC_URL: "http://127.0.0.1:8080",
    ...extra,
  };
}
