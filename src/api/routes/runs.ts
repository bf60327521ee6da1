import type { Context } from "koa";
import { z } from "zod";
import type { Db } from "../../db/database.ts";
import { createIdempotently, requestFingerprint } from "../../domain/runs/idempotency.ts";
import { rerun } from "../../domain/runs/rerun.ts";
import { readRunMetrics } from "../../domain/runs/run-metrics.ts";
import { readRunLog, readRunLogPage, searchRunLog } from "../../domain/runs/run-logs.ts";
import type { RunService } from "../../domain/runs/runs.ts";
import {
  createRunSchema,
  listRunsQuerySchema,
  logPageQuerySchema,
  logSearchQuerySchema,
  metricsSchema,
  rerunSchema,
  runLogPageSchema,
  runLogSchema,
  runLogSearchSchema,
  runSchema,
  runStatusEnum,
} from "../../domain/runs/runs.schemas.ts";
import type { Run } from "../../domain/runs/runs.schemas.ts";
import type { LogHub } from "../../logs/hub.ts";
import type { OutputService } from "../../domain/outputs/outputs.ts";
import { errorBodySchema, type Routes } from "../route.ts";
import { streamLogs } from "../sse.ts";
import { registerRunEventRoutes } from "./run-events.ts";
import type { RunFeed } from "../../domain/runs/run-feed.ts";
import {
  clusterUnavailable,
  commitParams,
  eventStream,
  gitRefused,
  gitUnavailable,
  idParam,
  pageOf,
  pageQuery,
  resumeAfter,
  retryAfter,
  streamQuery,
} from "./common.ts";

const runParam = idParam("run_id");
const runNotFound = { description: "No such run in this account.", schema: errorBodySchema };
const unavailable = clusterUnavailable;
/** The phase a run waits in for its environment's build: its setup events' ids are `<seq>:preprocessing/<n>`. */
export const SETUP_PHASE = "preprocessing";

const SSE_DESCRIPTION = `Server-Sent Events. \`retry: 3000\` first; \`event: status\` with \`id: <seq>:<phase>\` and \`{"status": ...}\` for each phase the run goes through, once and in order (on connect the phases so far; every live phase before the first line, a terminal one after the last line); \`event: setup\` with \`id: <seq>:preprocessing/<n>\` and \`{"n", "ts", "line"}\` per line of the install of the environment the run waits for, while it waits for that build (\`n\` counts the install's lines from 1; after the \`preprocessing\` status, before the \`running\` status and the first line; none for a cache hit, a run without an environment, or a client that connects once the command has started; a client that comes after the build has ended is sent the lines it lacks from the stored log, \`GET /v1/runs/{run_id}/logs/setup\`, numbered by their place in it, which differs from the live numbering only when the install wrote more than is stored, 256 KiB); \`event: timeline\` (no id) with \`{"timeline": [...]}\`, the run's whole \`timeline\` exactly as \`GET /v1/runs/{run_id}\` shows it, on connect and again each time it gains an event (a full snapshot replacing the last one; a reconnect is sent the current one; any time before \`end\`, never after it; the last one read, with \`ended\` once the row has it, before the terminal status); \`event: stdout\` / \`event: stderr\` with \`id: <seq>\` and \`{"seq", "ts", "line"}\` per line; a \`: ping\` comment every 15 s; \`event: end\` with \`{"status", "exit_code"}\` once every line is sent and the run is over, then the server closes. Resume with \`Last-Event-ID\` or \`?after=\` (a line's seq, a status event's id or a setup event's id): no line, setup line or status is lost or repeated. A client joining after the end gets the stored lines, then \`end\`.`;

const idempotencyHeaders = z.object({
  "Idempotency-Key": z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/, "printable ASCII")
    .optional()
    .meta({
      description:
        "Makes the creation safe to retry (1 to 255 printable ASCII characters; a UUID is a good choice). Within 24 hours, a request of this account with the same key and the same path and body answers `201` with the run the first one created (`Idempotent-Replayed: true`), without starting another, even while the first is still being created; the same key with another path or body is `409`.",
    }),
});
const replayedHeader = {
  "Idempotent-Replayed": {
    description: "`true` when the run was created by an earlier request with the same `Idempotency-Key`.",
    schema: { type: "string" as const },
  },
};
const idempotencyConflict =
  "The `Idempotency-Key` was used in the last 24 hours with another path or body, or the request that first used it is still creating its run after 60 s.";

/** Creates the run, once per Idempotency-Key when the request has one. */
async function created(ctx: Context, db: Db, runs: RunService, accountId: string, fingerprint: () => string, create: () => Promise<Run>) {
  const key = ctx.get("idempotency-key");
  if (!key) return { status: 201, body: await create() };
  const result = await createIdempotently(db, accountId, key, fingerprint(), create, (id) => runs.get(db, accountId, id));
  if (result.replayed) ctx.set("Idempotent-Replayed", "true");
  return { status: 201, body: result.run };
}

export function registerRunRoutes(routes: Routes, db: Db, runs: RunService, hub: LogHub, outputs?: Pick<OutputService, "deleteForRun">, feed?: RunFeed): void {
  // Before /v1/runs/{run_id}, which would otherwise take "events" for a run id.
  registerRunEventRoutes(routes, db, feed);
  routes.add({
    method: "post",
    path: "/v1/repositories/{repository_id}/{commit_hash}/runs",
    operationId: "createRun",
    summary: "Start a run",
    description:
      "Runs `command` (an argv, no shell) in a checkout of the commit, as a Kubernetes Job. The account's and repository's environment variables reach the process through a per-run Secret. Give exactly one of `command` or `analyzed_experiment`.",
    tag: "Runs",
    scope: "runs:write",
    params: commitParams,
    headers: idempotencyHeaders,
    body: createRunSchema,
    responses: {
      201: {
        description:
          "Created; the run starts `pending`. Over the account's executing limit it stays `pending` with `queue` (`{position, reason}`) until it is admitted (docs/users/runs.md, Limits and the queue).",
        schema: runSchema,
        headers: replayedHeader,
      },
      404: { description: "No such repository or commit; or the run an `Idempotency-Key` created was deleted since.", schema: errorBodySchema },
      429: {
        description: "The account has its waiting limit of `pending` runs: nothing was created; `detail` names the limit; try again after `Retry-After`.",
        schema: errorBodySchema,
        headers: retryAfter,
      },
      409: { description: `${gitRefused.description} Or: ${idempotencyConflict}`, schema: errorBodySchema },
      503: { description: `${unavailable.description} Or: ${gitUnavailable.description}`, schema: errorBodySchema, headers: retryAfter },
    },
    handler: async (ctx, { params, body, principal }) =>
      created(
        ctx,
        db,
        runs,
        principal.accountId,
        () => requestFingerprint("createRun", [params.repository_id, params.commit_hash], body),
        () => runs.create(db, principal.accountId, params.repository_id, params.commit_hash, body),
      ),
  });

  routes.add({
    method: "post",
    path: "/v1/runs/{run_id}/rerun",
    operationId: "rerunRun",
    summary: "Run again",
    description:
      "Starts a new run of the same commit and the same experiment (its parameter values, with `parameters` merged over them) or command, on the same compute type (or `compute_type`), with the same timeout (or `timeout_seconds`) and the same kind of environment. The new run's `rerun_of` names this one. `Idempotency-Key` works as on run creation.",
    tag: "Runs",
    scope: "runs:write",
    params: runParam,
    headers: idempotencyHeaders,
    body: rerunSchema,
    responses: {
      201: { description: "Created; the new run starts `pending`.", schema: runSchema, headers: replayedHeader },
      404: { description: "No such run in this account, or its repository was deleted since.", schema: errorBodySchema },
      409: { description: `${gitRefused.description} Or: ${idempotencyConflict}`, schema: errorBodySchema },
      503: { description: `${unavailable.description} Or: ${gitUnavailable.description}`, schema: errorBodySchema, headers: retryAfter },
    },
    handler: async (ctx, { params, body, principal }) =>
      created(
        ctx,
        db,
        runs,
        principal.accountId,
        () => requestFingerprint("rerunRun", [params.run_id], body),
        () => rerun(db, runs, principal.accountId, params.run_id, body),
      ),
  });

  routes.add({
    method: "get",
    path: "/v1/runs/{run_id}/metrics",
    operationId: "getRunMetrics",
    summary: "Read a run's metrics",
    description:
      "The series the run reported by printing `::metric` lines on stdout or appending records to `$CODEPLANE_METRICS_FILE` (docs/users/results.md, Metrics): each series' points by step, each one's final value, and how many points the operator's bounds refused. Points arrive as the run's output is archived, so a run still going answers with its metrics so far.",
    tag: "Runs",
    scope: "runs:read",
    params: runParam,
    responses: { 200: { description: "The run's metrics.", schema: metricsSchema }, 404: runNotFound },
    handler: async (_ctx, { params, principal }) => ({ status: 200, body: await readRunMetrics(db, principal.accountId, params.run_id) }),
  });

  routes.add({
    method: "get",
    path: "/v1/repositories/{repository_id}/{commit_hash}/runs",
    operationId: "listCommitRuns",
    summary: "List a commit's runs",
    description: "The runs of one commit of a repository, newest first, optionally filtered by status.",
    tag: "Runs",
    scope: "runs:read",
    params: commitParams,
    query: pageQuery.extend({ status: runStatusEnum.optional() }),
    responses: {
      200: { description: "A page of runs, newest first.", schema: pageOf(runSchema, "RunPage") },
      404: { description: "No such repository or commit.", schema: errorBodySchema },
      409: gitRefused,
      503: gitUnavailable,
    },
    handler: async (_ctx, { params, query, principal }) => {
      const commitHash = await runs.resolveCommit(db, principal.accountId, params.repository_id, params.commit_hash);
      return { status: 200, body: await runs.list(db, principal.accountId, { repositoryId: params.repository_id, commitHash, status: query.status }, query) };
    },
  });

  routes.add({
    method: "get",
    path: "/v1/runs",
    operationId: "listRuns",
    summary: "List runs",
    description:
      "The account's runs, newest first. Filter by `status`, `repository_id` and `experiment_id`: the runs of one experiment, each with its `parameters` and `final_metrics`, show which parameters did best.",
    tag: "Runs",
    scope: "runs:read",
    query: pageQuery.extend(listRunsQuerySchema.shape),
    responses: { 200: { description: "A page of runs, newest first.", schema: pageOf(runSchema, "RunPage") } },
    handler: async (_ctx, { query, principal }) => ({
      status: 200,
      body: await runs.list(db, principal.accountId, { status: query.status, repositoryId: query.repository_id, experimentId: query.experiment_id }, query),
    }),
  });

  routes.add({
    method: "get",
    path: "/v1/runs/{run_id}",
    operationId: "getRun",
    summary: "Get a run",
    description: "One run: its status and phases, command, parameters, environment, timeline, exit code and error.",
    tag: "Runs",
    scope: "runs:read",
    params: runParam,
    responses: { 200: { description: "The run.", schema: runSchema }, 404: runNotFound },
    handler: async (_ctx, { params, principal }) => ({ status: 200, body: await runs.get(db, principal.accountId, params.run_id) }),
  });

  routes.add({
    method: "post",
    path: "/v1/runs/{run_id}/cancel",
    operationId: "cancelRun",
    summary: "Cancel a run",
    description:
      "Answers 202 with the run as it is now; the status becomes `cancelled` within seconds and its pod is stopped: the command gets SIGTERM (SIGKILL 5 s later) and the pod then sends the run's output files, within the operator's collection margin.",
    tag: "Runs",
    scope: "runs:write",
    params: runParam,
    responses: {
      202: { description: "Cancellation requested.", schema: runSchema },
      404: runNotFound,
      409: { description: "The run already finished.", schema: errorBodySchema },
      503: unavailable,
    },
    handler: async (_ctx, { params, principal }) => ({ status: 202, body: await runs.cancel(db, principal.accountId, params.run_id) }),
  });

  routes.add({
    method: "delete",
    path: "/v1/runs/{run_id}",
    operationId: "deleteRun",
    summary: "Delete a run",
    description: "Stops it if it is still going, and removes its resource, Job, pods, Secret, row, stored logs and output files.",
    tag: "Runs",
    scope: "runs:write",
    params: runParam,
    responses: { 204: { description: "Deleted." }, 404: runNotFound, 503: unavailable },
    handler: async (_ctx, { params, principal }) => {
      await runs.delete(db, principal.accountId, params.run_id);
      // Its output files at once (the sweeper removes those of runs gone by any other path).
      await outputs?.deleteForRun(db, params.run_id);
      return { status: 204 };
    },
  });

  routes.add({
    method: "get",
    path: "/v1/runs/{run_id}/logs/stream",
    operationId: "streamRunLogs",
    summary: "Stream a run's output live",
    description: SSE_DESCRIPTION,
    tag: "Runs",
    scope: "runs:read",
    params: runParam,
    query: streamQuery,
    responses: { 200: eventStream("Run", runStatusEnum), 404: runNotFound },
    handler: async (ctx, { params, query, principal }) => {
      await runs.get(db, principal.accountId, params.run_id);
      await streamLogs(ctx, { hub, id: params.run_id, ...resumeAfter(ctx, query, runStatusEnum.options, SETUP_PHASE) });
      return { status: 200 };
    },
  });

  routes.add({
    method: "get",
    path: "/v1/runs/{run_id}/logs",
    operationId: "pageRunLogs",
    summary: "Page through a run's stored output, both streams",
    description:
      "stdout and stderr interleaved in the order the run wrote them (by `seq`), one page at a time: `?after=` reads forwards (0, then each page's `next_after`), `?before=` reads the newest lines below a seq (a number above `last_seq` gives the log's end). Works while the run goes on (what is stored so far) and after its pod is gone; a run with a million lines answers each page in milliseconds.",
    tag: "Runs",
    scope: "runs:read",
    params: runParam,
    query: logPageQuerySchema,
    responses: { 200: { description: "One page of lines.", schema: runLogPageSchema }, 404: runNotFound },
    handler: async (_ctx, { params, query, principal }) => ({ status: 200, body: await readRunLogPage(db, principal.accountId, params.run_id, query) }),
  });

  routes.add({
    method: "get",
    path: "/v1/runs/{run_id}/logs/groups",
    operationId: "listRunLogGroups",
    summary: "List the group markers in a run's stored output",
    description:
      "The stored lines that start with `::group::<title>` or `::endgroup::` (the markers GitHub Actions' runners print), in seq order, paged as `GET /v1/runs/{run_id}/logs` is (`?after=`, `?before=`, `limit`). The dashboard folds each group to its title line. Read through an index of the lines that start with `::`, so a run of a million lines answers in milliseconds.",
    tag: "Runs",
    scope: "runs:read",
    params: runParam,
    query: logPageQuerySchema,
    responses: { 200: { description: "One page of marker lines.", schema: runLogPageSchema }, 404: runNotFound },
    handler: async (_ctx, { params, query, principal }) => ({
      status: 200,
      body: await readRunLogPage(db, principal.accountId, params.run_id, { ...query, groups: true }),
    }),
  });

  routes.add({
    method: "get",
    path: "/v1/runs/{run_id}/logs/search",
    operationId: "searchRunLogs",
    summary: "Search a run's stored output",
    description:
      "The stored lines that contain `q` (a literal substring, case-insensitive unless `case_sensitive=true`), in seq order, from the whole stored log (not only its end), at most `limit` per answer. Each answer searches until it has `limit` matches, reaches the last stored line, or has spent its time budget (2 s); `next_after` says where to go on (null: the search reached the end of what is stored).",
    tag: "Runs",
    scope: "runs:read",
    params: runParam,
    query: logSearchQuerySchema,
    responses: { 200: { description: "Matching lines.", schema: runLogSearchSchema }, 404: runNotFound },
    handler: async (_ctx, { params, query, principal }) => ({
      status: 200,
      body: await searchRunLog(db, principal.accountId, params.run_id, {
        q: query.q,
        stream: query.stream,
        after: query.after,
        limit: query.limit,
        caseSensitive: query.case_sensitive,
      }),
    }),
  });

  for (const stream of ["stdout", "stderr"] as const) {
    routes.add({
      method: "get",
      path: `/v1/runs/{run_id}/logs/${stream}`,
      operationId: `getRun${stream === "stdout" ? "Stdout" : "Stderr"}`,
      summary: `Read a run's ${stream}`,
      description:
        "Kept in Postgres, so it can be read after the pod is gone, up to the configured size per stream (the start is kept; `truncated` says when lines were dropped). A run still going answers with its output so far; a finished run whose last lines are still being archived waits up to 10 s for them, so a read right after the status turns terminal is complete. With `?after=`, `?before=` or `?limit=` it answers one page of lines by sequence instead (a `RunLogPage`, as `GET /v1/runs/{run_id}/logs` but this stream only), without waiting.",
      tag: "Runs",
      scope: "runs:read",
      params: runParam,
      query: logPageQuerySchema,
      responses: {
        200: {
          description: `The stored ${stream} (\`RunLog\`), or with paging parameters one page of it (\`RunLogPage\`).`,
          schema: z.union([runLogSchema, runLogPageSchema]),
        },
        404: runNotFound,
      },
      handler: async (_ctx, { params, query, principal }) => {
        const paged = query.after !== undefined || query.before !== undefined || query.limit !== undefined;
        return {
          status: 200,
          body: paged
            ? await readRunLogPage(db, principal.accountId, params.run_id, { ...query, stream })
            : await readRunLog(db, principal.accountId, params.run_id, stream),
        };
      },
    });
  }
}
