import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";
import { authorizationUrl, discover, FormBrowser, hiddenFields, insecure, signInAndDecide } from "./helpers.ts";

// Every refusal the RFCs call for, as a strict client sees it.

let svc: TestService;
let base: string;
let as: oauth.AuthorizationServer;
let alice: Tenant;
let client: oauth.Client;
const redirectUri = "http://127.0.0.1:7777/callback";

beforeAll(async () => {
  svc = await startTestService({ CODEPLANE_OAUTH_ACCESS_TOKEN_SECONDS: "60" });
  base = svc.url;
  as = await discover(base);
  alice = await svc.tenant();
  client = await oauth.processDynamicClientRegistrationResponse(
    await oauth.dynamicClientRegistrationRequest(
      as,
      { redirect_uris: [redirectUri], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"], client_name: "Errors" },
      insecure,
    ),
  );
});
afterAll(() => svc?.close());

async function pkce() {
  const verifier = oauth.generateRandomCodeVerifier();
  return { verifier, challenge: await oauth.calculatePKCECodeChallenge(verifier) };
}

/** A code for `client`, through the page. */
async function code(opts: { scope?: string; redirect?: string; browser?: FormBrowser; c?: oauth.Client } = {}) {
  const { verifier, challenge } = await pkce();
  const c = opts.c ?? client;
  const back = await signInAndDecide(
    opts.browser ?? new FormBrowser(),
    base,
    authorizationUrl(as, {
      clientId: c.client_id,
      redirectUri: opts.redirect ?? redirectUri,
      challenge,
      state: "s1",
      scope: opts.scope ?? "repositories:read",
    }),
    alice.key,
  );
  return { params: oauth.validateAuthResponse(as, c, back, "s1"), verifier };
}

const redeem = (params: URLSearchParams, verifier: string, extra: Record<string, string> = {}, redirect = redirectUri, c = client, auth = oauth.None()) =>
  oauth.authorizationCodeGrantRequest(as, c, auth, params, redirect, verifier, { ...insecure, additionalParameters: extra });

describe("authorization endpoint", () => {
  const get = (extra: Record<string, string>, omit: string[] = []) => {
    const u = new URL(authorizationUrl(as, { clientId: client.client_id, redirectUri, challenge: "a".repeat(43), state: "st", ...extra }));
    for (const k of omit) u.searchParams.delete(k);
    for (const [k, v] of Object.entries(extra)) u.searchParams.set(k, v);
    return fetch(u, { redirect: "manual" });
  };
  const errorOf = (res: Response) => {
    expect(res.status).toBe(302);
    const u = new URL(res.headers.get("location")!);
    expect(u.origin + u.pathname).toBe(redirectUri);
    expect(u.searchParams.get("iss")).toBe(base); // RFC 9207, errors too
    expect(u.searchParams.get("state")).toBe("st");
    return u.searchParams.get("error");
  };

  it("refuses a request without code_challenge", async () => expect(errorOf(await get({}, ["code_challenge"]))).toBe("invalid_request"));
  it("refuses plain PKCE", async () => expect(errorOf(await get({ code_challenge_method: "plain" }))).toBe("invalid_request"));
  it("refuses a missing code_challenge_method (plain by default)", async () =>
    expect(errorOf(await get({}, ["code_challenge_method"]))).toBe("invalid_request"));
  it("refuses another response_type", async () => expect(errorOf(await get({ response_type: "token" }))).toBe("unsupported_response_type"));
  it("refuses an unknown scope", async () => expect(errorOf(await get({ scope: "root" }))).toBe("invalid_scope"));
  it("refuses a resource other than the base URL", async () => expect(errorOf(await get({ resource: "https://elsewhere.example" }))).toBe("invalid_target"));

  it("shows errors on the page, never redirecting, until client and redirect URI are known", async () => {
    for (const res of [
      await get({ redirect_uri: "https://attacker.example/cb" }),
      await get({ redirect_uri: "http://127.0.0.1:7777/other" }),
      await get({ client_id: "00000000-0000-7000-8000-000000000000" }),
      await get({}, ["client_id"]),
      await get({}, ["redirect_uri"]),
    ]) {
      expect(res.status).toBe(400);
      expect(res.headers.get("location")).toBeNull();
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    }
  });

  it("refuses a parameter sent twice", async () => {
    const u = new URL(authorizationUrl(as, { clientId: client.client_id, redirectUri, challenge: "a".repeat(43) }));
    u.searchParams.append("client_id", client.client_id);
    expect((await fetch(u, { redirect: "manual" })).status).toBe(400);
  });

  it("lets a loopback redirect URI use another port (RFC 8252), nothing else", async () => {
    const { params, verifier } = await code({ redirect: "http://127.0.0.1:51234/callback" });
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await redeem(params, verifier, {}, "http://127.0.0.1:51234/callback"));
    expect(tokens.access_token).toMatch(/^cpat_/);
  });

  it("answers Deny with access_denied, state and iss", async () => {
    const { challenge } = await pkce();
    const back = await signInAndDecide(
      new FormBrowser(),
      base,
      authorizationUrl(as, { clientId: client.client_id, redirectUri, challenge, state: "d1" }),
      alice.key,
      "deny",
    );
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.get("iss")).toBe(base);
    expect(() => oauth.validateAuthResponse(as, client, back, "d1")).toThrow();
  });

  it("refuses a consent form whose CSRF token does not match the session", async () => {
    const browser = new FormBrowser();
    const { challenge } = await pkce();
    const url = authorizationUrl(as, { clientId: client.client_id, redirectUri, challenge, state: "c1", scope: "runs:read" });
    const page = await (await browser.fetch(url)).text();
    const signedIn = await browser.submit(base, page, { api_key: alice.key });
    const consent = await (await browser.fetch(new URL(signedIn.headers.get("location")!, base).href)).text();
    const forged = await browser.submit(base, consent, { decision: "allow" }, { csrf_token: "forged" });
    expect(forged.status).toBe(403);
    expect(forged.headers.get("location")).toBeNull();
    // Without the session cookie the form is the sign-in page again, never a code.
    const stranger = new FormBrowser();
    const replay = await stranger.submit(base, consent, { decision: "allow" });
    expect(replay.status).toBe(200);
    expect(await replay.text()).toContain('name="api_key"');
    expect(hiddenFields(consent).csrf_token).toBeTruthy();
  });

  it("binds a consent form's CSRF token to its request: it cannot approve another client, redirect URI, scope, challenge or resource", async () => {
    const other = "http://127.0.0.1:7777/other";
    const two = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(
        as,
        { redirect_uris: [redirectUri, other], token_endpoint_auth_method: "none", grant_types: ["authorization_code"], client_name: "Two" },
        insecure,
      ),
    );
    const browser = new FormBrowser();
    const { challenge } = await pkce();
    const url = authorizationUrl(as, { clientId: two.client_id, redirectUri, challenge, state: "b1", scope: "runs:read" });
    const signedIn = await browser.submit(base, await (await browser.fetch(url)).text(), { api_key: alice.key });
    const consent = await (await browser.fetch(new URL(signedIn.headers.get("location")!, base).href)).text();
    const swaps: Record<string, string>[] = [
      { client_id: client.client_id },
      { redirect_uri: other },
      { scope: "runs:read repositories:read" },
      { code_challenge: (await pkce()).challenge },
      { resource: `${base}/mcp` },
      { state: "b2" },
    ];
    for (const swap of swaps) {
      const res = await browser.submit(base, consent, { decision: "allow" }, swap);
      expect(res.status, JSON.stringify(swap)).toBe(403);
      expect(res.headers.get("location")).toBeNull();
    }
    // The form as the page served it still works.
    const allowed = await browser.submit(base, consent, { decision: "allow" });
    expect(allowed.status).toBe(303);
    expect(new URL(allowed.headers.get("location")!).searchParams.get("code")).toMatch(/^cpac_/);
  });

  it("refuses the page's POSTs from another origin or site (login CSRF), as POST /ui/session does", async () => {
    const browser = new FormBrowser();
    const { challenge } = await pkce();
    const page = await (await browser.fetch(authorizationUrl(as, { clientId: client.client_id, redirectUri, challenge }))).text();
    for (const headers of [{ origin: "http://attacker.invalid" }, { "sec-fetch-site": "cross-site" }, { "sec-fetch-site": "same-site" }]) {
      const res = await browser.fetch(`${base}/oauth/authorize`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams({ ...hiddenFields(page), api_key: alice.key }).toString(),
      });
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect([...browser.cookies.keys()]).not.toContain("codeplane_session");
    }
    // The page's own origin is fine.
    const ok = await browser.fetch(`${base}/oauth/authorize`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: base, "sec-fetch-site": "same-origin" },
      body: new URLSearchParams({ ...hiddenFields(page), api_key: alice.key }).toString(),
    });
    expect(ok.status).toBe(303);
  });

  it("does not adopt a planted pre-login cookie: each sign-in page gets a fresh nonce", async () => {
    const planted = `cpl_${"A".repeat(43)}`;
    const { challenge } = await pkce();
    const url = authorizationUrl(as, { clientId: client.client_id, redirectUri, challenge });
    // The attacker loads the page with the nonce it planted, to get a form token for it.
    const attacker = new FormBrowser();
    attacker.cookies.set("codeplane_login", planted);
    const attackerPage = await (await attacker.fetch(url)).text();
    expect(attacker.cookies.get("codeplane_login")).not.toBe(planted);
    // The victim's browser, carrying the planted nonce, posts the attacker's form with the attacker's key.
    const victim = new FormBrowser();
    victim.cookies.set("codeplane_login", planted);
    const forged = await victim.submit(base, attackerPage, { api_key: alice.key });
    expect(forged.status).toBe(403);
    expect([...victim.cookies.keys()]).not.toContain("codeplane_session");
  });

  it("refuses a sign-in with a wrong key without creating a session", async () => {
    const browser = new FormBrowser();
    const { challenge } = await pkce();
    const page = await (await browser.fetch(authorizationUrl(as, { clientId: client.client_id, redirectUri, challenge }))).text();
    const res = await browser.submit(base, page, { api_key: "cp_nottherightkeyatall" });
    expect(res.status).toBe(401);
    expect(await res.text()).toContain("not a valid API key");
    expect([...browser.cookies.keys()]).not.toContain("codeplane_session");
  });
});

describe("token endpoint", () => {
  it("refuses a wrong verifier, and the code is spent by the attempt", async () => {
    const { params, verifier } = await code();
    await expect(oauth.processAuthorizationCodeResponse(as, client, await redeem(params, oauth.generateRandomCodeVerifier()))).rejects.toMatchObject({
      error: "invalid_grant",
    });
    await expect(oauth.processAuthorizationCodeResponse(as, client, await redeem(params, verifier))).rejects.toMatchObject({ error: "invalid_grant" });
  });

  it("refuses a reused code and revokes the tokens it gave", async () => {
    const { params, verifier } = await code();
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await redeem(params, verifier));
    await expect(oauth.processAuthorizationCodeResponse(as, client, await redeem(params, verifier))).rejects.toMatchObject({ error: "invalid_grant" });
    expect((await fetch(`${base}/v1/repositories`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
  });

  it("refuses a redirect_uri other than the authorization request's", async () => {
    const { params, verifier } = await code();
    await expect(
      oauth.processAuthorizationCodeResponse(as, client, await redeem(params, verifier, {}, "http://127.0.0.1:7777/elsewhere")),
    ).rejects.toMatchObject({ error: "invalid_request" });
  });

  it("refuses a redeem without code_verifier", async () => {
    const { params } = await code();
    const res = await fetch(as.token_endpoint!, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code: params.get("code")!, redirect_uri: redirectUri, client_id: client.client_id }),
    });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe("invalid_grant");
  });

  it("refuses a wrong resource with invalid_target", async () => {
    const { params, verifier } = await code();
    await expect(
      oauth.processAuthorizationCodeResponse(as, client, await redeem(params, verifier, { resource: "https://other.example" })),
    ).rejects.toMatchObject({ error: "invalid_target" });
  });

  it("accepts {base_url}/mcp as the resource: the audience is the base URL", async () => {
    const { params, verifier } = await code();
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await redeem(params, verifier, { resource: `${base}/mcp` }));
    expect((await fetch(`${base}/v1/repositories`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(200);
  });

  it("refuses scope escalation on refresh without spending the refresh token", async () => {
    const { params, verifier } = await code({ scope: "repositories:read" });
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await redeem(params, verifier));
    const wider = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, {
      ...insecure,
      additionalParameters: { scope: "repositories:read repositories:write" },
    });
    await expect(oauth.processRefreshTokenResponse(as, client, wider)).rejects.toMatchObject({ error: "invalid_scope" });
    const same = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure),
    );
    expect(same.scope).toBe("repositories:read");
  });

  it("does not accept tokens for another host name (audience), nor expired ones", async () => {
    const { params, verifier } = await code();
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, await redeem(params, verifier));
    const other = base.replace("127.0.0.1", "localhost");
    expect((await fetch(`${other}/v1/repositories`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
    await svc.db
      .updateTable("oauth_tokens")
      .set({ expires_at: new Date(Date.now() - 1000) })
      .execute();
    const res = await fetch(`${base}/v1/repositories`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(res.status).toBe(401);
    // RFC 6750 section 3: a token that was sent and does not work is invalid_token, on /v1 and on /mcp alike.
    const challenge = `Bearer error="invalid_token", resource_metadata="${base}/.well-known/oauth-protected-resource"`;
    expect(res.headers.get("www-authenticate")).toBe(challenge);
    const mcp = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${tokens.access_token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    expect(mcp.status).toBe(401);
    // /mcp's also names the scopes an MCP client asks for first (MCP's scope selection; docs/users/mcp.md).
    expect(mcp.headers.get("www-authenticate")).toBe(
      `Bearer error="invalid_token", scope="repositories:read analyses:read runs:read env:read", resource_metadata="${base}/.well-known/oauth-protected-resource"`,
    );
    await expect(
      oauth.processRefreshTokenResponse(as, client, await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure)),
    ).rejects.toMatchObject({ error: "invalid_grant" });
  });

  it("refuses an expired code", async () => {
    const { params, verifier } = await code();
    await svc.db
      .updateTable("oauth_codes")
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where("used_at", "is", null)
      .execute();
    await expect(oauth.processAuthorizationCodeResponse(as, client, await redeem(params, verifier))).rejects.toMatchObject({ error: "invalid_grant" });
  });

  it("answers unknown grant types and clients as RFC 6749 says", async () => {
    const post = (body: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(as.token_endpoint!, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams(body),
      });
    const unknown = await post({ grant_type: "password", client_id: client.client_id, username: "a", password: "b" });
    expect(unknown.status).toBe(400);
    expect((await unknown.json()).error).toBe("unsupported_grant_type");
    const noClient = await post({ grant_type: "authorization_code", code: "x", client_id: "nobody" });
    expect(noClient.status).toBe(401);
    expect((await noClient.json()).error).toBe("invalid_client");
    const badBasic = await post({ grant_type: "client_credentials" }, { authorization: `Basic ${Buffer.from("nobody:secret").toString("base64")}` });
    expect(badBasic.status).toBe(401);
    expect(badBasic.headers.get("www-authenticate")).toMatch(/^Basic /);
    expect(badBasic.headers.get("cache-control")).toBe("no-store");
  });
});
