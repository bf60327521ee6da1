import type { Db } from "../../db/database.ts";
import type { AnalysisService } from "../../domain/analyses/analyses.ts";
import { analysisSchema, analysisStatusEnum, createAnalysisSchema } from "../../domain/analyses/analyses.schemas.ts";
import type { LogHub } from "../../logs/hub.ts";
import { errorBodySchema, type Routes } from "../route.ts";
import { streamLogs } from "../sse.ts";
import {
  clusterUnavailable,
  commitParams,
  eventStream,
  gitRefused,
  gitRefusedDescription,
  gitUnavailable,
  pageOf,
  pageQuery,
  repoParams,
  resumeAfter,
  retryAfter,
  streamQuery,
} from "./common.ts";

const notFound = { description: "No such repository, commit or analysis in this account.", schema: errorBodySchema };
/** Every analysis operation that answers 503 also resolves the commit through the mirror first. */
const unavailable = { description: `${clusterUnavailable.description} Or: ${gitUnavailable.description}`, schema: errorBodySchema, headers: retryAfter };

export function registerAnalysisRoutes(routes: Routes, db: Db, analyses: AnalysisService, hub: LogHub): void {
  routes.add({
    method: "post",
    path: "/v1/repositories/{repository_id}/analysis/{commit_hash}",
    operationId: "createAnalysis",
    summary: "Analyse a commit",
    description:
      "Starts an analysis of the commit in a Kubernetes Job: what the repository holds, what can be run there (experiments with their parameters) and which environment variables its code needs. The analyzer reads the code; it never runs it. One analysis per repository and commit: repeating the request returns the existing one with 200 (delete it to analyse again).",
    tag: "Analyses",
    scope: "analyses:write",
    params: commitParams,
    body: createAnalysisSchema,
    responses: {
      201: { description: "Created; the analysis starts `pending`.", schema: analysisSchema },
      200: { description: "This commit already has an analysis; here it is.", schema: analysisSchema },
      404: notFound,
      409: {
        description: `The commit's analysis changed while this one was being created (deleted concurrently); try again. Or: ${gitRefusedDescription}`,
        schema: errorBodySchema,
      },
      503: unavailable,
    },
    handler: async (_ctx, { params, body, principal }) => {
      const { analysis, created } = await analyses.create(db, principal.accountId, params.repository_id, params.commit_hash, body);
      return { status: created ? 201 : 200, body: analysis };
    },
  });

  routes.add({
    method: "get",
    path: "/v1/repositories/{repository_id}/analysis",
    operationId: "listAnalyses",
    summary: "List a repository's analyses",
    description: "The repository's analyses, newest first, one per analysed commit, with their status and results.",
    tag: "Analyses",
    scope: "analyses:read",
    params: repoParams,
    query: pageQuery,
    responses: { 200: { description: "A page of analyses, newest first.", schema: pageOf(analysisSchema, "AnalysisPage") }, 404: notFound },
    handler: async (_ctx, { params, query, principal }) => ({ status: 200, body: await analyses.list(db, principal.accountId, params.repository_id, query) }),
  });

  routes.add({
    method: "get",
    path: "/v1/repositories/{repository_id}/analysis/{commit_hash}",
    operationId: "getAnalysis",
    summary: "Get a commit's analysis",
    description: "`env_vars.missing_env_vars` is computed now, against the environment variables configured for the account and repository at this moment.",
    tag: "Analyses",
    scope: "analyses:read",
    params: commitParams,
    responses: { 200: { description: "The analysis.", schema: analysisSchema }, 404: notFound, 409: gitRefused, 503: gitUnavailable },
    handler: async (_ctx, { params, principal }) => ({
      status: 200,
      body: await analyses.get(db, principal.accountId, params.repository_id, params.commit_hash),
    }),
  });

  routes.add({
    method: "post",
    path: "/v1/repositories/{repository_id}/analysis/{commit_hash}/cancel",
    operationId: "cancelAnalysis",
    summary: "Cancel an analysis",
    description: "Answers 202 with the analysis as it is now; its pod is stopped and the status becomes `cancelled` within seconds.",
    tag: "Analyses",
    scope: "analyses:write",
    params: commitParams,
    responses: {
      202: { description: "Cancellation requested.", schema: analysisSchema },
      404: notFound,
      409: { description: `The analysis already finished. Or: ${gitRefusedDescription}`, schema: errorBodySchema },
      503: unavailable,
    },
    handler: async (_ctx, { params, principal }) => ({
      status: 202,
      body: await analyses.cancel(db, principal.accountId, params.repository_id, params.commit_hash),
    }),
  });

  routes.add({
    method: "delete",
    path: "/v1/repositories/{repository_id}/analysis/{commit_hash}",
    operationId: "deleteAnalysis",
    summary: "Delete an analysis",
    description: "Stops it if it is still going and removes its resource, Job, pods, result and logs. The commit can then be analysed again.",
    tag: "Analyses",
    scope: "analyses:write",
    params: commitParams,
    responses: { 204: { description: "Deleted." }, 404: notFound, 409: gitRefused, 503: unavailable },
    handler: async (_ctx, { params, principal }) => {
      await analyses.delete(db, principal.accountId, params.repository_id, params.commit_hash);
      return { status: 204 };
    },
  });

  routes.add({
    method: "get",
    path: "/v1/repositories/{repository_id}/analysis/{commit_hash}/logs/stream",
    operationId: "streamAnalysisLogs",
    summary: "Stream an analysis's progress live",
    description:
      "The same Server-Sent Events as a run's stream (`status`, `stdout`/`stderr` with `id: <seq>`, `: ping`, `end`; resume with `Last-Event-ID` or `?after=`). Statuses are the analysis's: pending, running, completed, failed, cancelled. The analyzer's progress lines come as `stdout`; its result is not part of the stream: read it with GET once `end` arrives.",
    tag: "Analyses",
    scope: "analyses:read",
    params: commitParams,
    query: streamQuery,
    responses: { 200: eventStream("Analysis", analysisStatusEnum), 404: notFound, 409: gitRefused, 503: gitUnavailable },
    handler: async (ctx, { params, query, principal }) => {
      const id = await analyses.idOf(db, principal.accountId, params.repository_id, params.commit_hash);
      await streamLogs(ctx, { hub, id, ...resumeAfter(ctx, query, analysisStatusEnum.options) });
      return { status: 200 };
    },
  });
}
