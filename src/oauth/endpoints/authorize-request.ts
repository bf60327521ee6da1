import { SCOPES, type Scope } from "../../domain/auth/scopes.ts";
import type { OAuthClient } from "../clients.ts";
import { canonicalResource } from "./endpoint.ts";

// Pure checks of an authorization request (RFC 6749 section 4.1.1 with PKCE
// and RFC 8707), after its client and redirect URI are known to be right:
// each failure is an error the client gets back on its redirect URI.

/** The authorization request's parameters, carried through the page's forms. */
export const REQUEST_PARAMS = ["response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method", "resource"] as const;

export interface AcceptedRequest {
  /** The scopes asked (the client's registered ones, or all, when the request names none). */
  asked: string[];
  /** The token's audience. */
  resource: string;
}

export interface RejectedRequest {
  error: string;
  description: string;
}

const reject = (error: string, description: string): RejectedRequest => ({ error, description });

function pkceError(params: Record<string, string>): RejectedRequest | null {
  if (!params.code_challenge) return reject("invalid_request", "code_challenge is required (PKCE with S256)");
  if (params.code_challenge_method !== "S256") return reject("invalid_request", "code_challenge_method must be S256");
  if (!/^[A-Za-z0-9_-]{43}$/.test(params.code_challenge))
    return reject("invalid_request", "code_challenge must be the base64url SHA-256 of the verifier (43 characters)");
  return null;
}

/**
 * The registered `scope` of a client an account registered (with an API key)
 * is a limit its owner set. A client that registered itself (dynamic
 * registration without a key, or a Client ID Metadata Document) only said
 * what it would ask for first: MCP clients register the scopes of the 401
 * challenge and step up beyond them when a tool needs more (MCP's step-up
 * authorization; RFC 7591 leaves the use of `scope` to the server). The person
 * decides on the consent page, and a token never exceeds their API key.
 */
const registeredLimit = (client: OAuthClient): readonly Scope[] | null => (client.accountId === null ? null : client.scopes);

function scopeError(asked: string[], client: OAuthClient): RejectedRequest | null {
  const unknown = asked.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length) return reject("invalid_scope", `unknown scope: ${unknown.join(" ")}`);
  const limit = registeredLimit(client);
  if (limit && asked.some((s) => !limit.includes(s as Scope))) return reject("invalid_scope", "scope beyond what the client registered");
  if (asked.length === 0) return reject("invalid_scope", "no scope asked");
  return null;
}

/** The request's scopes and resource, or the first error found, in the order the checks have always run. */
export function checkAuthorizationRequest(params: Record<string, string>, client: OAuthClient, baseUrl: string): AcceptedRequest | RejectedRequest {
  if (!client.grantTypes.includes("authorization_code")) return reject("unauthorized_client", "this client did not register the authorization_code grant");
  if (params.response_type !== "code") return reject("unsupported_response_type", "response_type must be code");
  const pkce = pkceError(params);
  if (pkce) return pkce;
  const asked = params.scope === undefined ? (client.scopes ?? [...SCOPES]) : params.scope.split(" ").filter(Boolean);
  const scope = scopeError(asked, client);
  if (scope) return scope;
  const resource = canonicalResource(params.resource, baseUrl);
  if (!resource) return reject("invalid_target", `resource must be ${baseUrl} (or ${baseUrl}/mcp)`);
  return { asked, resource };
}

/** Only the authorization request's own parameters, to carry through sign-in and consent. */
export function requestParams(params: Record<string, string>): Record<string, string> {
  const request: Record<string, string> = {};
  for (const k of REQUEST_PARAMS) if (params[k] !== undefined) request[k] = params[k];
  return request;
}
