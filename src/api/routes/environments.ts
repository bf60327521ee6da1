import type { Db } from "../../db/database.ts";
import type { EnvironmentService } from "../../domain/environments/environments.ts";
import { environmentKeyParam, environmentSchema, runSetupLogSchema } from "../../domain/environments/environments.schemas.ts";
import { errorBodySchema, type Routes } from "../route.ts";
import { idParam, pageOf, pageQuery } from "./common.ts";

// The account's cached environments: what was installed once per key and is
// restored into runs. Reading them needs runs:read, dropping one runs:write.

const notFound = { description: "No environment of this key in this account.", schema: errorBodySchema };

export function registerEnvironmentRoutes(routes: Routes, db: Db, environments: EnvironmentService): void {
  routes.add({
    method: "get",
    path: "/v1/environments",
    operationId: "listEnvironments",
    summary: "List cached environments",
    description:
      "The account's installed environments: one per key (the hash of the image and of the manifests and lockfiles that define the install), `building`, `ready` or `failed` (a failed one stays failed, with its log, until it is deleted).",
    tag: "Environments",
    scope: "runs:read",
    query: pageQuery,
    responses: { 200: { description: "A page of environments, newest first.", schema: pageOf(environmentSchema, "EnvironmentPage") } },
    handler: async (_ctx, { query, principal }) => ({ status: 200, body: await environments.list(db, principal.accountId, query) }),
  });

  routes.add({
    method: "get",
    path: "/v1/environments/{key}",
    operationId: "getEnvironment",
    summary: "Get a cached environment",
    description: "With the build's log (its last 256 KiB) once the build has ended.",
    tag: "Environments",
    scope: "runs:read",
    params: environmentKeyParam,
    responses: { 200: { description: "The environment.", schema: environmentSchema }, 404: notFound },
    handler: async (_ctx, { params, principal }) => ({ status: 200, body: await environments.get(db, principal.accountId, params.key) }),
  });

  routes.add({
    method: "delete",
    path: "/v1/environments/{key}",
    operationId: "deleteEnvironment",
    summary: "Delete a cached environment",
    description: "Drops the stored environment (or a failed build's record): the next run of its key builds it again. Runs already started are not affected.",
    tag: "Environments",
    scope: "runs:write",
    params: environmentKeyParam,
    responses: {
      204: { description: "Deleted." },
      404: notFound,
      409: { description: "The environment is being built; delete it once the build has ended.", schema: errorBodySchema },
    },
    handler: async (_ctx, { params, principal }) => {
      await environments.delete(db, principal.accountId, params.key);
      return { status: 204 };
    },
  });

  routes.add({
    method: "get",
    path: "/v1/runs/{run_id}/logs/setup",
    operationId: "getRunSetupLog",
    summary: "Read a run's environment install output",
    description:
      "The output of the install that built the run's environment (its steps, and what pip, npm or go printed), kept with the environment: a run restored from the cache shows the log of the build it reuses. Empty while the build is still going.",
    tag: "Runs",
    scope: "runs:read",
    params: idParam("run_id"),
    responses: {
      200: { description: "The install's output.", schema: runSetupLogSchema },
      404: { description: "No such run in this account.", schema: errorBodySchema },
    },
    handler: async (_ctx, { params, principal }) => ({ status: 200, body: await environments.setupLog(db, principal.accountId, params.run_id) }),
  });
}
