import { z } from "zod";
import type { Context } from "koa";
import { pageQuerySchema } from "../../domain/shared/pagination.ts";
import { HttpError } from "../http-error.ts";
import { errorBodySchema } from "../route.ts";
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
  commit_hash: z.string().min(1).max(255).meta({ description: "A full or short commit hash, or a branch or tag name, resolved to the full hash." }),
});

/** The 503 of every operation that starts or changes a workload. */
export const clusterUnavailable = { description: "Kubernetes is not reachable from this process.", schema: errorBodySchema };

/** A log stream's query and 200 response (the events are described in the operation's description). */
export const streamQuery = z.strictObject({ after: z.string().max(20).optional().meta({ description: "Resume after this seq (Last-Event-ID wins)." }) });
export const eventStream = { description: "The event stream.", schema: z.string(), contentType: "text/event-stream" };

/** Where a stream resumes: Last-Event-ID, else ?after=, else the start; a 422 when it is not a seq. */
export function resumeAfter(ctx: Context, query: z.infer<typeof streamQuery>): number {
  const after = parseAfter(ctx.get("Last-Event-ID") || undefined, query.after);
  if (typeof after !== "number") throw new HttpError(422, [{ loc: after.loc, msg: after.error, type: "int_parsing" }]);
  return after;
}
