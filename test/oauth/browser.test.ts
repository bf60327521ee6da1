import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as oauth from "oauth4webapi";
import type { Browser } from "playwright-core";
import { launchBrowser } from "../helpers/browser.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";
import { authorizationUrl, discover, insecure } from "./helpers.ts";

// The sign-in and consent page in a real browser (Debian's Chromium): what a
// person sees and does, the cookie it gets, CSRF and framing refused.

let svc: TestService;
let base: string;
let as: oauth.AuthorizationServer;
let alice: Tenant;
let browser: Browser;
let app: Server;
let appBase: string;
let client: oauth.Client;

beforeAll(async () => {
  svc = await startTestService();
  base = svc.url;
  as = await discover(base);
  alice = await svc.tenant();
  // The third-party app: its callback, and a page that tries to frame the authorization page.
  app = createServer((req, res) => {
    if (req.url?.startsWith("/frame")) {
      res
        .writeHead(200, { "content-type": "text/html" })
        .end(`<!doctype html><iframe id="f" src="${decodeURIComponent(req.url.slice("/frame?u=".length))}"></iframe>`);
      return;
    }
    if (req.url?.startsWith("/forge")) {
      // A cross-site form posting a consent with a made-up CSRF token.
      const fields = JSON.parse(decodeURIComponent(req.url.slice("/forge?f=".length))) as Record<string, string>;
      const inputs = Object.entries(fields)
        .map(([k, v]) => `<input type="hidden" name="${k}" value="${v}">`)
        .join("");
      res
        .writeHead(200, { "content-type": "text/html" })
        .end(`<!doctype html><form id="x" method="post" action="${base}/oauth/authorize">${inputs}<button id="go">go</button></form>`);
      return;
    }
    res.writeHead(200, { "content-type": "text/plain" }).end("callback");
  });
  await new Promise<void>((r) => app.listen(0, "127.0.0.1", r));
  appBase = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  client = await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(
      as,
      { redirect_uris: [`${appBase}/callback`], token_endpoint_auth_method: "none", client_name: "Browser Test App" },
      insecure,
    ),
  );
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  app?.close();
  await svc?.close();
});

async function start(scope = "repositories:read runs:read") {
  const verifier = oauth.generateRandomCodeVerifier();
  const url = authorizationUrl(as, {
    clientId: client.client_id,
    redirectUri: `${appBase}/callback`,
    challenge: await oauth.calculatePKCECodeChallenge(verifier),
    state: "b1",
    scope,
  });
  return { verifier, url };
}

describe("the authorization page in Chromium", () => {
  it("signs in with an API key, shows client, redirect host and scopes, and Allow returns a code that redeems", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const { verifier, url } = await start();
    await page.goto(url);
    expect(await page.locator("#client-name").first().textContent()).toBe("Browser Test App");
    await page.fill("#api_key", alice.key);
    await page.click("button[type=submit]");
    await page.waitForSelector("#scopes");
    expect(await page.locator("#scopes li").allTextContents()).toEqual(["repositories:read", "runs:read"]);
    expect(await page.locator("#redirect-host").textContent()).toBe(new URL(appBase).host);
    const cookies = await context.cookies(base);
    const session = cookies.find((c) => c.name === "codeplane_session")!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax", secure: false });
    expect(session.value).toMatch(/^cps_/);
    await Promise.all([page.waitForURL(`${appBase}/callback**`), page.click("button[value=allow]")]);
    const back = new URL(page.url());
    const params = oauth.validateAuthResponse(as, client, back, "b1");
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, `${appBase}/callback`, verifier, insecure),
    );
    expect(tokens.scope).toBe("repositories:read runs:read");
    await context.close();
  });

  it("Deny sends the person back with access_denied", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const { url } = await start("env:read");
    await page.goto(url);
    await page.fill("#api_key", alice.key);
    await page.click("button[type=submit]");
    await page.waitForSelector("#scopes");
    await Promise.all([page.waitForURL(`${appBase}/callback**`), page.click("button[value=deny]")]);
    expect(new URL(page.url()).searchParams.get("error")).toBe("access_denied");
    await context.close();
  });

  it("refuses a cross-site form with a forged CSRF token, even with the session cookie", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const { url } = await start("analyses:read");
    await page.goto(url);
    await page.fill("#api_key", alice.key);
    await page.click("button[type=submit]");
    await page.waitForSelector("#scopes");
    const fields: Record<string, string> = await page.$$eval("form input[type=hidden]", (els) =>
      Object.fromEntries(els.map((e) => [e.getAttribute("name") ?? "", e.getAttribute("value") ?? ""])),
    );
    fields.csrf_token = "forged";
    fields.decision = "allow";
    await page.goto(`${appBase}/forge?f=${encodeURIComponent(JSON.stringify(fields))}`);
    const [response] = await Promise.all([page.waitForResponse((r) => r.url() === `${base}/oauth/authorize`), page.click("#go")]);
    expect(response.status()).toBe(403);
    expect(page.url()).not.toContain("code=");
    await context.close();
  });

  it("cannot be framed (CSP frame-ancestors 'none')", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const { url } = await start();
    const refused: string[] = [];
    page.on("console", (m) => refused.push(m.text()));
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().startsWith(`${base}/oauth/authorize`)),
      page.goto(`${appBase}/frame?u=${encodeURIComponent(url)}`),
    ]);
    expect(response.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
    await page.waitForTimeout(300);
    const frame = page.frames().find((f) => f !== page.mainFrame());
    // The frame holds Chromium's error page, not the form.
    const hasForm = frame
      ? await frame
          .locator("#api_key")
          .count()
          .catch(() => 0)
      : 0;
    expect(hasForm).toBe(0);
    expect(refused.join("\n")).toMatch(/frame-ancestors|Refused to frame/);
    await context.close();
  });

  it("runs no script and loads nothing from elsewhere", async () => {
    const res = await fetch((await start()).url);
    const html = await res.text();
    expect(html).not.toMatch(/<script|<link|src=|https?:\/\/(?!127\.0\.0\.1)/);
    expect(res.headers.get("content-security-policy")).toMatch(
      /^default-src 'none'; style-src 'sha256-[^']+'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'$/,
    );
  });
});
