import type { Context } from "koa";
import { z } from "zod";
import type { Db } from "../../db/database.ts";
import { requireRepository } from "../../domain/repositories/repository-rows.ts";
import { STREAMS_PER_ACCOUNT, type RunFeed } from "../../domain/runs/run-feed.ts";
import { runStatusEnum } from "../../domain/runs/runs.schemas.ts";
import { HttpError } from "../http-error.ts";
import { errorBodySchema, type Routes } from "../route.ts";
import { streamRunEvents } from "../run-events.ts";
import { retryAfter } from "./common.ts";

// GET /v1/runs/events: the account's runs as they change, for a list that
// stays current without reading itself again (the dashboard's runs list).
// src/domain/runs/run-feed.ts says how changes are found and resumed.

const POSITION = /^[0-9]{1,20}$/;
const MAX_XID8 = 2n ** 64n - 1n;

const query = z.strictObject({
  repository_id: z.uuid().optional().meta({ description: "Only this repository's runs." }),
  status: runStatusEnum.optional().meta({
    description: "Only runs that are, or have been, in this status: a run that leaves it is sent once more, with its new status.",
  }),
  after: z.string().max(64).optional().meta({ description: "Resume after this event id (`Last-Event-ID` wins)." }),
});

/** Last-Event-ID, else ?after=, else null (from now); a 422 when it is not a position. */
function resumeFrom(ctx: Context, after: string | undefined): string | null {
  const header = ctx.get("Last-Event-ID").trim();
  const [value, loc] = header !== "" ? [header, ["header", "Last-Event-ID"]] : [after, ["query", "after"]];
  if (value === undefined) return null;
  if (!POSITION.test(value) || BigInt(value) > MAX_XID8) {
    throw new HttpError(422, [{ loc, msg: "must be an event id this stream sent (a non-negative integer)", type: "value_error" }]);
  }
  return value;
}

/** `data` a zod schema, or a JSON schema as it is (the run event's: a reference to the document's `Run`). */
function sseEvent(name: string, data: z.ZodType | Record<string, unknown>, description: string, id: "always" | "last" | "none") {
  const { $schema: _, ...contentSchema } = data instanceof z.ZodType ? (z.toJSONSchema(data, { io: "output" }) as Record<string, unknown>) : data;
  const idField = z.string().regex(POSITION).meta({ description: "A position in the feed; send it back as `Last-Event-ID` to resume." });
  return z
    .object({
      event: z.enum([name]),
      ...(id === "always" && { id: idField }),
      ...(id === "last" && { id: idField.optional() }),
      data: z.string().meta({ description: "JSON text; its decoded shape is `contentSchema`.", contentMediaType: "application/json", contentSchema }),
    })
    .meta({ description });
}

const item = z
  .union([
    sseEvent(
      "ready",
      z.object({}),
      "The stream is live from here: on connect, after the changes since the resume point (if any). A client that starts without one reads its list after this event, so no change falls between the two.",
      "always",
    ),
    sseEvent(
      "run",
      // The document's Run, by reference (runSchema is registered under that name).
      { $ref: "#/components/schemas/Run" },
      "A run's new state, exactly as `GET /v1/runs/{run_id}` shows it: sent when its status, phase, timeline, exit code, error, queue reason, environment, attempts or final metrics change (a queue position moving as others are admitted is not a change of the run). Apply by `run_id`: the same state may come again after a resume. Only the last event of what one read of the feed found has an `id`.",
      "last",
    ),
    sseEvent(
      "deleted",
      z.object({ run_id: z.uuid(), repository_id: z.uuid() }),
      "The run was deleted. Only the last event of what one read of the feed found has an `id`.",
      "last",
    ),
    sseEvent(
      "reset",
      z.object({}),
      "More runs changed than the stream sends one by one (over 1,000 since the resume point, or over 10,000 in a second): read the list again. The stream goes on.",
      "always",
    ),
  ])
  .meta({
    id: "RunFeedEvent",
    description:
      "One Server-Sent Event of `GET /v1/runs/events`. Before the first event the stream sets `retry: 3000`; a `: ping` comment comes every 15 s. Neither is an event.",
  });

export function registerRunEventRoutes(routes: Routes, db: Db, feed: RunFeed | undefined): void {
  routes.add({
    method: "get",
    path: "/v1/runs/events",
    operationId: "streamRunEvents",
    summary: "Follow the account's runs as they change",
    description: `Server-Sent Events: \`event: run\` with a run's new state (as \`GET /v1/runs/{run_id}\` shows it) each time what the API shows of it changes, \`event: deleted\` when one is deleted, for the account's runs that pass the filters (\`repository_id\`; \`status\`: runs that are, or have been, in it, so one that leaves it is sent with its new status). Changes are found by each API process (within about 50 ms of their commit on a Postgres server, and at least once a second), whichever process or the controller made them. On connect \`event: ready\` (with an \`id\`) says the stream is live; a client that shows a list reads it after that event. Resume with \`Last-Event-ID\` or \`?after=\` (an id the stream sent): first the current state of every run that changed since, then \`ready\`, then what changes next; nothing is lost, and a run's state may come twice (apply by \`run_id\`). Over 1,000 changed runs since the resume point: \`event: reset\` (read the list again) instead; also, after \`ready\`, when over 10,000 runs changed at once and some were the account's. A stream is dropped when its client still has 1 MiB unread when the next event or ping is due (one large batch alone never drops it), and ended when the process shuts down; the client then resumes. At most ${STREAMS_PER_ACCOUNT} streams per account per API process unless the operator set another limit (\`CODEPLANE_RUN_EVENT_STREAMS_PER_ACCOUNT\`); 429 beyond.`,
    tag: "Runs",
    scope: "runs:read",
    query,
    responses: {
      200: {
        description: "The event stream: `ready`, then `run` and `deleted` events as runs change (and `reset` when too many did).",
        schema: item,
        contentType: "text/event-stream",
        itemSchema: item,
      },
      404: { description: "No such repository in this account.", schema: errorBodySchema },
      429: {
        description: `The account has as many run event streams open on this API process as it may (${STREAMS_PER_ACCOUNT} unless the operator set \`CODEPLANE_RUN_EVENT_STREAMS_PER_ACCOUNT\`); close one, or try again after \`Retry-After\`.`,
        schema: errorBodySchema,
        headers: retryAfter,
      },
      503: { description: "The process is shutting down; try again after `Retry-After`.", schema: errorBodySchema, headers: retryAfter },
    },
    handler: async (ctx, { query, principal }) => {
      const after = resumeFrom(ctx, query.after);
      const filter = { accountId: principal.accountId, repositoryId: query.repository_id, status: query.status };
      // A repository of another account (or none) is a 404, as everywhere.
      if (query.repository_id) {
        await requireRepository(db, principal.accountId, query.repository_id);
      }
      const release = feed!.reserve(principal.accountId);
      await streamRunEvents(ctx, { feed: feed!, filter, after, release });
      return { status: 200 };
    },
  });
}
