import type { Browser, Page } from "playwright-core";
import { launchBrowser, UI_TEST_MS, UI_WAIT_MS } from "../helpers/browser.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGitHubDouble, type GitHubDouble } from "../helpers/github-double/index.ts";
import { githubEnvFor } from "../helpers/github-env.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";
import { freePort } from "../helpers/free-port.ts";

// The dashboard's GitHub view against the GitHub double, in Chromium: the
// install link, GitHub's redirect through the setup callback back to the
// dashboard, the installation's repositories, one registered and browsed.

let gh: GitHubDouble;
let svc: TestService;
let alice: Tenant;
let browser: Browser;
let page: Page;
const problems: string[] = [];

beforeAll(async () => {
  gh = await startGitHubDouble({ appSlug: "codeplane-test" });
  // The public URL is the one the browser uses: the session cookie's CSRF checks compare origins with it.
  const port = await freePort();
  svc = await startTestService({ ...githubEnvFor(gh, `http://127.0.0.1:${port}`), PORT: String(port) });
  alice = await svc.tenant();
  browser = await launchBrowser();
  page = await browser.newPage();
  page.setDefaultTimeout(UI_WAIT_MS);
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource: the server responded with a status of")) problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(e.message));
}, UI_TEST_MS);

afterAll(async () => {
  await browser?.close();
  await svc?.close();
  await gh?.close();
});

describe("GitHub in the dashboard", { timeout: UI_TEST_MS }, () => {
  it("connects an installation through GitHub's redirect, registers one of its repositories and browses it", async () => {
    const inst = gh.addInstallation({ account: { login: "acme", type: "Organization" }, repositorySelection: "selected" }).id;
    await gh.addRepository({
      owner: "acme",
      name: "widgets",
      private: true,
      files: { "README.md": "# widgets\n", "src/app.py": "print('w')\n" },
      installationId: inst,
    });
    await gh.addRepository({ owner: "acme", name: "gadgets", private: false, files: { "README.md": "# gadgets\n" }, installationId: inst });

    await page.goto(`${svc.url}/ui/`);
    await page.locator("#api-key").fill(alice.key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Repositories" }).waitFor();
    await page.getByRole("link", { name: "GitHub" }).click();
    const install = page.getByRole("link", { name: /Install the GitHub App/ });
    const href = (await install.getAttribute("href"))!;
    expect(href).toMatch(new RegExp(`^${gh.url}/apps/codeplane-test/installations/new\\?state=`));
    // GitHub sends the browser to the App's setup URL once installed.
    const state = new URL(href).searchParams.get("state")!;
    await page.goto(`${svc.url}/v1/integrations/github/callback?installation_id=${inst}&setup_action=install&state=${encodeURIComponent(state)}`);
    await page.getByText("Installation connected.").waitFor();
    expect(page.url()).toMatch(new RegExp(`/ui/#/integrations/[0-9a-f-]{36}$`));

    await page.getByText("Repositories it can see").click();
    await page.locator('[data-full-name="acme/widgets"]').waitFor();
    expect(await page.locator("[data-full-name]").count()).toBe(2);
    await page.getByRole("button", { name: "Register acme/widgets" }).click();
    await page.locator('[data-full-name="acme/widgets"]').getByRole("link", { name: "Open" }).click();
    await page.getByRole("heading", { name: "widgets", level: 1 }).waitFor();
    await page.getByRole("link", { name: "src/" }).click();
    await page.getByRole("link", { name: "app.py" }).click();
    await page.locator("#file-content", { hasText: "print('w')" }).waitFor();
    const repos = (await (await alice.api("/v1/repositories")).json()) as { items: { name: string; provider: string }[] };
    expect(repos.items).toEqual([expect.objectContaining({ name: "widgets", provider: "github" })]);
    expect(problems).toEqual([]);
  });
});
