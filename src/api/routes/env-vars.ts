import type { Db } from "../../db/database.ts";
import type { EnvVarService } from "../../domain/env-vars/env-vars.ts";
import { createEnvVarSchema, envVarSchema, listEnvVarsQuerySchema, updateEnvVarSchema } from "../../domain/env-vars/env-vars.schemas.ts";
import { errorBodySchema, type Routes } from "../route.ts";
import { idParam, pageOf, pageQuery } from "./common.ts";

const envParam = idParam("env_var_id");
const notFound = { description: "No such variable in this account.", schema: errorBodySchema };

export function registerEnvVarRoutes(routes: Routes, db: Db, envVars: EnvVarService): void {
  routes.add({
    method: "post",
    path: "/v1/environment-variables",
    operationId: "createEnvironmentVariable",
    summary: "Create an environment variable",
    description:
      "Values are encrypted at rest (AES-256-GCM). Secret values (the default) are never returned. Repository scope overrides account scope in runs.",
    tag: "Environment variables",
    scope: "env:write",
    body: createEnvVarSchema,
    responses: {
      201: { description: "Created.", schema: envVarSchema },
      404: { description: "repository_id is not a repository of this account.", schema: errorBodySchema },
      409: { description: "The name already exists in this scope.", schema: errorBodySchema },
    },
    handler: async (_ctx, { body, principal }) => ({ status: 201, body: await envVars.create(db, principal.accountId, body) }),
  });

  routes.add({
    method: "get",
    path: "/v1/environment-variables",
    operationId: "listEnvironmentVariables",
    summary: "List environment variables",
    description: "All of the account's variables, or with `repository_id` only that repository's.",
    tag: "Environment variables",
    scope: "env:read",
    query: pageQuery.extend(listEnvVarsQuerySchema.shape),
    responses: { 200: { description: "A page of variables, newest first.", schema: pageOf(envVarSchema, "EnvironmentVariablePage") }, 404: notFound },
    handler: async (_ctx, { query, principal }) => ({
      status: 200,
      body: await envVars.list(db, principal.accountId, query.repository_id, query),
    }),
  });

  routes.add({
    method: "get",
    path: "/v1/environment-variables/{env_var_id}",
    operationId: "getEnvironmentVariable",
    summary: "Get an environment variable",
    description: "Its name and when it was set; the value is never returned.",
    tag: "Environment variables",
    scope: "env:read",
    params: envParam,
    responses: { 200: { description: "The variable (value null when secret).", schema: envVarSchema }, 404: notFound },
    handler: async (_ctx, { params, principal }) => ({ status: 200, body: await envVars.get(db, principal.accountId, params.env_var_id) }),
  });

  routes.add({
    method: "patch",
    path: "/v1/environment-variables/{env_var_id}",
    operationId: "updateEnvironmentVariable",
    summary: "Update an environment variable",
    description: "A secret can be made non-secret only together with a new value, so an old secret value is never revealed.",
    tag: "Environment variables",
    scope: "env:write",
    params: envParam,
    body: updateEnvVarSchema,
    responses: {
      200: { description: "Updated.", schema: envVarSchema },
      404: notFound,
      409: { description: "Name taken in this scope.", schema: errorBodySchema },
    },
    handler: async (_ctx, { params, body, principal }) => ({
      status: 200,
      body: await envVars.update(db, principal.accountId, params.env_var_id, body),
    }),
  });

  routes.add({
    method: "delete",
    path: "/v1/environment-variables/{env_var_id}",
    operationId: "deleteEnvironmentVariable",
    summary: "Delete an environment variable",
    description: "Runs started afterwards no longer receive it; runs already started keep the value they were given.",
    tag: "Environment variables",
    scope: "env:write",
    params: envParam,
    responses: { 204: { description: "Deleted." }, 404: notFound },
    handler: async (_ctx, { params, principal }) => {
      await envVars.delete(db, principal.accountId, params.env_var_id);
      return { status: 204 };
    },
  });
}
