import type { Context } from "koa";
import { authenticateClient, presentedCredentials } from "../clients.ts";
import { invalidClient, invalidRequest } from "../errors.ts";
import { readForm } from "../http.ts";
import { liveToken } from "../store.ts";
import { baseOf, type EndpointDeps } from "./endpoint.ts";

// Token introspection (RFC 7662), for confidential clients about their own tokens.

export const introspect =
  (d: Pick<EndpointDeps, "db" | "publicUrl" | "cimd">) =>
  async (ctx: Context): Promise<void> => {
    const { db } = d;
    ctx.set("Cache-Control", "no-store");
    const b = baseOf(ctx, d.publicUrl);
    const body = await readForm(ctx);
    const client = await authenticateClient(db, presentedCredentials(ctx.get("authorization") || undefined, body), d.cimd);
    if (client.authMethod === "none") throw invalidClient("introspection needs client authentication: a public client cannot introspect");
    if (!body.token) throw invalidRequest("token is required");
    const hint = body.token_type_hint === "refresh_token" ? "refresh" : "access";
    const found = (await liveToken(db, hint, body.token)) ?? (await liveToken(db, hint === "access" ? "refresh" : "access", body.token));
    // Only the client a token was issued to learns anything about it.
    if (!found || found.clientId !== client.clientId) {
      ctx.body = { active: false };
      return;
    }
    const kind = body.token.startsWith("cprt_") ? "refresh_token" : "access_token";
    ctx.body = {
      active: true,
      scope: found.scopes.join(" "),
      client_id: found.clientId,
      token_type: kind === "access_token" ? "Bearer" : "refresh_token",
      exp: Math.floor(found.expiresAt.getTime() / 1000),
      iat: Math.floor(found.createdAt.getTime() / 1000),
      sub: found.accountId,
      aud: found.resource,
      iss: b,
    };
  };
