import type { Client } from "@modelcontextprotocol/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "../../src/domain/shared/ids.ts";
import type { Tenant, TestService } from "../helpers/service.ts";
import { twoTenantsWithRepository, type TwoTenants } from "../helpers/two-tenants.ts";
import { connectThroughOAuth as connect, MCP_ALL_TOOL_SCOPES, MCP_FIRST_SCOPES, MemoryProvider, modernClient, oauthTransport } from "../helpers/mcp-oauth.ts";
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

const transportFor = (provider: MemoryProvider) => oauthTransport(svc.url, provider);
const newClient = () => {
  const c = modernClient();
  clients.push(c);
  return c;
};
const connectThroughOAuth = async (provider: MemoryProvider, key: string, scope?: string) => {
  const c = await connect(svc.url, provider, key, scope);
  clients.push(c);
  return c;
};

beforeAll(async () => {
  setup = await twoTenantsWithRepository();
  ({ svc, alice, repoId } = setup);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await setup?.close();
});

describe("MCP with OAuth", () => {
  it("answers a bare request 401 pointing at the protected-resource metadata and naming the scopes to ask for first", async () => {
    const res = await fetch(`${svc.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(`Bearer scope="${MCP_FIRST_SCOPES}", resource_metadata="${svc.url}/.well-known/oauth-protected-resource"`);
  });

  it("discovers, registers, signs in and consents, then calls the tools with the access token", async () => {
    const provider = new MemoryProvider();
    const client = await connectThroughOAuth(provider, alice.key);
    expect(provider.info?.client_id).toEqual(expect.any(String)); // registered dynamically
    expect(provider.saved?.access_token).toEqual(expect.any(String));
    expect(provider.saved?.access_token).not.toBe(alice.key);
    // It asked for the scopes the challenge named, and got them: no keys:write, nothing to write with yet.
    expect(provider.saved?.scope?.split(" ").sort()).toEqual(MCP_FIRST_SCOPES.split(" ").sort());

    const repos = (await client.callTool({ name: "list_repositories", arguments: {} })) as { structuredContent: { items: { id: string }[] } };
    expect(repos.structuredContent.items.map((r) => r.id)).toEqual([repoId]);
    const file = (await client.callTool({ name: "read_file", arguments: { repository_id: repoId, path: "README.md" } })) as { content: { text: string }[] };
    expect(file.content[1]!.text).toMatch(/^# Fixture/);
    const vars = (await client.callTool({ name: "list_environment_variables", arguments: {} })) as { isError?: boolean };
    expect(vars.isError).toBeFalsy();
    const run = (await client.callTool({ name: "get_run", arguments: { run_id: newId() } })) as { isError?: boolean; content: { text: string }[] };
    expect(run).toMatchObject({ isError: true, content: [{ text: "Run not found" }] });

    // The token is the account's: bob's key signs bob in, and bob sees nothing of alice's.
    const bobClient = await connectThroughOAuth(new MemoryProvider(), setup.bob.key);
    const bobFiles = (await bobClient.callTool({ name: "list_files", arguments: { repository_id: repoId } })) as {
      isError?: boolean;
      content: { text: string }[];
    };
    expect(bobFiles).toMatchObject({ isError: true, content: [{ text: "Repository not found" }] });
  });

  it("starts with the read-only tools' scopes and steps up for a write tool when it is first called", async () => {
    const provider = new MemoryProvider();
    const client = await connectThroughOAuth(provider, alice.key);
    const before = provider.authorizationUrls.length;
    await expect(client.callTool({ name: "set_environment_variable", arguments: { name: "FROM_OAUTH", value: "1" } })).rejects.toThrow();
    const stepUp = provider.authorizationUrls.slice(before).at(-1)!;
    expect(stepUp.searchParams.get("scope")?.split(" ").sort()).toEqual([...MCP_FIRST_SCOPES.split(" "), "env:write"].sort());
    const back = await signInAndDecide(new FormBrowser(), svc.url, stepUp.href, alice.key);
    await transportFor(provider).finishAuth(back.searchParams);
    const widened = newClient();
    await widened.connect(transportFor(provider));
    const set = (await widened.callTool({ name: "set_environment_variable", arguments: { name: "FROM_OAUTH", value: "1" } })) as { isError?: boolean };
    expect(set.isError).toBeFalsy();
  });

  it("serves a client configured to ask for every tool's scope at once without a step-up", async () => {
    const provider = new MemoryProvider();
    const client = await connectThroughOAuth(provider, alice.key, MCP_ALL_TOOL_SCOPES);
    expect(provider.saved?.scope?.split(" ").sort()).toEqual(MCP_ALL_TOOL_SCOPES.split(" ").sort());
    const set = (await client.callTool({ name: "set_environment_variable", arguments: { name: "FROM_OAUTH_ALL", value: "1" } })) as { isError?: boolean };
    expect(set.isError).toBeFalsy();
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
    const run = (await widened.callTool({ name: "run_command", arguments: { repository_id: repoId, commit_hash: "main", command: ["true"] } })) as {
      isError?: boolean;
      content: { text: string }[];
    };
    expect(run.isError).toBe(true);
    expect(run.content[0]!.text).toMatch(/Kubernetes is not reachable/);
  });
});
