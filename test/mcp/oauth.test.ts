import { Client, StreamableHTTPClientTransport, UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/shared/ids.ts";
import type { Tenant, TestService } from "../helpers/service.ts";
import { twoTenantsWithRepository, type TwoTenants } from "../helpers/two-tenants.ts";
import { FormBrowser, signInAndDecide } from "../oauth/helpers.ts";

// What an MCP agent does with nothing but the server's URL: its first request
// is a bare 401, from which the SDK's own OAuth client discovers codeplane's
// authorization server, registers itself dynamically and sends the person to
// the sign-in and consent page (driven here as a browser would: the API key
// form, its CSRF token, Allow); the code comes back to the client, which
// trades it (PKCE, resource) for a token and calls the tools with it.

let setup: TwoTenants;
let svc: TestService;
let alice: Tenant;
let repoId: string;
const clients: Client[] = [];

/** The SDK's client-side OAuth state, kept in memory as an agent would keep it on disk. */
class MemoryProvider implements OAuthClientProvider {
  redirectUrl = "http://127.0.0.1:7791/callback";
  authorizationUrls: URL[] = [];
  info: Parameters<NonNullable<OAuthClientProvider["saveClientInformation"]>>[0] | undefined;
  saved: Parameters<OAuthClientProvider["saveTokens"]>[0] | undefined;
  verifier = "";
  get clientMetadata() {
    return {
      client_name: "codeplane MCP test agent",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: NonNullable<MemoryProvider["info"]>) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: NonNullable<MemoryProvider["saved"]>) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrls.push(url);
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

const transportFor = (provider: OAuthClientProvider) => new StreamableHTTPClientTransport(new URL(`${svc.url}/mcp`), { authProvider: provider });
const newClient = () => {
  const c = new Client({ name: "codeplane-oauth-test", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
  clients.push(c);
  return c;
};

/** Connects with nothing but the URL, signs in through the page and comes back with a connected client. */
async function connectThroughOAuth(provider: MemoryProvider, key: string, scope?: string): Promise<Client> {
  const first = transportFor(provider);
  await expect(newClient().connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
  const authorizationUrl = provider.authorizationUrls.at(-1)!;
  // The SDK asks for every scope the server lists; a narrower request stands for a client that asks for less.
  if (scope) authorizationUrl.searchParams.set("scope", scope);
  expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");
  expect(authorizationUrl.searchParams.get("resource")).toBe(svc.url);
  const back = await signInAndDecide(new FormBrowser(), svc.url, authorizationUrl.href, key);
  expect(back.origin + back.pathname).toBe(provider.redirectUrl);
  expect(back.searchParams.get("iss")).toBe(svc.url);
  await first.finishAuth(back.searchParams);
  const client = newClient();
  await client.connect(transportFor(provider));
  return client;
}

beforeAll(async () => {
  setup = await twoTenantsWithRepository();
  ({ svc, alice, repoId } = setup);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await setup?.close();
});

describe("MCP with OAuth", () => {
  it("answers a bare request 401 pointing at the protected-resource metadata", async () => {
    const res = await fetch(`${svc.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${svc.url}/.well-known/oauth-protected-resource"`);
  });

  it("discovers, registers, signs in and consents, then calls the tools with the access token", async () => {
    const provider = new MemoryProvider();
    const client = await connectThroughOAuth(provider, alice.key);
    expect(provider.info?.client_id).toEqual(expect.any(String)); // registered dynamically
    expect(provider.saved?.access_token).toEqual(expect.any(String));
    expect(provider.saved?.access_token).not.toBe(alice.key);

    const repos = (await client.callTool({ name: "list_repositories", arguments: {} })) as { structuredContent: { items: { id: string }[] } };
    expect(repos.structuredContent.items.map((r) => r.id)).toEqual([repoId]);
    const file = (await client.callTool({ name: "read_file", arguments: { repository_id: repoId, path: "README.md" } })) as { structuredContent: { content: string } };
    expect(file.structuredContent.content).toMatch(/^# Fixture/);
    const set = (await client.callTool({ name: "set_environment_variable", arguments: { name: "FROM_OAUTH", value: "1" } })) as { isError?: boolean };
    expect(set.isError).toBeFalsy();
    const run = (await client.callTool({ name: "get_run", arguments: { run_id: newId() } })) as { isError?: boolean; content: { text: string }[] };
    expect(run).toMatchObject({ isError: true, content: [{ text: "Run not found" }] });

    // The token is the account's: bob's key signs bob in, and bob sees nothing of alice's.
    const bobClient = await connectThroughOAuth(new MemoryProvider(), setup.bob.key);
    const bobFiles = (await bobClient.callTool({ name: "list_files", arguments: { repository_id: repoId } })) as { isError?: boolean; content: { text: string }[] };
    expect(bobFiles).toMatchObject({ isError: true, content: [{ text: "Repository not found" }] });
  });

  it("answers a tool beyond the consented scope 403 insufficient_scope, naming the scope, for the client to step up", async () => {
    const provider = new MemoryProvider();
    const client = await connectThroughOAuth(provider, alice.key, "repositories:read");
    expect(provider.saved?.scope).toBe("repositories:read");
    expect(((await client.callTool({ name: "list_repositories", arguments: {} })) as { isError?: boolean }).isError).toBeFalsy();
    // The SDK client answers the challenge by starting a new authorization for the wider scope.
    const before = provider.authorizationUrls.length;
    await expect(client.callTool({ name: "run_command", arguments: { repository_id: repoId, commit_hash: "main", command: ["true"] } })).rejects.toThrow();
    const stepUp = provider.authorizationUrls.slice(before).at(-1)!;
    expect(stepUp.searchParams.get("scope")?.split(" ").sort()).toEqual(["repositories:read", "runs:write"]);

    // The person allows the wider scope; the client trades the new code and the call gets through
    // (to the API's 503, as there is no cluster here).
    const back = await signInAndDecide(new FormBrowser(), svc.url, stepUp.href, alice.key);
    await transportFor(provider).finishAuth(back.searchParams);
    expect(provider.saved?.scope?.split(" ").sort()).toEqual(["repositories:read", "runs:write"]);
    const widened = newClient();
    await widened.connect(transportFor(provider));
    const run = (await widened.callTool({ name: "run_command", arguments: { repository_id: repoId, commit_hash: "main", command: ["true"] } })) as { isError?: boolean; content: { text: string }[] };
    expect(run.isError).toBe(true);
    expect(run.content[0]!.text).toMatch(/Kubernetes is not reachable/);
  });
});
