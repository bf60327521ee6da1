import type { IncomingMessage } from "node:http";
import type Router from "@koa/router";
import type { Context } from "koa";
import type { Db } from "../../db/database.ts";
import type { EnvironmentService } from "../../domain/environments/environments.ts";
import { HttpError } from "../http-error.ts";
import { REQUEST_TIMEOUT_MS } from "../server.ts";

// The internal doors environment archives pass through, beside the git
// endpoint (the only address workload pods may reach): a build Job stores its
// archive with its upload token, a run's restore container fetches its own
// run's archive with its checkout token. Not part of the public API. Pods
// hold no storage credential; what a token opens is decided here.

const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const KEY = /^[0-9a-f]{64}$/;

/** A build's archive upload, the one request whose body may take long to arrive (a large environment on a slow link). */
const ARCHIVE_UPLOAD = /^\/internal\/environments\/[^/?]+\/archive(\?.*)?$/;

/**
 * How long each request may take to arrive whole: an archive upload uploadTimeoutMs
 * (CODEPLANE_ENVIRONMENT_UPLOAD_TIMEOUT_SECONDS), anything else the server's usual bound.
 */
export function requestTimeoutFor(uploadTimeoutMs: number): (req: IncomingMessage) => number {
  return (req) => (req.method === "PUT" && ARCHIVE_UPLOAD.test(req.url ?? "") ? uploadTimeoutMs : REQUEST_TIMEOUT_MS);
}

/** The install's log a build hands in: its tail, as the save container sends it. */
const LOG_MAX_BYTES = 256 * 1024;

/** The body as UTF-8, refused (413) past max bytes while it arrives. */
async function readText(ctx: Context, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) throw new HttpError(413, `The log is larger than ${max} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

const unauthenticated = () => new HttpError(401, "A valid token is required", { "WWW-Authenticate": 'Bearer realm="codeplane environments"' });

function bearer(ctx: Context): string {
  const m = /^Bearer ([^\s]+)$/i.exec(ctx.get("authorization"));
  if (!m) throw unauthenticated();
  return m[1]!;
}

export function registerEnvironmentArchiveRoutes(router: Router, db: Db, environments: EnvironmentService): void {
  router.put("/internal/environments/:id/archive", async (ctx) => {
    const token = bearer(ctx);
    const id = ctx.params.id!;
    if (!ID.test(id)) throw new HttpError(404, "Environment not found");
    const stored = await environments.receiveArchive(db, id, token, ctx.req);
    if (!stored) throw unauthenticated();
    ctx.status = 201;
    ctx.body = stored;
  });

  router.put("/internal/environments/:id/log", async (ctx) => {
    const token = bearer(ctx);
    const id = ctx.params.id!;
    if (!ID.test(id)) throw new HttpError(404, "Environment not found");
    // The token first: a caller without one gets nothing read from it.
    if (!(await environments.canUpload(db, id, token))) throw unauthenticated();
    const text = await readText(ctx, LOG_MAX_BYTES);
    if (!(await environments.receiveLog(db, id, token, text))) throw unauthenticated();
    ctx.status = 204;
  });

  router.get("/internal/environments/:key/archive", async (ctx) => {
    const token = bearer(ctx);
    const key = ctx.params.key!;
    if (!KEY.test(key)) throw new HttpError(404, "Environment not found");
    const archive = await environments.openArchive(db, token, key);
    if (archive === "unauthenticated") throw unauthenticated();
    if (!archive) throw new HttpError(404, "Environment not found");
    ctx.status = 200;
    ctx.type = "application/gzip";
    ctx.length = archive.size;
    ctx.body = archive.body;
  });
}
