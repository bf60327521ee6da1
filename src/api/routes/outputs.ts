import type Router from "@koa/router";
import type { Context } from "koa";
import { createGzip } from "node:zlib";
import { z } from "zod";
import type { Db } from "../../db/database.ts";
import { outputPathProblem } from "../../domain/outputs/output-paths.ts";
import { InvalidRangeError, type OutputService } from "../../domain/outputs/outputs.ts";
import { HttpError } from "../http-error.ts";
import { errorBodySchema, type Routes } from "../route.ts";
import { idParam } from "./common.ts";

// Run outputs (issue 31): the public reads (/v1/runs/{run_id}/outputs...) and
// the internal door a run's pod sends its files through
// (PUT /internal/runs/{run_id}/outputs/{path}, on the git listener beside the
// environment archives), authenticated with the run's output token.

const runNotFound = { description: "No such run in this account.", schema: errorBodySchema };

export const runOutputSchema = z
  .object({
    path: z.string().meta({ description: "Relative to the run's output directory (or the checkout, for the experiment's analysed output paths)." }),
    size: z.int().meta({ description: "Bytes." }),
    sha256: z.string().meta({ description: "Hex SHA-256 of the bytes, computed as they were stored; the download's ETag." }),
    content_type: z.string().meta({ description: "Told by the file name's extension; `application/octet-stream` when unknown." }),
  })
  .meta({ id: "RunOutput" });

const refusedOutputSchema = z
  .object({
    path: z.string(),
    size: z.int().nullable().meta({ description: "The file's size as the runner saw it; null when not known." }),
    reason: z.string().meta({ description: "Which limit refused it (the same line is on the run's stderr)." }),
  })
  .meta({ id: "RefusedOutput" });

const outputListSchema = z
  .object({
    items: z.array(runOutputSchema).meta({ description: "Every stored output, in byte order of the path." }),
    refused: z.array(refusedOutputSchema).meta({ description: "Files the run wrote that were not stored (over a limit): nothing of them is kept." }),
  })
  .meta({ id: "RunOutputList" });

/**
 * The one byte range a Range header asks for, or null to send the whole file (no header, a unit other
 * than bytes, several ranges, or a malformed one: RFC 9110 lets a server ignore those). A suffix
 * range (`bytes=-N`) is the last N bytes.
 */
export function parseRange(header: string | undefined, size: number): { start: number; end?: number } | null | "unsatisfiable" {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === "" && m[2] === "")) return null;
  if (m[1] === "") {
    const suffix = Number(m[2]);
    if (!Number.isSafeInteger(suffix)) return null;
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix) };
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? undefined : Number(m[2]);
  if (!Number.isSafeInteger(start) || (end !== undefined && (!Number.isSafeInteger(end) || end < start))) return null;
  if (start >= size) return "unsatisfiable";
  return { start, ...(end !== undefined && { end }) };
}

/** A Content-Disposition that always downloads, naming the file by its last segment (RFC 6266, with an ASCII fallback). */
export function contentDisposition(path: string): string {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

export function registerOutputRoutes(routes: Routes, db: Db, outputs: OutputService): void {
  const runParam = idParam("run_id");

  routes.add({
    method: "get",
    path: "/v1/runs/{run_id}/outputs",
    operationId: "listRunOutputs",
    summary: "List a run's output files",
    description:
      "The files the run wrote to `$CODEPLANE_OUTPUT_DIR` (and its experiment's analysed output paths inside the checkout), sent by its pod when the command ended, whether it succeeded, failed, timed out or was cancelled. A file over a limit is listed under `refused`, never in `items`.",
    tag: "Runs",
    scope: "runs:read",
    params: runParam,
    responses: { 200: { description: "The run's outputs.", schema: outputListSchema }, 404: runNotFound },
    handler: async (_ctx, { params, principal }) => ({ status: 200, body: await outputs.list(db, principal.accountId, params.run_id) }),
  });

  routes.add({
    method: "get",
    path: "/v1/runs/{run_id}/outputs.tar.gz",
    operationId: "getRunOutputsArchive",
    summary: "Download all of a run's output files",
    description: "A gzipped tar of every stored output under its path, streamed as it is made (no Content-Length).",
    tag: "Runs",
    scope: "runs:read",
    params: runParam,
    responses: {
      200: { description: "The archive.", schema: z.string().meta({ format: "binary" }), contentType: "application/gzip" },
      404: runNotFound,
    },
    handler: async (ctx, { params, principal }) => {
      const tar = await outputs.archive(db, principal.accountId, params.run_id);
      ctx.set("Content-Disposition", `attachment; filename="run-${params.run_id}-outputs.tar.gz"`);
      ctx.type = "application/gzip";
      const gzip = createGzip();
      tar.on("error", (err) => gzip.destroy(err));
      return { status: 200, body: tar.pipe(gzip) };
    },
  });

  routes.add({
    method: "get",
    path: "/v1/runs/{run_id}/outputs/{path}",
    koaPath: "/v1/runs/:run_id/outputs/*path",
    operationId: "getRunOutput",
    summary: "Download one output file",
    description:
      "The file's bytes with its content type, `Content-Disposition: attachment`, `X-Content-Type-Options: nosniff`, an `ETag` of its SHA-256 and `Accept-Ranges: bytes`. One range (`Range: bytes=a-b`, `bytes=a-`, `bytes=-n`) answers 206 with `Content-Range`; a range past the end 416 with `Content-Range: bytes */<size>`; several ranges are answered whole (200).",
    tag: "Runs",
    scope: "runs:read",
    params: z.strictObject({ run_id: z.uuid(), path: z.string().min(1).max(4096).meta({ description: "The output's path, as listed." }) }),
    responses: {
      200: { description: "The file.", schema: z.string().meta({ format: "binary" }), contentType: "application/octet-stream" },
      206: { description: "The range asked for.", schema: z.string().meta({ format: "binary" }), contentType: "application/octet-stream" },
      404: { description: "No such run in this account, or no such output.", schema: errorBodySchema },
      416: { description: "The range starts at or past the file's end.", schema: errorBodySchema },
    },
    handler: async (ctx, { params, principal }) => serveOne(ctx, db, outputs, principal.accountId, params.run_id, params.path),
  });
}

async function serveOne(ctx: Context, db: Db, outputs: OutputService, accountId: string, runId: string, path: string) {
  if (outputPathProblem(path)) throw new HttpError(404, "Output not found");
  // The size first (the listing's row), so a range can be judged before the store is asked.
  const { items } = await outputs.list(db, accountId, runId);
  const listed = items.find((o) => o.path === path);
  if (!listed) throw new HttpError(404, "Output not found");
  const range = parseRange(ctx.get("range") || undefined, listed.size);
  if (range === "unsatisfiable")
    throw new HttpError(416, `The range is outside the file (${listed.size} bytes)`, { "Content-Range": `bytes */${listed.size}` });
  let opened;
  try {
    opened = await outputs.open(db, accountId, runId, path, range ?? undefined);
  } catch (err) {
    if (err instanceof InvalidRangeError) throw new HttpError(416, err.message, { "Content-Range": `bytes */${err.totalSize}` });
    throw err;
  }
  const { output, object } = opened;
  ctx.set("Content-Disposition", contentDisposition(path));
  ctx.set("X-Content-Type-Options", "nosniff");
  ctx.set("ETag", `"${output.sha256}"`);
  ctx.set("Accept-Ranges", "bytes");
  ctx.type = output.content_type;
  ctx.length = object.size;
  if (range) {
    const start = range.start;
    ctx.set("Content-Range", `bytes ${start}-${start + object.size - 1}/${object.totalSize}`);
    return { status: 206, body: object.body };
  }
  return { status: 200, body: object.body };
}

const bearer = (ctx: Context): string | null => /^Bearer ([^\s]+)$/i.exec(ctx.get("authorization"))?.[1] ?? null;
const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const unauthenticated = () => new HttpError(401, "A valid output token is required", { "WWW-Authenticate": 'Bearer realm="codeplane outputs"' });

/**
 * The internal door: PUT /internal/runs/{run_id}/outputs/{path}, the body the file's bytes,
 * `X-Codeplane-Size` its size as the runner saw it (so a file that cannot fit is refused before a
 * byte is read). 201 with the stored output; 413 with the reason when a limit refuses it.
 */
export function registerOutputUploadRoutes(router: Router, db: Db, outputs: OutputService): void {
  router.put("/internal/runs/:run_id/outputs/*path", async (ctx) => {
    const token = bearer(ctx);
    if (!token) throw unauthenticated();
    const runId = ctx.params.run_id!;
    if (!ID.test(runId)) throw unauthenticated();
    const raw = ctx.params.path;
    const path = Array.isArray(raw) ? raw.join("/") : String(raw ?? "");
    const declared = ctx.get("x-codeplane-size");
    const size = /^\d{1,16}$/.test(declared) ? Number(declared) : null;
    const stored = await outputs.receive(db, runId, token, path, ctx.req, size);
    if (!stored) throw unauthenticated();
    ctx.status = 201;
    ctx.body = stored;
  });
}
