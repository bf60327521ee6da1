import { Client, StreamableHTTPClientTransport, UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/client";
import { expect } from "vitest";
import { FormBrowser, signInAndDecide } from "../oauth/helpers.ts";

// An MCP client that signs in with OAuth the way an agent does, given only the
// server's URL: the SDK's OAuth client discovers, registers and builds the
// authorization URL; the page is driven as a browser would (test/oauth/helpers.ts).

/** The SDK's client-side OAuth state, kept in memory as an agent would keep it on disk. */
export class MemoryProvider implements OAuthClientProvider {
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

export const oauthTransport = (base: string, provider: OAuthClientProvider) =>
  new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
export const modernClient = () => new Client({ name: "codeplane-oauth-test", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });

/** The scopes the /mcp 401 challenge names, which the SDK asks for first: the read-only tools' (src/mcp/tools.ts). */
export const MCP_FIRST_SCOPES = "repositories:read analyses:read runs:read env:read";
/** Every tool's scope: what a client configured to ask for all it may do asks for at once. */
export const MCP_ALL_TOOL_SCOPES = "repositories:read repositories:write analyses:read analyses:write runs:read runs:write env:read env:write";

/**
 * Connects with nothing but the URL (a 401, then discovery and registration), signs in with
 * `key` and allows on the page, and returns a client connected with the access token.
 */
export async function connectThroughOAuth(base: string, provider: MemoryProvider, key: string, scope?: string): Promise<Client> {
  const first = oauthTransport(base, provider);
  await expect(modernClient().connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
  const authorizationUrl = provider.authorizationUrls.at(-1)!;
  // The SDK asks for the scopes the 401 challenge names; another request stands for a client configured to ask for other scopes.
  expect(authorizationUrl.searchParams.get("scope")).toBe(MCP_FIRST_SCOPES);
  if (scope) authorizationUrl.searchParams.set("scope", scope);
  expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");
  expect(authorizationUrl.searchParams.get("resource")).toBe(base);
  const back = await signInAndDecide(new FormBrowser(), base, authorizationUrl.href, key);
  expect(back.origin + back.pathname).toBe(provider.redirectUrl);
  expect(back.searchParams.get("iss")).toBe(base);
  await first.finishAuth(back.searchParams);
  const client = modernClient();
  await client.connect(oauthTransport(base, provider));
  return client;
}
