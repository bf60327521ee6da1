import type { Context } from "koa";
import { SCOPES } from "../../domain/auth/scopes.ts";
import { baseOf, type EndpointDeps } from "./endpoint.ts";

// RFC 8414 and RFC 9728 metadata: where the endpoints are and what they accept.

export const authorizationServerMetadata =
  (d: Pick<EndpointDeps, "publicUrl">) =>
  async (ctx: Context): Promise<void> => {
    const b = baseOf(ctx, d.publicUrl);
    ctx.body = {
      issuer: b,
      authorization_endpoint: `${b}/oauth/authorize`,
      token_endpoint: `${b}/oauth/token`,
      registration_endpoint: `${b}/oauth/register`,
      revocation_endpoint: `${b}/oauth/revoke`,
      introspection_endpoint: `${b}/oauth/introspect`,
      scopes_supported: [...SCOPES],
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      grant_types_supported: ["authorization_code", "refresh_token", "client_credentials"],
      token_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post"],
      revocation_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post"],
      introspection_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
      code_challenge_methods_supported: ["S256"],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
      service_documentation: `${b}/docs`,
    };
  };

export const protectedResourceMetadata =
  (d: Pick<EndpointDeps, "publicUrl">) =>
  async (ctx: Context): Promise<void> => {
    const b = baseOf(ctx, d.publicUrl);
    ctx.body = {
      resource: b,
      authorization_servers: [b],
      scopes_supported: [...SCOPES],
      bearer_methods_supported: ["header"],
      resource_name: "codeplane",
      resource_documentation: `${b}/docs`,
    };
  };
