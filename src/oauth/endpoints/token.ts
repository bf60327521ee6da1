import type { Context } from "koa";
import { authenticateClient, presentedCredentials } from "../clients.ts";
import { invalidRequest, OAuthProblem } from "../errors.ts";
import { readForm } from "../http.ts";
import { baseOf, canonicalResource, type EndpointDeps } from "./endpoint.ts";

// The token endpoint (RFC 6749 section 3.2): the grant itself is the engine's.

const GRANT_TYPES = ["authorization_code", "refresh_token", "client_credentials"];

export const token =
  (d: Pick<EndpointDeps, "db" | "publicUrl" | "cimd" | "engine">) =>
  async (ctx: Context): Promise<void> => {
    ctx.set("Cache-Control", "no-store");
    const b = baseOf(ctx, d.publicUrl);
    const body = await readForm(ctx);
    if (!body.grant_type) throw invalidRequest("grant_type is required");
    if (!GRANT_TYPES.includes(body.grant_type))
      throw new OAuthProblem("unsupported_grant_type", "grant_type must be authorization_code, refresh_token or client_credentials");
    const client = await authenticateClient(d.db, presentedCredentials(ctx.get("authorization") || undefined, body), d.cimd);
    const resource = canonicalResource(body.resource, b);
    if (!resource) throw new OAuthProblem("invalid_target", `resource must be ${b} (or ${b}/mcp)`);
    ctx.body = await d.engine.token({ client, body, headers: ctx.headers, resource });
  };
