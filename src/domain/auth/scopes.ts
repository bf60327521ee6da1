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
