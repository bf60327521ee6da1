import { z } from "zod";
import type { Context } from "koa";
import { refText } from "../../domain/repositories/repositories.schemas.ts";
import { runSchema } from "../../domain/runs/runs.schemas.ts";
import { pageQuerySchema } from "../../domain/shared/pagination.ts";
import { HttpError } from "../http-error.ts";
import { errorBodySchema, type ResponseHeaders } from "../route.ts";
import { parseAfter } from "../sse.ts";

export const pageQuery = pageQuerySchema;

export function pageOf<T extends z.ZodType>(item: T, id: string) {
  return z
    .object({ items: z.array(item), next_cursor: z.string().nullable().meta({ description: "Pass as ?cursor= for the next page; null on the last." }) })
    .meta({ id });
}

export const idParam = <K extends string>(key: K) => z.strictObject({ [key]: z.uuid() } as Record<K, z.ZodUUID>);

export const repoParams = z.strictObject({ repository_id: z.uuid() });
export const commitParams = repoParams.extend({
  commit_hash: refText.meta({ description: "A full or short commit hash, or a branch or tag name, resolved to the full hash." }),
});

/** Retry-After on a 503 the caller should simply repeat later. */
export const retryAfter: ResponseHeaders = {
  "Retry-After": { description: "Seconds to wait before trying again; sent when git fetches were busy.", schema: { type: "integer", minimum: 1 } },
};

/** The 503 of every operation that reads the repository's mirror (resolving a ref, listing, reading). */
export const gitUnavailable = {
  description:
    "The repository could not be read or fetched now: git failed or timed out, its host could not be resolved, or no git fetch slot (this account's share or the server's) became free within the queue wait, in which case `Retry-After` says when to try again.",
  schema: errorBodySchema,
  headers: retryAfter,
};

/** The 409 of every operation that reads a registered repository's mirror. */
export const gitRefusedDescription =
  "The repository's clone URL is no longer allowed by the server's clone URL policy (local repositories were turned off, or its host now resolves to a private address), or a fetch it needs cannot be made because its GitHub App installation is suspended, deleted or was disconnected, or its git server answered but lacks objects the repository refers to (a damaged repository, to be repaired on the server); the detail says why.";
export const gitRefused = { description: gitRefusedDescription, schema: errorBodySchema };

/** The 503 of every operation that starts or changes a workload. */
export const clusterUnavailable = { description: "Kubernetes is not reachable from this process.", schema: errorBodySchema };

/** A log stream's query. */
export const streamQuery = z.strictObject({
  after: z.string().max(64).optional().meta({
    description:
      "Resume after this event id: a line's seq, a status event's `<seq>:<phase>`, or (a run's stream) a setup event's `<seq>:preprocessing/<n>` (Last-Event-ID wins).",
  }),
});

/**
 * One event of a log stream as OpenAPI 3.2's `itemSchema` describes Server-Sent Events: the
 * fields of the event, `data` being JSON text whose decoded shape is its `contentSchema`.
 */
function sseEvent(events: [string, ...string[]], data: z.ZodType, description: string, withId: "line" | "status" | "setup" | null = null) {
  const { $schema: _, ...contentSchema } = z.toJSONSchema(data, { io: "output" }) as Record<string, unknown>;
  return z
    .object({
      event: z.enum(events),
      ...(withId === "line" && {
        id: z
          .string()
          .regex(/^[0-9]+$/)
          .meta({ description: "The line's `seq`; send it back as `Last-Event-ID` to resume." }),
      }),
      ...(withId === "status" && {
        id: z
          .string()
          .regex(/^[0-9]+:[a-z_]+$/)
          .meta({ description: "`<seq of the last line before it>:<phase>`; send it back as `Last-Event-ID` to resume." }),
      }),
      ...(withId === "setup" && {
        id: z
          .string()
          .regex(/^[0-9]+:preprocessing\/[0-9]+$/)
          .meta({ description: "`<seq of the last line before it>:preprocessing/<n>`; send it back as `Last-Event-ID` to resume." }),
      }),
      data: z.string().meta({ description: "JSON text; its decoded shape is `contentSchema`.", contentMediaType: "application/json", contentSchema }),
    })
    .meta({ description });
}

/**
 * A workload's log stream (`text/event-stream`): the 200 response of the run and analysis
 * streams, with every event and its data described (src/api/sse.ts writes them).
 */
export function eventStream(noun: "Run" | "Analysis", status: z.ZodEnum) {
  const line = z.object({
    seq: z.number().int().min(1).meta({ description: "Position in the workload's output, shared by stdout and stderr; increasing, may skip numbers." }),
    ts: z.string().meta({ format: "date-time", description: "When the line was written (RFC 3339 UTC)." }),
    line: z.string().meta({ description: "The line without its newline." }),
  });
  const item = z
    .union([
      sseEvent(
        ["status"],
        z.object({ status }),
        "Each phase the workload goes through, once and in order: on connect the phases so far (after the resume point), then each as it happens. Every live phase comes before the first line; a terminal one after the last line.",
        "status",
      ),
      ...(noun === "Run"
        ? [
            sseEvent(
              ["setup"],
              z.object({
                n: z.number().int().min(1).meta({ description: "The line's number in the install's output, from 1." }),
                ts: z.string().meta({
                  format: "date-time",
                  description: "When the install wrote the line (RFC 3339 UTC); for a line read back from the stored log, when the build ended.",
                }),
                line: z.string().meta({ description: "The line without its newline." }),
              }),
              "A line of the install of the environment the run waits for (its dependencies, built once per environment key), in order, while the run waits for that build: after the `preprocessing` status, before the `running` status and the first stdout/stderr line. None for a cache hit, a run without an environment, or a client that connects once the command has started. A client that comes after the build has ended (before the command started) is sent the lines it lacks from the stored log (`GET /v1/runs/{run_id}/logs/setup`, its last 256 KiB), numbered by their place in it, with the build's end as `ts`.",
              "setup",
            ),
            sseEvent(
              ["timeline"],
              // The run's own field's schema: the event carries exactly what GET /v1/runs/{run_id} shows.
              z.object({ timeline: runSchema.shape.timeline }),
              "The run's whole `timeline`, exactly as `GET /v1/runs/{run_id}` shows it: once on connect (after the status events replayed then) and again each time it gains an event. A full snapshot that replaces the previous one, so it has no `id`: a client that reconnects is sent the current one. It may come at any point before `end`, never after it, and is not ordered with the `status` events and lines (it is read from the run's row about once a second, which may be ahead of them or behind); the last one read, with `ended` once the run's row has its end, comes before the terminal status and `end`.",
            ),
          ]
        : []),
      sseEvent(["stdout", "stderr"], line, "One line of output, in `seq` order.", "line"),
      sseEvent(
        ["end"],
        z.object({
          status,
          exit_code: z.number().int().nullable().meta({ description: "The process's exit code; null when there is none (cancelled, lost, not a process)." }),
        }),
        `Every line has been sent and the ${noun.toLowerCase()} is over; the server then closes the stream.`,
      ),
    ])
    .meta({
      id: `${noun}LogEvent`,
      description:
        "One Server-Sent Event of the stream. Before the first event the stream sets `retry: 3000` (reconnect after 3 s); a `: ping` comment comes every 15 s. Neither is an event.",
    });
  // `schema` describes one event, as OpenAPI 3.1 tools read it for event streams; `itemSchema`
  // (3.2's way, written as x-itemSchema in this 3.1 document) says the same.
  return {
    description:
      noun === "Run"
        ? "The event stream: `status`, while the run waits for its environment's build `setup` lines, then `stdout`/`stderr` lines, finally `end`; `timeline` snapshots on connect and as the run's timeline grows."
        : "The event stream: `status`, then `stdout`/`stderr` lines, finally `end`.",
    schema: item,
    contentType: "text/event-stream",
    itemSchema: item,
  };
}

/**
 * Where a stream resumes: Last-Event-ID, else ?after=, else the start; a 422 when it is not a seq,
 * a status event's id of one of `phases` or, with `setupPhase` (runs), a setup event's id.
 */
export function resumeAfter(
  ctx: Context,
  query: z.infer<typeof streamQuery>,
  phases: readonly string[],
  setupPhase: string | null = null,
): { afterSeq: number; afterPhase: string | null; afterSetup: number | null } {
  const after = parseAfter(ctx.get("Last-Event-ID") || undefined, query.after, (p) => phases.includes(p), setupPhase);
  if ("error" in after) throw new HttpError(422, [{ loc: after.loc, msg: after.error, type: "value_error" }]);
  return { afterSeq: after.seq, afterPhase: after.phase, afterSetup: after.setup };
}
