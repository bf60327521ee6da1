import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchBrowser, UI_TEST_MS, UI_WAIT_MS } from "../helpers/browser.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFixtureRepo, type FixtureRepo } from "../helpers/git-fixture.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";

// The dashboard (/ui) in a real browser (Debian's Chromium) against the real
// service and Postgres: sign-in into the session cookie, API keys, a
// repository browsed at refs, environment variables, the CSP holding with
// nothing refused, and the cookie refused cross-site.

let svc: TestService;
let alice: Tenant;
let fixture: FixtureRepo;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** Console errors, page errors and CSP violations: the dashboard must work under its CSP with none. */
const problems: string[] = [];
let attacker: Server;
let attackerBase: string;

beforeAll(async () => {
  svc = await startTestService();
  alice = await svc.tenant();
  fixture = await createFixtureRepo();
  browser = await launchBrowser();
  context = await browser.newContext();
  await context.addInitScript({
    content: 'document.addEventListener("securitypolicyviolation", (e) => console.error("CSP violation: " + e.violatedDirective + " " + e.blockedURI));',
  });
  page = await context.newPage();
  page.setDefaultTimeout(UI_WAIT_MS);
  page.on("console", (m) => {
    // HTTP error statuses the page expects and handles (401 before sign-in, 404 probing whether a path is a
    // directory, the 422 and 403 provoked below) are logged by Chromium as "Failed to load resource"; anything else counts.
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource: the server responded with a status of")) problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(e.message));
  page.on("dialog", (d) => void d.accept());
  // Another site (same host, another port: same-site for cookies, so the Lax cookie travels) with a forged form.
  attacker = createServer((_req, res) => {
    res
      .writeHead(200, { "content-type": "text/html" })
      .end(
        `<!doctype html><form id="x" method="post" enctype="text/plain" action="${svc.url}/v1/auth/keys"><input type="hidden" name='{"name":"forged","x":"' value='"}'><button id="go">go</button></form>`,
      );
  });
  await new Promise<void>((r) => attacker.listen(0, "127.0.0.1", r));
  attackerBase = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
}, UI_TEST_MS);

afterAll(async () => {
  await browser?.close();
  attacker?.close();
  await fixture?.cleanup();
  await svc?.close();
});

const keyNames = async () => ((await (await alice.api("/v1/auth/keys?limit=100")).json()) as { items: { name: string }[] }).items.map((k) => k.name);

describe("the dashboard in Chromium", { timeout: UI_TEST_MS }, () => {
  it("is served under a strict CSP with no inline script or style", async () => {
    const res = await fetch(`${svc.url}/ui/`);
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
    const html = await res.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=|<style/);
    expect(html).not.toMatch(/https?:\/\//);
    const js = await fetch(`${svc.url}/ui/app/main.ts`);
    expect(js.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(await js.text()).not.toMatch(/: Promise<void>/); // types stripped
    expect((await fetch(`${svc.url}/ui/app/../router.ts`)).status).toBe(404);
  });

  it("signs in with an API key into an HttpOnly, SameSite cookie", async () => {
    await page.goto(`${svc.url}/ui/`);
    await page.locator("#api-key").fill("cp_not_a_key");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "not a valid API key" }).first().waitFor();
    await page.locator("#api-key").fill(alice.key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Repositories" }).waitFor();
    const cookie = (await context.cookies()).find((c) => c.name === "codeplane_session")!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/" });
    expect(cookie.value).toMatch(/^cps_/);
    // The key is not kept by the page.
    expect(await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }))).not.toContain("cp_");
  });

  it("creates a key with scopes, shows it once, and revokes it", async () => {
    await page.goto(`${svc.url}/ui/#/keys`);
    await page.locator("#key-name").fill("from the dashboard");
    await page.getByRole("checkbox", { name: "runs:read" }).check();
    await page.getByRole("button", { name: "Create key" }).click();
    const key = (await page.locator("#new-key").textContent())!;
    expect(key).toMatch(/^cp_/);
    const works = await fetch(`${svc.url}/v1/runs`, { headers: { authorization: `Bearer ${key}` } });
    expect(works.status).toBe(200);
    expect((await fetch(`${svc.url}/v1/repositories`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(403);
    await page.reload();
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    await page.getByRole("cell", { name: "from the dashboard", exact: true }).waitFor();
    expect(await page.content()).not.toContain(key);
    await page.getByRole("button", { name: "Revoke from the dashboard" }).click();
    await page.getByRole("cell", { name: "from the dashboard", exact: true }).waitFor({ state: "detached" });
    expect((await fetch(`${svc.url}/v1/runs`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(401);
  });

  it("registers a repository and browses it at branches, tags and commits", async () => {
    await page.goto(`${svc.url}/ui/#/repos`);
    await page.locator("#repo-url").fill(fixture.url);
    await page.locator("#repo-name").fill("fixture");
    await page.getByRole("button", { name: "Register" }).click();
    await page.getByRole("heading", { name: "fixture", level: 1 }).waitFor();
    await page.getByRole("link", { name: "README.md" }).waitFor();
    await page.getByRole("link", { name: "a/", exact: true }).click();
    await page.getByRole("link", { name: "top.txt" }).click();
    await page.locator("#file-content", { hasText: "top of a" }).waitFor();
    // The binary file and the large one.
    const repoUrl = page.url().split("?")[0]!;
    await page.goto(`${repoUrl}?ref=main&path=image.png`);
    await page.locator("#binary-notice").waitFor();
    await page.goto(`${repoUrl}?ref=main&path=large.txt`);
    await page.locator("#file-content").waitFor();
    const large = (await (await alice.api(`/v1/repositories/${repoUrl.split("/").at(-1)}/files/large.txt`)).json()) as { truncated: boolean };
    expect(await page.locator("#truncated-notice").count()).toBe(large.truncated ? 1 : 0);
    await page.goto(`${repoUrl}?ref=main&path=scripts/run.sh`);
    await page.locator("#file-content .tok-str, #file-content .tok-com").first().waitFor();
    // At the lightweight tag only README.md exists; at a commit, by its hash.
    await page.goto(repoUrl);
    await page.locator("#tree").waitFor();
    await page.locator("#ref").fill("light");
    await page.getByRole("button", { name: "Browse" }).click();
    await page.locator(`#last-commit[data-commit="${fixture.commits.initial}"]`).waitFor();
    expect(await page.locator("#last-commit .commit-title").textContent()).toBe("Initial commit");
    await expect.poll(() => page.locator("#tree tr").count(), { timeout: UI_WAIT_MS }).toBe(1);
    await page.locator("#ref").fill(fixture.commits.feature);
    await page.getByRole("button", { name: "Browse" }).click();
    await page.getByRole("link", { name: "feature.txt" }).waitFor();
  });

  it("adds environment variables and never shows a secret's value", async () => {
    await page.goto(`${svc.url}/ui/#/env`);
    await page.locator("#env-name").fill("API_TOKEN");
    await page.locator("#env-value").fill("s3cr3t-value-123");
    await page.getByRole("button", { name: "Add variable" }).click();
    await page.locator('[data-env="API_TOKEN"]').waitFor();
    await page.locator("#env-name").fill("PLAIN");
    await page.locator("#env-value").fill("visible-value");
    await page.locator("#env-secret").uncheck();
    await page.getByRole("button", { name: "Add variable" }).click();
    await page.getByText("visible-value").waitFor();
    await page.reload();
    await page.locator('[data-env="API_TOKEN"]').waitFor();
    expect(await page.content()).not.toContain("s3cr3t-value-123");
    expect(await page.locator('[data-env="API_TOKEN"]').textContent()).toContain("secret (never shown)");
    // A 422 is shown next to its field.
    await page.locator("#env-name").fill("not a name!");
    await page.locator("#env-value").fill("x");
    await page.getByRole("button", { name: "Add variable" }).click();
    await page.locator("label[for=env-name] .field-error", { hasText: /\S/ }).waitFor();
  });

  it("refuses the session cookie cross-site, and without the CSRF token", async () => {
    // A browser of its own, signed in here: this test does not lean on the session the earlier ones used.
    const own = await browser.newContext();
    const signedIn = await own.request.post(`${svc.url}/ui/session`, {
      headers: { "content-type": "application/json" },
      data: JSON.stringify({ api_key: alice.key }),
    });
    expect(signedIn.status()).toBe(201);
    const before = await keyNames();
    // Over plain HTTP with the browser's cookie: without X-CSRF-Token, refused.
    const cookie = (await own.cookies()).find((c) => c.name === "codeplane_session")!;
    const headers = { cookie: `codeplane_session=${cookie.value}`, "content-type": "application/json" };
    const noToken = await fetch(`${svc.url}/v1/auth/keys`, { method: "POST", headers, body: JSON.stringify({ name: "no-token" }) });
    expect(noToken.status).toBe(403);
    expect(await keyNames()).toEqual(before);
    // The cookie with a cross-site marker is no credential; with the right token and origin it is.
    expect((await fetch(`${svc.url}/v1/repositories`, { headers: { ...headers, "sec-fetch-site": "cross-site" } })).status).toBe(401);
    expect((await fetch(`${svc.url}/v1/repositories`, { headers })).status).toBe(200);
    const session = (await (await fetch(`${svc.url}/ui/session`, { headers })).json()) as { csrf_token: string };
    const post = (extra: Record<string, string>) =>
      fetch(`${svc.url}/v1/auth/keys`, { method: "POST", headers: { ...headers, ...extra }, body: JSON.stringify({ name: "with-token" }) });
    expect((await post({ "x-csrf-token": "wrong" })).status).toBe(403);
    expect((await post({ "x-csrf-token": session.csrf_token, origin: attackerBase })).status).toBe(403);
    expect((await post({ "x-csrf-token": session.csrf_token, origin: svc.url })).status).toBe(201);
    // Reading the session (its CSRF token) cross-site is refused too, and so is signing in from another site.
    expect((await fetch(`${svc.url}/ui/session`, { headers: { ...headers, "sec-fetch-site": "cross-site" } })).status).toBe(403);
    expect(
      (
        await fetch(`${svc.url}/ui/session`, {
          method: "POST",
          headers: { "content-type": "application/json", origin: attackerBase },
          body: JSON.stringify({ api_key: alice.key }),
        })
      ).status,
    ).toBe(403);
    // The cookie is never a credential on /mcp.
    expect(
      (
        await fetch(`${svc.url}/mcp`, {
          method: "POST",
          headers: { ...headers, "x-csrf-token": session.csrf_token, accept: "application/json, text/event-stream" },
          body: "{}",
        })
      ).status,
    ).toBe(401);
    // In the browser: a same-origin fetch without the token is refused too.
    const dashboard = await own.newPage();
    dashboard.setDefaultTimeout(UI_WAIT_MS);
    await dashboard.goto(`${svc.url}/ui/`);
    await dashboard.getByRole("heading", { name: "Repositories" }).waitFor();
    expect(
      await dashboard.evaluate(
        async () =>
          (await fetch("/v1/auth/keys", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "no-token" }) }))
            .status,
      ),
    ).toBe(403);
    // A form on another site posting to /v1 with the browser's cookie: no credential, and the session is unharmed.
    const other = await own.newPage();
    other.setDefaultTimeout(UI_WAIT_MS);
    await other.goto(attackerBase);
    const [response] = await Promise.all([other.waitForResponse((r) => r.url().startsWith(`${svc.url}/v1/auth/keys`)), other.click("#go")]);
    expect(response.status()).toBe(401);
    // Closing a page while its navigation commits can hang Chromium's close (crbug.com/536385539), so let it land first.
    await other.waitForURL(`${svc.url}/v1/auth/keys`, { waitUntil: "load" });
    await other.close();
    expect((await keyNames()).filter((n) => n === "forged" || n === "no-token")).toEqual([]);
    expect(await dashboard.evaluate(async () => (await fetch("/ui/session", { cache: "no-store" })).status)).toBe(200);
    await own.close();
  });

  it("signs out: the session stops working at once", async () => {
    const cookie = (await context.cookies()).find((c) => c.name === "codeplane_session")!;
    await page.goto(`${svc.url}/ui/#/repos`);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    expect((await fetch(`${svc.url}/v1/repositories`, { headers: { cookie: `codeplane_session=${cookie.value}` } })).status).toBe(401);
    expect((await context.cookies()).find((c) => c.name === "codeplane_session")).toBeUndefined();
  });

  it("offers the API-key form only, without an OpenID Connect provider", async () => {
    const methods = await fetch(`${svc.url}/ui/sign-in`);
    expect(methods.headers.get("cache-control")).toBe("no-store");
    expect(await methods.json()).toEqual({ api_key: true, oidc: null });
    await page.goto(`${svc.url}/ui/`);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    expect(await page.locator("#api-key").count()).toBe(1);
    expect(await page.locator("#oidc-sign-in").count()).toBe(0);
    const start = (headers: Record<string, string>, body = "{}") => fetch(`${svc.url}/ui/sign-in/oidc`, { method: "POST", headers, body });
    expect(await (await start({ "content-type": "application/json" })).json()).toEqual({
      detail: "Sign-in through an OpenID Connect provider is not configured",
    });
    expect((await start({ "content-type": "application/json", "sec-fetch-site": "same-site" })).status).toBe(403);
    expect((await start({ "content-type": "text/plain" })).status).toBe(415);
    expect((await start({ "content-type": "application/json" }, "[]")).status).toBe(400);
  });

  it("saw no console error, page error or CSP violation", () => {
    expect(problems).toEqual([]);
  });
});
