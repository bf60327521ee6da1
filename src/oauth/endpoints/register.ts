import type { Context } from "koa";
import { authenticateApiKey } from "../../domain/auth/api-keys.ts";
import type { Principal } from "../../domain/auth/scopes.ts";
import type { Db } from "../../db/database.ts";
import { registerClient, registrationResponse } from "../clients.ts";
import { invalidClientMetadata, OAuthProblem } from "../errors.ts";
import { readJson } from "../http.ts";
import { baseOf, type EndpointDeps } from "./endpoint.ts";

// Dynamic client registration (RFC 7591): anonymous, or for an account when
// the request carries an API key with keys:write.

/** The account registering, from a Bearer API key; null for an anonymous registration. */
async function registrarOf(db: Db, authorization: string): Promise<Principal | null> {
  if (!authorization) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  const registrar = m?.[1] ? await authenticateApiKey(db, m[1]) : null;
  if (!registrar)
    throw new OAuthProblem("invalid_token", "the bearer token is not a valid API key", 401, { "WWW-Authenticate": 'Bearer error="invalid_token"' });
  if (!registrar.scopes.has("keys:write")) {
    throw new OAuthProblem("insufficient_scope", "registering a client for an account needs an API key with keys:write", 403, {
      "WWW-Authenticate": 'Bearer error="insufficient_scope", scope="keys:write"',
    });
  }
  return registrar;
}

export const register =
  (d: Pick<EndpointDeps, "db" | "publicUrl" | "audit">) =>
  async (ctx: Context): Promise<void> => {
    baseOf(ctx, d.publicUrl);
    ctx.set("Cache-Control", "no-store");
    const registrar = await registrarOf(d.db, ctx.get("authorization"));
    const body = await readJson(ctx, 64 * 1024, invalidClientMetadata);
    const registered = await registerClient(d.db, body, registrar);
    d.audit.info(
      {
        event: "oauth.client_registered",
        client_id: registered.client.clientId,
        account_id: registered.client.accountId,
        auth_method: registered.client.authMethod,
        grant_types: registered.client.grantTypes,
      },
      "OAuth client registered",
    );
    ctx.status = 201;
    ctx.body = registrationResponse(registered);
  };
