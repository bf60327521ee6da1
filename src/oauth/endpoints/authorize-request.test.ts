import { describe, expect, it } from "vitest";
import { SCOPES } from "../../domain/auth/scopes.ts";
import type { OAuthClient } from "../clients.ts";
import { checkAuthorizationRequest, requestParams } from "./authorize-request.ts";

const B = "https://cp.example";
const client = (over: Partial<OAuthClient> = {}): OAuthClient => ({
  clientId: "c1",
  kind: "registered",
  accountId: null,
  apiKeyId: null,
  name: "app",
  redirectUris: ["https://app.example/cb"],
  grantTypes: ["authorization_code"],
  authMethod: "none",
  scopes: null,
  secretHash: null,
  metadata: {},
  createdAt: new Date(0),
  ...over,
});
const good = { response_type: "code", code_challenge: "a".repeat(43), code_challenge_method: "S256" };

type Case = [name: string, params: Record<string, string>, client: OAuthClient, expected: Record<string, unknown>];
const cases: Case[] = [
  ["all scopes when none asked and none registered", good, client(), { asked: [...SCOPES], resource: B }],
  ["the registered scopes when none asked", good, client({ scopes: ["runs:read"] }), { asked: ["runs:read"] }],
  ["the MCP endpoint as resource", { ...good, resource: `${B}/mcp` }, client(), { resource: B }],
  ["client without the code grant", good, client({ grantTypes: ["client_credentials"] }), { error: "unauthorized_client" }],
  ["response_type token", { ...good, response_type: "token" }, client(), { error: "unsupported_response_type" }],
  ["no code_challenge", { ...good, code_challenge: "" }, client(), { error: "invalid_request", description: "code_challenge is required (PKCE with S256)" }],
  ["plain PKCE", { ...good, code_challenge_method: "plain" }, client(), { error: "invalid_request", description: "code_challenge_method must be S256" }],
  ["short challenge", { ...good, code_challenge: "abc" }, client(), { error: "invalid_request", description: expect.stringContaining("43 characters") }],
  ["unknown scope", { ...good, scope: "runs:read nope" }, client(), { error: "invalid_scope", description: "unknown scope: nope" }],
  [
    "scope beyond what an account registered the client with",
    { ...good, scope: "runs:write" },
    client({ scopes: ["runs:read"], accountId: "a1", apiKeyId: "k1" }),
    { error: "invalid_scope", description: "scope beyond what the client registered" },
  ],
  // A client that registered itself (an MCP client registers the 401 challenge's scopes) steps up beyond them; the person consents.
  [
    "scope beyond what a client registered itself with",
    { ...good, scope: "runs:read runs:write" },
    client({ scopes: ["runs:read"] }),
    { asked: ["runs:read", "runs:write"] },
  ],
  [
    "scope beyond a metadata document's",
    { ...good, scope: "env:write" },
    client({ kind: "metadata_document", scopes: ["runs:read"] }),
    { asked: ["env:write"] },
  ],
  ["empty scope", { ...good, scope: " " }, client(), { error: "invalid_scope", description: "no scope asked" }],
  ["foreign resource", { ...good, resource: "https://other.example" }, client(), { error: "invalid_target" }],
];

describe("checkAuthorizationRequest", () => {
  it.each(cases)("%s", (_name, params, c, expected) => {
    expect(checkAuthorizationRequest(params, c, B)).toMatchObject(expected);
  });
});

it("requestParams keeps only the authorization request's own parameters", () => {
  expect(requestParams({ client_id: "c1", state: "s", cp_action: "consent", csrf_token: "t", api_key: "k" })).toEqual({ client_id: "c1", state: "s" });
});
