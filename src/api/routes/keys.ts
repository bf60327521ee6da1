import { createApiKey, listApiKeys, revokeApiKey } from "../../domain/auth/api-keys.ts";
import { apiKeySchema, createApiKeySchema, createdApiKeySchema } from "../../domain/auth/api-keys.schemas.ts";
import type { Db } from "../../db/database.ts";
import { errorBodySchema, type Routes } from "../route.ts";
import { idParam, pageOf, pageQuery } from "./common.ts";

export function registerKeyRoutes(routes: Routes, db: Db): void {
  routes.add({
    method: "post",
    path: "/v1/auth/keys",
    operationId: "createApiKey",
    summary: "Create an API key",
    description:
      "The key is returned only in this response (sent with `Cache-Control: no-store`); only its hash is stored. " +
      "A key is never more powerful than the credential that creates it: it cannot have scopes the calling credential lacks " +
      "(without `scopes` it gets exactly the caller's), and it cannot outlive it: `expires_at` must not be later than the calling key's expiry, " +
      "and without `expires_at` the new key gets the calling key's expiry (no expiry only from a key with none). " +
      "Revoking a key revokes every key created with it (and theirs). " +
      "An OAuth access token cannot create keys (`403`): a key made by a client would outlive the grant that allowed it.",
    tag: "API keys",
    scope: "keys:write",
    body: createApiKeySchema,
    responses: {
      201: { description: "Created.", schema: createdApiKeySchema },
      403: { description: "Or the caller is an OAuth access token, or the calling key was revoked or expired while the request ran." },
    },
    handler: async (_ctx, { body, principal }) => ({
      status: 201,
      body: await createApiKey(db, principal.accountId, body, principal),
    }),
  });

  routes.add({
    method: "get",
    path: "/v1/auth/keys",
    operationId: "listApiKeys",
    summary: "List API keys",
    description:
      "Live (unrevoked) keys of the account, without their secret. Lists only keys whose scopes are all among the calling credential's: " +
      "the keys it could revoke; a more powerful key (for example a full-scope admin key, seen by a `keys:write`-only key) is not shown.",
    tag: "API keys",
    scope: "keys:write",
    query: pageQuery,
    responses: { 200: { description: "A page of keys, newest first.", schema: pageOf(apiKeySchema, "ApiKeyPage") } },
    handler: async (_ctx, { query, principal }) => ({ status: 200, body: await listApiKeys(db, principal.accountId, query, principal) }),
  });

  routes.add({
    method: "delete",
    path: "/v1/auth/keys/{key_id}",
    operationId: "deleteApiKey",
    summary: "Revoke an API key",
    description:
      "The key stops working at once, and so does every key created with it (its children, theirs, ...). " +
      "A key with scopes the calling credential lacks cannot be revoked by it (`403`): key management never reaches a more powerful key.",
    tag: "API keys",
    scope: "keys:write",
    params: idParam("key_id"),
    responses: {
      204: { description: "Revoked, with the keys created with it." },
      403: { description: "Or the key is more powerful than the calling credential: `Cannot revoke a key with scopes the current credential lacks: ...`." },
      404: { description: "No such key in this account.", schema: errorBodySchema },
    },
    handler: async (_ctx, { params, principal }) => {
      await revokeApiKey(db, principal.accountId, params.key_id, principal);
      return { status: 204 };
    },
  });
}
