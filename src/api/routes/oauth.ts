import type { OAuthServer } from "../../oauth/index.ts";
import { oauthClientSchema, oauthGrantSchema } from "../../oauth/index.ts";
import { errorBodySchema, type Routes } from "../route.ts";
import { idParam, pageOf, pageQuery } from "./common.ts";

// What an account has authorised through OAuth: its registered clients and the
// grants (remembered consent) its people gave. Managing them is credential
// management, so it takes keys:write, as API keys do.

export function registerOAuthRoutes(routes: Routes, oauth: OAuthServer): void {
  routes.add({
    method: "get",
    path: "/v1/oauth/clients",
    operationId: "listOAuthClients",
    summary: "List OAuth clients registered by this account",
    description:
      "Clients registered through `POST /oauth/register` with an API key of this account (`Authorization: Bearer cp_...`), newest first. " +
      "Clients registered anonymously and clients identified by a metadata document belong to no account and are not listed; what this account allowed them is in `/v1/oauth/grants`.",
    tag: "OAuth",
    scope: "keys:write",
    query: pageQuery,
    responses: { 200: { description: "A page of clients, newest first.", schema: pageOf(oauthClientSchema, "OAuthClientPage") } },
    handler: async (_ctx, { query, principal }) => ({ status: 200, body: await oauth.listClients(principal.accountId, query) }),
  });

  routes.add({
    method: "delete",
    path: "/v1/oauth/clients/{client_id}",
    operationId: "deleteOAuthClient",
    summary: "Delete an OAuth client",
    description: "The client stops working at once: every grant, code and token of it (for any account) is revoked, and its credentials are refused.",
    tag: "OAuth",
    scope: "keys:write",
    params: idParam("client_id"),
    responses: {
      204: { description: "Deleted." },
      404: { description: "No such client registered by this account.", schema: errorBodySchema },
    },
    handler: async (_ctx, { params, principal }) => {
      await oauth.deleteClient(principal.accountId, params.client_id);
      return { status: 204 };
    },
  });

  routes.add({
    method: "get",
    path: "/v1/oauth/grants",
    operationId: "listOAuthGrants",
    summary: "List what this account has allowed OAuth clients",
    description: "One live grant per client: the scopes people of this account allowed it, remembered so it is not asked again for them. Newest first.",
    tag: "OAuth",
    scope: "keys:write",
    query: pageQuery,
    responses: { 200: { description: "A page of grants, newest first.", schema: pageOf(oauthGrantSchema, "OAuthGrantPage") } },
    handler: async (_ctx, { query, principal }) => ({ status: 200, body: await oauth.listGrants(principal.accountId, query) }),
  });

  routes.add({
    method: "delete",
    path: "/v1/oauth/grants/{grant_id}",
    operationId: "revokeOAuthGrant",
    summary: "Revoke a grant",
    description: "Every access and refresh token issued under the grant stops working at once, unused codes too; the client has to ask again.",
    tag: "OAuth",
    scope: "keys:write",
    params: idParam("grant_id"),
    responses: {
      204: { description: "Revoked." },
      404: { description: "No such grant in this account.", schema: errorBodySchema },
    },
    handler: async (_ctx, { params, principal }) => {
      await oauth.revokeGrant(principal.accountId, params.grant_id);
      return { status: 204 };
    },
  });
}
