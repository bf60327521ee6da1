import { generateKeyPairSync, randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, githubWebUrl, loadConfig } from "../../config.ts";

// The GitHub App's settings as src/config.ts reads them (beside the adapter they configure).

const base = { DATABASE_URL: "postgres://x@127.0.0.1/db", CODEPLANE_ENCRYPTION_KEY: randomBytes(32).toString("base64") };
const pem = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs1", format: "pem" }).toString();
const app = {
  CODEPLANE_GITHUB_APP_ID: "12345",
  CODEPLANE_GITHUB_PRIVATE_KEY: pem,
  CODEPLANE_GITHUB_WEBHOOK_SECRET: "s3cret",
  CODEPLANE_GITHUB_APP_SLUG: "codeplane",
  CODEPLANE_PUBLIC_URL: "https://codeplane.example.com/",
};

describe("the GitHub App settings", () => {
  it("are off when none is set, naming what is missing", () => {
    const c = loadConfig(base);
    expect(c.github).toBeNull();
    expect(c.publicUrl).toBeNull();
    expect(c.githubMissing).toEqual([
      "CODEPLANE_GITHUB_APP_ID",
      "CODEPLANE_GITHUB_PRIVATE_KEY (or CODEPLANE_GITHUB_PRIVATE_KEY_FILE)",
      "CODEPLANE_GITHUB_WEBHOOK_SECRET",
      "CODEPLANE_GITHUB_APP_SLUG",
      "CODEPLANE_PUBLIC_URL",
    ]);
  });

  it("give an App for github.com with every required one", () => {
    const c = loadConfig({ ...base, ...app, CODEPLANE_GITHUB_WEBHOOK_OLD_SECRETS: "old1, old2,," });
    expect(c.github).toEqual({
      appId: "12345",
      privateKey: pem.trim() + "\n",
      webhookSecret: "s3cret",
      oldWebhookSecrets: ["old1", "old2"],
      appSlug: "codeplane",
      apiUrl: "https://api.github.com",
      webUrl: "https://github.com",
      requestTimeoutMs: 10_000,
    });
    expect(c.githubMissing).toEqual([]);
    expect(c.publicUrl).toBe("https://codeplane.example.com");
  });

  it("take the key from a file, or with its line breaks written as \\n", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "gh-key-"));
    const file = path.join(dir, "app.pem");
    writeFileSync(file, pem);
    const { CODEPLANE_GITHUB_PRIVATE_KEY: _, ...noKey } = app;
    expect(loadConfig({ ...base, ...noKey, CODEPLANE_GITHUB_PRIVATE_KEY_FILE: file }).github!.privateKey).toBe(pem.trim() + "\n");
    expect(loadConfig({ ...base, ...app, CODEPLANE_GITHUB_PRIVATE_KEY: pem.trim().replaceAll("\n", "\\n") }).github!.privateKey).toBe(pem.trim() + "\n");
  });

  it.each([
    ["some but not all set", { CODEPLANE_GITHUB_APP_ID: "1" }, /CODEPLANE_GITHUB_PRIVATE_KEY: required for the GitHub App/],
    ["the App without a public URL", { ...app, CODEPLANE_PUBLIC_URL: undefined }, /CODEPLANE_PUBLIC_URL: required for the GitHub App/],
    ["only an API URL", { CODEPLANE_GITHUB_API_URL: "https://ghe.example.com/api/v3" }, /CODEPLANE_GITHUB_APP_ID: required/],
    ["both the key and its file", { ...app, CODEPLANE_GITHUB_PRIVATE_KEY_FILE: "/x.pem" }, /set either it or CODEPLANE_GITHUB_PRIVATE_KEY, not both/],
    [
      "a key file that cannot be read",
      { ...app, CODEPLANE_GITHUB_PRIVATE_KEY: undefined, CODEPLANE_GITHUB_PRIVATE_KEY_FILE: "/nonexistent/app.pem" },
      /CODEPLANE_GITHUB_PRIVATE_KEY_FILE: cannot read \/nonexistent\/app.pem \(ENOENT\)/,
    ],
    ["a key that is no PEM", { ...app, CODEPLANE_GITHUB_PRIVATE_KEY: "not-a-key" }, /CODEPLANE_GITHUB_PRIVATE_KEY: must be the App's private key/],
    ["an app id that is no number", { ...app, CODEPLANE_GITHUB_APP_ID: "codeplane" }, /CODEPLANE_GITHUB_APP_ID: must be the App's numeric id/],
    ["a slug with capitals", { ...app, CODEPLANE_GITHUB_APP_SLUG: "CodePlane" }, /CODEPLANE_GITHUB_APP_SLUG/],
    [
      "an API URL with credentials",
      { ...app, CODEPLANE_GITHUB_API_URL: "https://u:p@ghe.example.com/api/v3" },
      /CODEPLANE_GITHUB_API_URL: must not carry credentials/,
    ],
    ["a public URL that is no URL", { ...app, CODEPLANE_PUBLIC_URL: "codeplane.example.com" }, /CODEPLANE_PUBLIC_URL/],
  ])("refuse %s at start", (_name, env, message) => {
    expect(() => loadConfig({ ...base, ...env })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, ...env })).toThrow(message);
  });

  it("never quote the key in an error", () => {
    const secret = "-----BEGIN RSA PRIVATE KEY-----\nTOPSECRET\n-----END RSA PRIVATE KEY-----";
    expect(() => loadConfig({ ...base, ...app, CODEPLANE_GITHUB_PRIVATE_KEY: secret })).toThrow(/^(?![\s\S]*TOPSECRET)/);
  });

  it.each([
    ["https://api.github.com", "https://github.com"],
    ["https://api.github.com/", "https://github.com"],
    ["https://ghe.example.com/api/v3", "https://ghe.example.com"],
    ["https://ghe.example.com/api/v3/", "https://ghe.example.com"],
    ["http://127.0.0.1:4321/api/v3", "http://127.0.0.1:4321"],
    ["https://api.acme.ghe.com", "https://acme.ghe.com"],
    ["https://git.example.com/github/api/v3", "https://git.example.com/github"],
  ])("derive the web URL of %s: %s", (api, web) => {
    expect(githubWebUrl(api)).toBe(web);
    expect(loadConfig({ ...base, ...app, CODEPLANE_GITHUB_API_URL: api }).github!.webUrl).toBe(web);
  });
});
