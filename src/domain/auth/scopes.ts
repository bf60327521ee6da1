import { z } from "zod";

export const SCOPES = [
  "repositories:read",
  "repositories:write",
  "analyses:read",
  "analyses:write",
  "runs:read",
  "runs:write",
  "env:read",
  "env:write",
  "integrations:read",
  "integrations:write",
  "notifications:read",
  "notifications:write",
  "keys:write",
] as const;

export type Scope = (typeof SCOPES)[number];

/** What each scope allows, as the OpenAPI document's OAuth flows list it. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<Scope, string>> = Object.freeze({
  "repositories:read": "Read repositories, their refs and files.",
  "repositories:write": "Register, change and delete repositories.",
  "analyses:read": "Read analyses and their logs.",
  "analyses:write": "Start and delete analyses.",
  "runs:read": "Read runs, their logs and environments.",
  "runs:write": "Start, cancel and delete runs; drop cached environments.",
  "env:read": "List environment variables (names, never values).",
  "env:write": "Set and delete environment variables.",
  "integrations:read": "Read code-host integrations.",
  "integrations:write": "Connect, change and remove code-host integrations.",
  "notifications:read": "Read notification endpoints (never their secrets) and their deliveries.",
  "notifications:write": "Register, change and delete notification endpoints; redeliver notifications.",
  "keys:write": "Create, list and revoke API keys; manage OAuth clients and grants.",
});

export const scopeSchema = z.enum(SCOPES);

/** Who is calling: the same shape whether the token was an API key or (later) an OAuth access token. */
export interface Principal {
  accountId: string;
  scopes: ReadonlySet<Scope>;
  credential: {
    kind: "api_key" | "oauth";
    id: string;
    /** When the credential stops working; absent or null: never. Keys it mints cannot outlive it. */
    expiresAt?: Date | null;
  };
}
