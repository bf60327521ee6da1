import { z } from "zod";
import { createApiKey, listApiKeys, revokeApiKey } from "../../domain/auth/api-keys.ts";
import { apiKeySchema, createApiKeySchema, createdApiKeySchema } from "../../domain/auth/api-keys.schemas.ts";
import type { Db } from "../../db/database.ts";
import type { Routes } from "../route.ts";
import { idParam, pageOf, pageQuery } from "./common.ts";

export function registerKeyRoutes(routes: Routes, db: Db): void {
  routes.add({
    method: "post",
    path: "/v1/auth/keys",
    operationId: "createApiKey",
    summary: "Create an API key",
    description: "The key is returned only in this response; only its hash is stored. A key cannot have scopes the calling credential lacks.",
    tag: "API keys",
    scope: "keys:write",
    body: createApiKeySchema,
    responses: { 201: { description: "Created.", schema: createdApiKeySchema } },
    handler: async (_ctx, { body, principal }) => ({
      status: 201,
      body: await createApiKey(db, principal.accountId, body, principal.scopes),
    }),
  });

  routes.add({
    method: "get",
    path: "/v1/auth/keys",
    operationId: "listApiKeys",
    summary: "List API keys",
    tag: "API keys",
    scope: "keys:write",
    query: pageQuery,
    responses: { 200: { description: "A page of keys, newest first.", schema: pageOf(apiKeySchema, "ApiKeyPage") } },
    handler: async (_ctx, { query, principal }) => ({ status: 200, body: await listApiKeys(db, principal.accountId, query) }),
  });

  routes.add({
    method: "delete",
    path: "/v1/auth/keys/{key_id}",
    operationId: "deleteApiKey",
    summary: "Revoke an API key",
    description: "The key stops working at once.",
    tag: "API keys",
    scope: "keys:write",
    params: idParam("key_id"),
    responses: { 204: { description: "Revoked." }, 404: { description: "No such key in this account.", schema: z.object({ detail: z.string() }) } },
    handler: async (_ctx, { params, principal }) => {
      await revokeApiKey(db, principal.accountId, params.key_id);
      return { status: 204 };
    },
  });
}
