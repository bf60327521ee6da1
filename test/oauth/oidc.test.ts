import { execFile as execFileCb, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { createAccount } from "../../src/domain/accounts/accounts.ts";
import { startTestService, type TestService } from "../helpers/service.ts";
import { authorizationUrl, discover, FormBrowser, hiddenFields, insecure } from "./helpers.ts";
import { freePort } from "../helpers/free-port.ts";
import { launchBrowser } from "../helpers/browser.ts";

// Sign-in through an upstream OpenID Connect provider, against a real one:
// Dex, built from the Go module proxy by hack/tools/dex.sh (cached under
// ~/.cache/codeplane/dex/<version>; the first build takes a few minutes),
// listening on loopback with in-memory storage and its password database.
// The whole login is driven as a browser would: codeplane's page, Dex's login
// form, the callback, consent; then the tokens are used on /v1.

const execFile = promisify(execFileCb);
const ROOT = path.resolve(import.meta.dirname, "../..");

// bcrypt (cost 10) of PASSWORD, which Dex's password database requires; made
// once with golang.org/x/crypto/bcrypt (node has no bcrypt). Test data only.
const PASSWORD = "correct horse battery staple";
const PASSWORD_HASH = "$2a$10$ZmS0fMZDYeVAfX6fcAYF4udAy/oouIuSz7RcTm/iicvXqsbMSoiWm";
const DEX_CLIENT_SECRET = "codeplane-test-secret-4f1d2c";

let dex: ChildProcess | undefined;
let dexOutput = "";
let workDir: string;
let svc: TestService;
let issuer: string;
let base: string;
let as: oauth.AuthorizationServer;
let client: oauth.Client;
const redirectUri = "http://127.0.0.1:7777/callback";

async function waitFor(url: string, seconds: number): Promise<void> {
  const until = Date.now() + seconds * 1000;
  for (;;) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return;
    } catch {
      // not up yet
    }
    if (dex?.exitCode !== null) throw new Error(`dex exited (${dex?.exitCode}):\n${dexOutput}`);
    if (Date.now() > until) throw new Error(`dex did not answer ${url} within ${seconds} s:\n${dexOutput}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

beforeAll(async () => {
  // No silent skip: a Dex that cannot be built fails the suite with the build's own words.
  let dexBin: string;
  try {
    dexBin = (await execFile(path.join(ROOT, "hack/tools/dex.sh"), [], { maxBuffer: 16 * 1024 * 1024, timeout: 1_500_000 })).stdout.trim().split("\n").pop()!;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`hack/tools/dex.sh could not build Dex: ${e.message}\n${(e.stderr ?? "").slice(-4000)}`, { cause: err });
  }
  const [dexPort, cpPort] = [await freePort(), await freePort()];
  issuer = `http://127.0.0.1:${dexPort}/dex`;
  workDir = mkdtempSync(path.join(tmpdir(), "codeplane-dex-"));
  const user = (email: string, name: string, id: string) =>
    `  - email: "${email}"\n    hash: "${PASSWORD_HASH}"\n    username: "${name}"\n    userID: "${id}"\n`;
  writeFileSync(
    path.join(workDir, "dex.yaml"),
    `issuer: ${issuer}
storage:
  type: memory
web:
  http: 127.0.0.1:${dexPort}
logger:
  level: warn
oauth2:
  skipApprovalScreen: true
staticClients:
  - id: codeplane
    name: codeplane
    secret: ${DEX_CLIENT_SECRET}
    redirectURIs:
      - http://127.0.0.1:${cpPort}/oauth/oidc/callback
enablePasswordDB: true
staticPasswords:
${user("alice@acme.test", "alice", "0b8c1f36-5f59-4c5e-9d0b-6a3f0b1d2e01")}${user("mallory@elsewhere.test", "mallory", "0b8c1f36-5f59-4c5e-9d0b-6a3f0b1d2e02")}`,
  );
  dex = spawn(dexBin, ["serve", path.join(workDir, "dex.yaml")], { stdio: ["ignore", "pipe", "pipe"] });
  dex.stdout!.on("data", (d) => (dexOutput += d));
  dex.stderr!.on("data", (d) => (dexOutput += d));
  await waitFor(`${issuer}/.well-known/openid-configuration`, 30);

  svc = await startTestService({
    PORT: String(cpPort),
    CODEPLANE_OIDC_ISSUER: issuer,
    CODEPLANE_OIDC_CLIENT_ID: "codeplane",
    CODEPLANE_OIDC_CLIENT_SECRET: DEX_CLIENT_SECRET,
    CODEPLANE_OIDC_PROVIDER_NAME: "Dex",
    CODEPLANE_OIDC_ACCOUNTS: "acme.test=acme",
  });
  base = svc.url;
  await createAccount(svc.db, "acme");
  as = await discover(base);
  client = await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(
      as,
      {
        redirect_uris: [redirectUri],
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        client_name: "OIDC test agent",
      },
      insecure,
    ),
  );
}, 1_600_000);

afterAll(async () => {
  await svc?.close();
  if (dex && dex.exitCode === null) {
    dex.kill("SIGTERM");
    await new Promise((r) => dex!.once("exit", r));
  }
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

interface Started {
  browser: FormBrowser;
  verifier: string;
  state: string;
  /** The provider's redirect back to codeplane's callback, after signing in at Dex. */
  callback: URL;
}

/** From the client's authorization URL through "Sign in with Dex" and Dex's login form, up to (not into) codeplane's callback. */
async function signInAtDex(email: string, scope?: string): Promise<Started> {
  const browser = new FormBrowser();
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = authorizationUrl(as, {
    clientId: client.client_id,
    redirectUri,
    challenge: await oauth.calculatePKCECodeChallenge(verifier),
    state,
    resource: base,
    ...(scope && { scope }),
  });
  const page = await browser.fetch(url);
  const html = await page.text();
  expect(page.status, html).toBe(200);
  expect(html).toContain("Sign in with Dex");
  expect(html).toContain('name="api_key"');
  // The page's CSP lets the button's answer redirect to the provider.
  expect(page.headers.get("content-security-policy")).toMatch(/form-action 'self' http:\/\/127\.0\.0\.1:\d+/);
  const started = await browser.submit(base, html, {}, { cp_action: "oidc" });
  expect(started.status).toBe(303);
  let next = new URL(started.headers.get("location")!);
  expect(next.searchParams.get("code_challenge_method")).toBe("S256");
  expect(next.searchParams.get("nonce")).toBeTruthy();
  expect(next.searchParams.get("redirect_uri")).toBe(`${base}/oauth/oidc/callback`);
  // Dex: redirects to its password connector's form; post it; follow until it sends the browser back.
  for (let hops = 0; hops < 10; hops++) {
    if (next.href.startsWith(`${base}/`)) return { browser, verifier, state, callback: next };
    const res = await browser.fetch(next.href);
    if (res.status >= 300 && res.status < 400) {
      next = new URL(res.headers.get("location")!, next);
      continue;
    }
    const body = await res.text();
    expect(res.status, body).toBe(200);
    const form = /<form[^>]*method="post"[^>]*action="([^"]*)"/i.exec(body) ?? /<form[^>]*action="([^"]*)"[^>]*method="post"/i.exec(body);
    expect(form, `no login form at ${next.href}:\n${body.slice(0, 2000)}`).toBeTruthy();
    const action = new URL(form![1]!.replace(/&amp;/g, "&"), next);
    const posted = await browser.fetch(action.href, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ ...hiddenFields(body), login: email, password: PASSWORD }).toString(),
    });
    expect([302, 303], await posted.clone().text()).toContain(posted.status);
    next = new URL(posted.headers.get("location")!, action);
  }
  throw new Error("Dex never sent the browser back to codeplane");
}

describe("sign-in through Dex", () => {
  it("signs a mapped person in, consents, and the tokens work on /v1 with the configured scopes", async () => {
    const s = await signInAtDex("alice@acme.test", "repositories:read runs:read keys:write");
    const back = await s.browser.fetch(s.callback.href);
    expect(back.status, await back.clone().text()).toBe(303);
    const to = back.headers.get("location")!;
    expect(to.startsWith("/oauth/authorize?")).toBe(true);
    expect(s.browser.cookies.get("codeplane_session")).toMatch(/^cps_/);
    expect(s.browser.cookies.get("codeplane_oidc")).toBe(""); // spent
    const consent = await s.browser.fetch(new URL(to, base).href);
    expect(consent.status).toBe(200);
    const html = await consent.text();
    expect(html).toContain("Signed in to account <strong>acme</strong>");
    // keys:write is not among an OIDC session's default scopes.
    expect(html).toMatch(/not be granted: <code>keys:write<\/code>/);
    const decided = await s.browser.submit(base, html, { decision: "allow" });
    expect(decided.status).toBe(303);
    const params = oauth.validateAuthResponse(as, client, new URL(decided.headers.get("location")!), s.state);
    const res = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, s.verifier, {
      ...insecure,
      additionalParameters: { resource: base },
    });
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, res);
    expect(tokens.scope).toBe("repositories:read runs:read");
    const repos = await fetch(`${base}/v1/repositories`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(repos.status).toBe(200);
    const keys = await fetch(`${base}/v1/auth/keys`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(keys.status).toBe(403);

    // The identity's sign-in key: one per identity, listed in the account, with no usable secret.
    const signInKeys = await svc.db.selectFrom("api_keys").select(["name", "scopes", "expires_at", "account_id"]).where("name", "like", "oidc %").execute();
    expect(signInKeys).toHaveLength(1);
    expect(signInKeys[0]!.name).toContain("(alice@acme.test)");
    expect(signInKeys[0]!.scopes).not.toContain("keys:write");
    expect(signInKeys[0]!.expires_at).not.toBeNull();

    // A second sign-in of the same person reuses it.
    const again = await signInAtDex("alice@acme.test");
    expect((await again.browser.fetch(again.callback.href)).status).toBe(303);
    expect(await svc.db.selectFrom("api_keys").select("id").where("name", "like", "oidc %").execute()).toHaveLength(1);

    const signIn = svc.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === "oauth.sign_in" && l.method === "oidc");
    expect(signIn.length).toBe(2);
    for (const line of svc.logs) expect(line).not.toContain(DEX_CLIENT_SECRET);
  });

  it("refuses a person whose email domain maps to no account, with a page", async () => {
    const s = await signInAtDex("mallory@elsewhere.test");
    const back = await s.browser.fetch(s.callback.href);
    expect(back.status).toBe(403);
    const html = await back.text();
    expect(html).toContain("no codeplane account is set up for you");
    expect(html).toContain("elsewhere.test");
    expect(s.browser.cookies.get("codeplane_session")).toBeUndefined();
    expect(svc.logs.some((l) => l.includes('"reason":"no_account"'))).toBe(true);
  });

  it("refuses a tampered state, a callback in another browser, and a replayed callback", async () => {
    const s = await signInAtDex("alice@acme.test");
    const tampered = new URL(s.callback);
    tampered.searchParams.set("state", `${s.callback.searchParams.get("state")}x`);
    const jar = new Map(s.browser.cookies);
    const bad = await s.browser.fetch(tampered.href);
    expect(bad.status).toBe(403);
    expect(await bad.text()).toContain("could not be accepted");
    expect(s.browser.cookies.get("codeplane_session")).toBeUndefined();

    // Another browser (no flow cookie) with the genuine callback.
    const other = new FormBrowser();
    const stranger = await other.fetch(s.callback.href);
    expect(stranger.status).toBe(403);
    expect(await stranger.text()).toContain("not started in this browser");

    // The flow cookie with another browser's login cookie.
    const mixed = new FormBrowser();
    for (const [k, v] of jar) mixed.cookies.set(k, v);
    mixed.cookies.set("codeplane_login", "cpl_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    expect((await mixed.fetch(s.callback.href)).status).toBe(403);

    // An altered flow cookie.
    const altered = new FormBrowser();
    for (const [k, v] of jar) altered.cookies.set(k, v);
    const sealed = jar.get("codeplane_oidc")!;
    altered.cookies.set("codeplane_oidc", `${sealed.slice(0, -2)}${sealed.endsWith("A") ? "B" : "A"}A`);
    expect((await altered.fetch(s.callback.href)).status).toBe(403);
  });

  it("refuses the OIDC button without the page's CSRF token", async () => {
    const browser = new FormBrowser();
    const verifier = oauth.generateRandomCodeVerifier();
    const page = await browser.fetch(
      authorizationUrl(as, { clientId: client.client_id, redirectUri, challenge: await oauth.calculatePKCECodeChallenge(verifier) }),
    );
    const res = await browser.submit(base, await page.text(), {}, { cp_action: "oidc", csrf_token: "forged" });
    expect(res.status).toBe(403);
  });
});

const after: (() => Promise<unknown>)[] = [];

describe("in Chromium", () => {
  it("signs in through Dex's own pages and the consent page, and the code redeems", async () => {
    const browser = await launchBrowser();
    try {
      const page = await (await browser.newContext()).newPage();
      // The app's callback, on another loopback port (RFC 8252 lets a loopback redirect URI's port vary).
      const app = createHttpServer((_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end("callback"));
      await new Promise<void>((r) => app.listen(0, "127.0.0.1", r));
      after.push(() => new Promise((r) => app.close(() => r(undefined))));
      const appRedirect = `http://127.0.0.1:${(app.address() as { port: number }).port}/callback`;
      const verifier = oauth.generateRandomCodeVerifier();
      const url = authorizationUrl(as, {
        clientId: client.client_id,
        redirectUri: appRedirect,
        challenge: await oauth.calculatePKCECodeChallenge(verifier),
        state: "c1",
        scope: "repositories:read analyses:read",
        resource: base,
      });
      await page.goto(url);
      // The page's CSP must let the button's form be redirected to the provider.
      await Promise.all([page.waitForURL((u) => u.href.startsWith(issuer)), page.click("#oidc-sign-in button")]);
      await page.fill('input[name="login"]', "alice@acme.test");
      await page.fill('input[name="password"]', PASSWORD);
      await Promise.all([page.waitForURL((u) => u.href.startsWith(`${base}/oauth/authorize`)), page.click('button[type="submit"]')]);
      // A scope not granted before: the consent page, not remembered consent.
      expect(await page.locator("#scopes").textContent()).toContain("analyses:read");
      await Promise.all([page.waitForURL((u) => u.href.startsWith(appRedirect)), page.click('button[value="allow"]')]);
      const params = oauth.validateAuthResponse(as, client, new URL(page.url()), "c1");
      const res = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, appRedirect, verifier, {
        ...insecure,
        additionalParameters: { resource: base },
      });
      const tokens = await oauth.processAuthorizationCodeResponse(as, client, res);
      expect(tokens.scope).toBe("repositories:read analyses:read");
      expect((await fetch(`${base}/v1/repositories`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(200);
    } finally {
      await browser.close();
      for (const f of after.splice(0)) await f();
    }
  });
});

describe("the dashboard", () => {
  it("signs in through Dex from its sign-in page and comes back to the view asked for", async () => {
    expect(await (await fetch(`${base}/ui/sign-in`)).json()).toEqual({ api_key: true, oidc: { name: "Dex" } });
    const browser = await launchBrowser();
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);
      await page.goto(`${base}/ui/#/runs`);
      await page.getByRole("heading", { name: "Sign in" }).waitFor();
      expect(await page.locator("#api-key").count()).toBe(1); // both ways, unless the key form is turned off
      await Promise.all([page.waitForURL((u) => u.href.startsWith(issuer)), page.getByRole("button", { name: "Sign in with Dex" }).click()]);
      await page.fill('input[name="login"]', "alice@acme.test");
      await page.fill('input[name="password"]', PASSWORD);
      await Promise.all([page.waitForURL(`${base}/ui/#/runs`), page.click('button[type="submit"]')]);
      await page.getByRole("heading", { name: "Runs" }).waitFor();
      const acme = await svc.db.selectFrom("accounts").select("id").where("name", "=", "acme").executeTakeFirstOrThrow();
      const me = (await page.evaluate(async () => (await fetch("/ui/session")).json())) as { account_id: string; scopes: string[] };
      expect(me.account_id).toBe(acme.id);
      expect(me.scopes).not.toContain("keys:write"); // the provider's default scopes
      const cookies = await context.cookies();
      expect(cookies.find((c) => c.name === "codeplane_session")).toMatchObject({ httpOnly: true, sameSite: "Lax" });
      expect(cookies.find((c) => c.name === "codeplane_oidc")).toBeUndefined(); // the flow's state is spent
    } finally {
      await browser.close();
    }
  });

  it("starts a sign-in only for its own pages, and only from its own origin", async () => {
    const start = (body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${base}/ui/sign-in/oidc`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
    for (const returnTo of ["/oauth/authorize", "//evil.test/ui/", "https://evil.test/ui/", "/ui/../oauth/token", "/ui/%2e%2e/oauth/token", "/ui\\x", 7]) {
      const res = await start({ return_to: returnTo });
      expect(res.status, String(returnTo)).toBe(400);
    }
    expect((await start({}, { origin: "http://127.0.0.1:1" })).status).toBe(403);
    const ok = await start({ return_to: "/ui/#/keys" });
    expect(ok.status).toBe(200);
    const url = new URL(((await ok.json()) as { authorization_url: string }).authorization_url);
    expect(url.href.startsWith(issuer)).toBe(true);
    expect(url.searchParams.get("redirect_uri")).toBe(`${base}/oauth/oidc/callback`);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    const set = ok.headers.getSetCookie().map((c) => c.split("=")[0]);
    expect(set.sort()).toEqual(["codeplane_login", "codeplane_oidc"]);
  });
});

describe("the API-key form turned off", () => {
  it("offers only the provider's button and refuses an API-key sign-in", async () => {
    const only = await startTestService({
      CODEPLANE_OIDC_ISSUER: issuer,
      CODEPLANE_OIDC_CLIENT_ID: "codeplane",
      CODEPLANE_OIDC_CLIENT_SECRET: DEX_CLIENT_SECRET,
      CODEPLANE_OIDC_API_KEY_SIGN_IN: "false",
    });
    try {
      const tenant = await only.tenant();
      const meta = await discover(only.url);
      const registered = await oauth.processDynamicClientRegistrationResponse(
        await oauth.dynamicClientRegistrationRequest(meta, { redirect_uris: [redirectUri], token_endpoint_auth_method: "none", client_name: "t" }, insecure),
      );
      const browser = new FormBrowser();
      const url = authorizationUrl(meta, {
        clientId: registered.client_id,
        redirectUri,
        challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
      });
      const html = await (await browser.fetch(url)).text();
      expect(html).toContain(`Sign in with 127.0.0.1:`); // the provider's name defaults to the issuer's host
      expect(html).not.toContain('name="api_key"');
      const res = await browser.submit(only.url, html, { api_key: tenant.key }, { cp_action: "sign_in" });
      expect(res.status).toBe(403);
      expect(browser.cookies.get("codeplane_session")).toBeUndefined();
      // The dashboard offers and takes the same.
      expect(await (await fetch(`${only.url}/ui/sign-in`)).json()).toEqual({ api_key: false, oidc: { name: new URL(issuer).host } });
      const dashboard = await fetch(`${only.url}/ui/session`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ api_key: tenant.key }),
      });
      expect(dashboard.status).toBe(403);
      expect(((await dashboard.json()) as { detail: string }).detail).toMatch(/API key is turned off/);
      expect(dashboard.headers.getSetCookie()).toEqual([]);
    } finally {
      await only.close();
    }
  });
});

describe("OIDC settings", () => {
  const env = { CODEPLANE_DATA_DIR: mkdtempSync(path.join(tmpdir(), "codeplane-oidc-cfg-")) };
  it("are all or none: the start fails naming what is missing", () => {
    expect(() => loadConfig({ ...env, CODEPLANE_OIDC_ISSUER: "https://idp.example" })).toThrow(
      /CODEPLANE_OIDC_CLIENT_ID: required[\s\S]*CODEPLANE_OIDC_CLIENT_SECRET: required/,
    );
    expect(loadConfig(env).oauth.oidc).toBeNull();
  });
  it("refuse an http issuer that is not on loopback", () => {
    expect(() => loadConfig({ ...env, CODEPLANE_OIDC_ISSUER: "http://idp.example", CODEPLANE_OIDC_CLIENT_ID: "a", CODEPLANE_OIDC_CLIENT_SECRET: "b" })).toThrow(
      /must be https/,
    );
    expect(
      loadConfig({ ...env, CODEPLANE_OIDC_ISSUER: "http://127.0.0.1:5556/dex", CODEPLANE_OIDC_CLIENT_ID: "a", CODEPLANE_OIDC_CLIENT_SECRET: "b" }).oauth.oidc
        ?.issuer,
    ).toBe("http://127.0.0.1:5556/dex");
  });
  it("refuse turning the API-key form off without OIDC", () => {
    expect(() => loadConfig({ ...env, CODEPLANE_OIDC_API_KEY_SIGN_IN: "false" })).toThrow(/nobody could sign in/);
  });
});
