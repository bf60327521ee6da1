import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";
import { linesWithDuplicateKeys } from "../helpers/log-lines.ts";
import { authorizationUrl, discover, FormBrowser, insecure, signInAndDecide } from "./helpers.ts";

// The authorization code flow with PKCE, driven by oauth4webapi (a strict,
// independent client) over real HTTP, through the HTML page as a browser would.

let svc: TestService;
let base: string;
let as: oauth.AuthorizationServer;
let alice: Tenant;
const redirectUri = "http://127.0.0.1:7777/callback";

beforeAll(async () => {
  svc = await startTestService();
  base = svc.url;
  as = await discover(base);
  alice = await svc.tenant();
});
afterAll(() => svc?.close());

async function registerPublic(extra: Record<string, unknown> = {}) {
  const res = await oauth.dynamicClientRegistrationRequest(
    as,
    {
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      client_name: "Test agent",
      ...extra,
    },
    insecure,
  );
  return oauth.processDynamicClientRegistrationResponse(res);
}

/** Every secret the flows saw: none may appear in a log line. */
const secrets = new Set<string>();

async function codeFlow(client: oauth.Client, opts: { scope?: string; key?: string } = {}) {
  const verifier = oauth.generateRandomCodeVerifier();
  const challenge = await oauth.calculatePKCECodeChallenge(verifier);
  const state = oauth.generateRandomState();
  const browser = new FormBrowser();
  const back = await signInAndDecide(
    browser,
    base,
    authorizationUrl(as, { clientId: client.client_id, redirectUri, challenge, state, resource: base, ...(opts.scope && { scope: opts.scope }) }),
    opts.key ?? alice.key,
  );
  const params = oauth.validateAuthResponse(as, client, back, state);
  const res = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, {
    ...insecure,
    additionalParameters: { resource: base },
  });
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, res);
  for (const v of [tokens.access_token, tokens.refresh_token, params.get("code"), verifier, ...browser.cookies.values()]) if (v) secrets.add(v);
  return { tokens, browser, verifier, params };
}

describe("discovery", () => {
  it("serves RFC 8414 metadata with the contract's fields", async () => {
    expect(as.issuer).toBe(base);
    expect(as.code_challenge_methods_supported).toEqual(["S256"]);
    expect(as.authorization_response_iss_parameter_supported).toBe(true);
    expect((as as Record<string, unknown>).client_id_metadata_document_supported).toBe(true);
    expect(as.token_endpoint).toBe(`${base}/oauth/token`);
    expect(as.registration_endpoint).toBe(`${base}/oauth/register`);
    expect(as.revocation_endpoint).toBe(`${base}/oauth/revoke`);
    expect(as.introspection_endpoint).toBe(`${base}/oauth/introspect`);
    expect(as.scopes_supported).toContain("repositories:read");
  });

  it("serves RFC 9728 protected-resource metadata naming the base URL", async () => {
    const res = await fetch(`${base}/.well-known/oauth-protected-resource`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ resource: base, authorization_servers: [base] });
  });
});

describe("authorization code with PKCE", () => {
  it("issues tokens that work on /v1 for the account that allowed them", async () => {
    const client = await registerPublic();
    const { tokens } = await codeFlow(client, { scope: "repositories:read" });
    expect(tokens.token_type).toBe("bearer");
    expect(tokens.scope).toBe("repositories:read");
    expect(tokens.expires_in).toBeGreaterThan(3500);
    expect(tokens.refresh_token).toMatch(/^cprt_/);
    const list = await fetch(`${base}/v1/repositories`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(list.status).toBe(200);
    const denied = await fetch(`${base}/v1/environment-variables`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(denied.status).toBe(403);
    expect(denied.headers.get("www-authenticate")).toBe(
      `Bearer error="insufficient_scope", scope="env:read", resource_metadata="${base}/.well-known/oauth-protected-resource"`,
    );
  });

  it("refuses to mint an API key with an access token: nothing would outlive the grant", async () => {
    const client = await registerPublic();
    const { tokens } = await codeFlow(client, { scope: "keys:write repositories:read" });
    const auth = { authorization: `Bearer ${tokens.access_token}` };
    const minted = await fetch(`${base}/v1/auth/keys`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: '{"name":"by-client"}',
    });
    expect(minted.status).toBe(403);
    expect(((await minted.json()) as { detail: string }).detail).toMatch(/OAuth access token cannot create API keys/);
    expect(await svc.db.selectFrom("api_keys").select("id").where("name", "=", "by-client").execute()).toHaveLength(0);
    // Listing (within the token's scopes) still works.
    expect((await fetch(`${base}/v1/auth/keys`, { headers: auth })).status).toBe(200);
  });

  it("refreshes with rotation; a rotated token used again revokes the family", async () => {
    const client = await registerPublic();
    const { tokens } = await codeFlow(client, { scope: "repositories:read repositories:write" });
    const r1 = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure),
    );
    expect(r1.refresh_token).not.toBe(tokens.refresh_token);
    // The rotated one again: refused, and the whole family with it.
    await expect(
      oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure)),
    ).rejects.toMatchObject({ error: "invalid_grant" });
    const after = await fetch(`${base}/v1/repositories`, { headers: { authorization: `Bearer ${r1.access_token}` } });
    expect(after.status).toBe(401);
    await expect(
      oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), r1.refresh_token!, insecure)),
    ).rejects.toMatchObject({ error: "invalid_grant" });
  });
});

describe("audit log", () => {
  it("has a line for sign-in, consent, token issue and revocation, and no secret in any line", async () => {
    const client = await registerPublic();
    const { tokens } = await codeFlow(client, { scope: "repositories:read" });
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, client, oauth.None(), tokens.refresh_token!, insecure));
    secrets.add(alice.key);
    const events = svc.logs
      .map((l) => JSON.parse(l) as { event?: string })
      .map((l) => l.event)
      .filter(Boolean);
    for (const e of ["oauth.client_registered", "oauth.sign_in", "oauth.consent", "oauth.token_issued", "oauth.token_revoked", "oauth.refresh_reused"])
      expect(events).toContain(e);
    for (const line of svc.logs) for (const secret of secrets) expect(line.includes(secret), `a log line holds a secret: ${line}`).toBe(false);
    expect(linesWithDuplicateKeys(svc.logs)).toEqual([]);
  });

  it("rate-limits sign-in attempts per address", async () => {
    const limited = await startTestService({ CODEPLANE_OAUTH_RATE_LIMIT_REQUESTS: "2" });
    try {
      const las = await discover(limited.url);
      const c = await oauth.processDynamicClientRegistrationResponse(
        await oauth.dynamicClientRegistrationRequest(las, { redirect_uris: [redirectUri], token_endpoint_auth_method: "none" }, insecure),
      );
      const browser = new FormBrowser();
      const url = authorizationUrl(las, {
        clientId: c.client_id,
        redirectUri,
        challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
      });
      const html = await (await browser.fetch(url)).text();
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) statuses.push((await browser.submit(limited.url, html, { api_key: "cp_wrong" })).status);
      expect(statuses).toEqual([401, 401, 429]);
      const token = await fetch(`${limited.url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=client_credentials",
      });
      expect(token.status).toBe(401);
      await fetch(`${limited.url}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: "grant_type=client_credentials",
      });
      const third = await fetch(`${limited.url}/oauth/token`, { method: "POST" });
      expect(third.status).toBe(429);
      expect(third.headers.get("retry-after")).toBeTruthy();
    } finally {
      await limited.close();
    }
  });
});
