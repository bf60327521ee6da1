import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as oauth from "oauth4webapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";
import { authorizationUrl, discover, FormBrowser, insecure, signInAndDecide } from "./helpers.ts";

// Confidential clients, client_credentials, revocation, introspection, client
// ID metadata documents, grants management and tenancy.

let svc: TestService;
let base: string;
let as: oauth.AuthorizationServer;
let alice: Tenant;
let bob: Tenant;
let cimd: Server;
let cimdBase: string;
const cimdDocs = new Map<string, unknown>();
let cimdHits = 0;
const redirectUri = "http://127.0.0.1:7777/callback";

beforeAll(async () => {
  svc = await startTestService({ CODEPLANE_OAUTH_ALLOW_LOCAL_CLIENT_METADATA: "true" });
  base = svc.url;
  as = await discover(base);
  alice = await svc.tenant();
  bob = await svc.tenant();
  cimd = createServer((req, res) => {
    cimdHits++;
    const doc = cimdDocs.get(req.url!);
    if (req.url === "/huge.json") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ pad: "x".repeat(100_000) }));
      return;
    }
    if (!doc) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(doc));
  });
  await new Promise<void>((r) => cimd.listen(0, "127.0.0.1", r));
  cimdBase = `http://127.0.0.1:${(cimd.address() as AddressInfo).port}`;
});
afterAll(async () => {
  cimd?.close();
  await svc?.close();
});

/** The OAuth error code a failed request ended with (a 401 with a Basic challenge included). */
async function errorOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof oauth.WWWAuthenticateChallengeError) return (await e.response.json()).error;
    return (e as { error?: string }).error ?? String(e);
  }
  return "no error";
}

const register = async (metadata: Record<string, unknown>, key?: string) =>
  fetch(`${base}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key && { authorization: `Bearer ${key}` }) },
    body: JSON.stringify(metadata),
  });

async function codeTokens(c: oauth.Client, auth: oauth.ClientAuth, key = alice.key, scope = "repositories:read") {
  const verifier = oauth.generateRandomCodeVerifier();
  const back = await signInAndDecide(
    new FormBrowser(),
    base,
    authorizationUrl(as, { clientId: c.client_id, redirectUri, challenge: await oauth.calculatePKCECodeChallenge(verifier), state: "x", scope }),
    key,
  );
  const params = oauth.validateAuthResponse(as, c, back, "x");
  return oauth.processAuthorizationCodeResponse(as, c, await oauth.authorizationCodeGrantRequest(as, c, auth, params, redirectUri, verifier, insecure));
}

describe("registration", () => {
  it("answers 201 with a secret for a confidential client and keeps only its hash", async () => {
    const res = await register({ redirect_uris: [redirectUri], client_name: "Web app" });
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = await res.json();
    expect(body).toMatchObject({
      token_endpoint_auth_method: "client_secret_basic",
      grant_types: ["authorization_code"],
      client_name: "Web app",
      client_secret_expires_at: 0,
    });
    expect(body.client_secret).toMatch(/^cpcs_/);
    const row = await svc.db.selectFrom("oauth_clients").selectAll().where("client_id", "=", body.client_id).executeTakeFirstOrThrow();
    expect(row.secret_hash).not.toContain(body.client_secret);
    expect(JSON.stringify(row)).not.toContain(body.client_secret);
  });

  it.each([
    [{ redirect_uris: ["http://example.com/cb"] }, "invalid_redirect_uri"],
    [{ redirect_uris: ["https://example.com/cb#frag"] }, "invalid_redirect_uri"],
    [{ redirect_uris: ["myapp:/cb"] }, "invalid_redirect_uri"],
    [{ redirect_uris: [] }, "invalid_redirect_uri"],
    [{ redirect_uris: [redirectUri], token_endpoint_auth_method: "private_key_jwt" }, "invalid_client_metadata"],
    [{ redirect_uris: [redirectUri], grant_types: ["implicit"] }, "invalid_client_metadata"],
    [{ redirect_uris: [redirectUri], scope: "everything" }, "invalid_client_metadata"],
    [{ grant_types: ["client_credentials"] }, "invalid_client_metadata"],
  ])("refuses %j with %s", async (metadata, error) => {
    const res = await register(metadata);
    expect(res.status).toBe(400);
    expect((await res.json()).error).toBe(error);
  });

  it("refuses a bad bearer token and a key without keys:write", async () => {
    expect((await register({ redirect_uris: [redirectUri] }, "cp_bogus")).status).toBe(401);
    const weak = await svc.tenant(["repositories:read"]);
    const res = await register({ grant_types: ["client_credentials"] }, weak.key);
    expect(res.status).toBe(403);
    expect((await res.json()).error).toBe("insufficient_scope");
  });
});

describe("confidential clients", () => {
  it("must authenticate at the token endpoint even with PKCE", async () => {
    const reg = await (
      await register({ redirect_uris: [redirectUri], client_name: "Confidential", grant_types: ["authorization_code", "refresh_token"] })
    ).json();
    const c: oauth.Client = { client_id: reg.client_id, token_endpoint_auth_method: "client_secret_basic" };
    expect(await errorOf(codeTokens(c, oauth.None()))).toBe("invalid_client");
    expect(await errorOf(codeTokens(c, oauth.ClientSecretBasic("cpcs_wrong")))).toBe("invalid_client");
    expect(await errorOf(codeTokens(c, oauth.ClientSecretPost("cpcs_wrong")))).toBe("invalid_client");
    const tokens = await codeTokens(c, oauth.ClientSecretBasic(reg.client_secret));
    expect(tokens.access_token).toMatch(/^cpat_/);

    // Introspection: active for its own client, inactive for anything else.
    const auth = oauth.ClientSecretBasic(reg.client_secret);
    const intro = await oauth.processIntrospectionResponse(as, c, await oauth.introspectionRequest(as, c, auth, tokens.access_token, insecure));
    expect(intro).toMatchObject({ active: true, client_id: c.client_id, scope: "repositories:read", sub: alice.accountId, aud: base, iss: base });
    const unknown = await oauth.processIntrospectionResponse(as, c, await oauth.introspectionRequest(as, c, auth, "cpat_unknown", insecure));
    expect(unknown).toEqual({ active: false });

    // Revocation (RFC 7009): 200, unknown tokens too; the refresh token takes its family with it.
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, c, auth, "cprt_nothing", insecure));
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, c, auth, tokens.refresh_token!, insecure));
    expect((await fetch(`${base}/v1/repositories`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
    expect(await oauth.processIntrospectionResponse(as, c, await oauth.introspectionRequest(as, c, auth, tokens.access_token, insecure))).toEqual({
      active: false,
    });
  });

  it("accepts either secret method the metadata advertises, as authlib revokes with Basic whatever it registered", async () => {
    const reg = await (
      await register({ redirect_uris: [redirectUri], grant_types: ["authorization_code", "refresh_token"], token_endpoint_auth_method: "client_secret_post" })
    ).json();
    const c: oauth.Client = { client_id: reg.client_id, token_endpoint_auth_method: "client_secret_post" };
    expect(as.revocation_endpoint_auth_methods_supported).toEqual(expect.arrayContaining(["client_secret_basic", "client_secret_post"]));
    const tokens = await codeTokens(c, oauth.ClientSecretPost(reg.client_secret));
    const basic = oauth.ClientSecretBasic(reg.client_secret);
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, c, basic, tokens.refresh_token!, insecure));
    expect((await fetch(`${base}/v1/repositories`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
    // Neither a wrong secret nor none at all.
    expect((await oauth.revocationRequest(as, c, oauth.ClientSecretBasic("cpcs_wrong"), "cprt_x", insecure)).status).toBe(401);
    expect((await oauth.revocationRequest(as, c, oauth.None(), "cprt_x", insecure)).status).toBe(401);
  });

  it("public clients cannot introspect", async () => {
    const reg = await (await register({ redirect_uris: [redirectUri], token_endpoint_auth_method: "none" })).json();
    const res = await oauth.introspectionRequest(as, { client_id: reg.client_id }, oauth.None(), "cpat_x", insecure);
    expect(res.status).toBe(401);
  });
});

describe("client_credentials", () => {
  it("acts for the account whose API key registered the client, within that key's scopes", async () => {
    const limited = await svc.tenant(["keys:write", "repositories:read"]);
    const reg = await (await register({ grant_types: ["client_credentials"], client_name: "Robot" }, limited.key)).json();
    const c: oauth.Client = { client_id: reg.client_id };
    const auth = oauth.ClientSecretBasic(reg.client_secret);
    const all = await oauth.processClientCredentialsResponse(as, c, await oauth.clientCredentialsGrantRequest(as, c, auth, {}, insecure));
    expect(all.scope?.split(" ").sort()).toEqual(["keys:write", "repositories:read"]);
    expect(all.refresh_token).toBeUndefined();
    const mine = await fetch(`${base}/v1/oauth/clients`, { headers: { authorization: `Bearer ${all.access_token}` } });
    expect((await mine.json()).items.map((i: { client_id: string }) => i.client_id)).toEqual([reg.client_id]);
    await expect(
      oauth.processClientCredentialsResponse(as, c, await oauth.clientCredentialsGrantRequest(as, c, auth, { scope: "runs:write" }, insecure)),
    ).rejects.toMatchObject({ error: "invalid_scope" });
    // A public client cannot use it; another account cannot see or delete the client.
    expect((await bob.api(`/v1/oauth/clients/${reg.client_id}`, { method: "DELETE" })).status).toBe(404);
    expect((await limited.api(`/v1/oauth/clients/${reg.client_id}`, { method: "DELETE" })).status).toBe(204);
    expect(await errorOf(oauth.clientCredentialsGrantRequest(as, c, auth, {}, insecure).then((r) => oauth.processClientCredentialsResponse(as, c, r)))).toBe(
      "invalid_client",
    );
    expect((await fetch(`${base}/v1/repositories`, { headers: { authorization: `Bearer ${all.access_token}` } })).status).toBe(401);
  });
});

describe("grants and tenancy", () => {
  it("remembers consent, lists and revokes grants per account, and tokens see only their account", async () => {
    const reg = await (
      await register({ redirect_uris: [redirectUri], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"] })
    ).json();
    const c: oauth.Client = { client_id: reg.client_id, token_endpoint_auth_method: "none" };
    const repo = await (await bob.api("/v1/repositories", { method: "POST", json: { url: "file:///nonexistent/repo", name: "bobs" } })).json();
    const tokens = await codeTokens(c, oauth.None(), alice.key, "repositories:read");
    // Bob's repository is not found with Alice's token.
    const other = await fetch(`${base}/v1/repositories/${repo.id ?? "00000000-0000-7000-8000-000000000000"}`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(other.status).toBe(404);

    // Remembered: the same client and scopes again go straight back with a code, no page.
    const browser = new FormBrowser();
    const verifier = oauth.generateRandomCodeVerifier();
    const url = authorizationUrl(as, {
      clientId: c.client_id,
      redirectUri,
      challenge: await oauth.calculatePKCECodeChallenge(verifier),
      state: "r",
      scope: "repositories:read",
    });
    await signInAndDecide(browser, base, url, alice.key); // signs this browser in and allows
    const again = await browser.fetch(url);
    expect(again.status).toBe(302);
    expect(new URL(again.headers.get("location")!).searchParams.get("code")).toMatch(/^cpac_/);

    const grants = (await (await alice.api("/v1/oauth/grants")).json()).items.filter((g: { client_id: string }) => g.client_id === c.client_id);
    expect(grants).toHaveLength(1);
    expect(grants[0]).toMatchObject({ client_id: c.client_id, scopes: ["repositories:read"] });
    expect((await (await bob.api("/v1/oauth/grants")).json()).items).toEqual([]);
    expect((await bob.api(`/v1/oauth/grants/${grants[0].id}`, { method: "DELETE" })).status).toBe(404);
    expect((await alice.api(`/v1/oauth/grants/${grants[0].id}`, { method: "DELETE" })).status).toBe(204);
    expect((await fetch(`${base}/v1/repositories`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
    // Asked again after revocation: the consent page.
    const page = await browser.fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('value="allow"');
  });

  it("revoking the API key signed in with ends the grant's tokens", async () => {
    const carol = await svc.tenant();
    const reg = await (await register({ redirect_uris: [redirectUri], token_endpoint_auth_method: "none" })).json();
    const tokens = await codeTokens({ client_id: reg.client_id, token_endpoint_auth_method: "none" }, oauth.None(), carol.key);
    expect((await fetch(`${base}/v1/repositories`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(200);
    await svc.db.updateTable("api_keys").set({ revoked_at: new Date() }).where("account_id", "=", carol.accountId).execute();
    expect((await fetch(`${base}/v1/repositories`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
  });
});

describe("client ID metadata documents", () => {
  it("fetches the document, shows its name, and issues tokens to it", async () => {
    const id = `${cimdBase}/agent.json`;
    cimdDocs.set("/agent.json", {
      client_id: id,
      client_name: "Metadata Agent",
      redirect_uris: [redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      token_endpoint_auth_method: "none",
    });
    const c: oauth.Client = { client_id: id, token_endpoint_auth_method: "none" };
    const browser = new FormBrowser();
    const verifier = oauth.generateRandomCodeVerifier();
    const page = await browser.fetch(
      authorizationUrl(as, { clientId: id, redirectUri, challenge: await oauth.calculatePKCECodeChallenge(verifier), state: "m" }),
    );
    expect(await page.text()).toContain("Metadata Agent");
    const hits = cimdHits;
    const tokens = await codeTokens(c, oauth.None());
    expect(cimdHits).toBe(hits); // cached
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      c,
      await oauth.refreshTokenGrantRequest(as, c, oauth.None(), tokens.refresh_token!, insecure),
    );
    expect(refreshed.access_token).toMatch(/^cpat_/);
  });

  it("refuses documents that are not the client's own, too large, missing, or ask for a secret", async () => {
    cimdDocs.set("/liar.json", { client_id: `${cimdBase}/other.json`, redirect_uris: [redirectUri] });
    cimdDocs.set("/secret.json", { client_id: `${cimdBase}/secret.json`, redirect_uris: [redirectUri], token_endpoint_auth_method: "client_secret_basic" });
    for (const path of ["/liar.json", "/huge.json", "/missing.json", "/secret.json"]) {
      const res = await fetch(authorizationUrl(as, { clientId: `${cimdBase}${path}`, redirectUri, challenge: "a".repeat(43) }), { redirect: "manual" });
      expect(res.status, path).toBe(400);
      expect(res.headers.get("location")).toBeNull();
    }
  });

  it("is refused on loopback without the development setting (SSRF guard)", async () => {
    const strict = await startTestService();
    try {
      const res = await fetch(
        `${strict.url}/oauth/authorize?client_id=${encodeURIComponent(`${cimdBase}/agent.json`)}&redirect_uri=${encodeURIComponent(redirectUri)}`,
        { redirect: "manual" },
      );
      expect(res.status).toBe(400);
      const loop = await fetch(
        `${strict.url}/oauth/authorize?client_id=${encodeURIComponent("https://127.0.0.1/agent.json")}&redirect_uri=${encodeURIComponent(redirectUri)}`,
        { redirect: "manual" },
      );
      expect(loop.status).toBe(400);
      expect(await loop.text()).toMatch(/private, loopback or reserved/);
    } finally {
      await strict.close();
    }
  });
});
