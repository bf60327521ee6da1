import type Router from "@koa/router";
import type { Context } from "koa";
import { pipeline, Transform, type TransformCallback } from "node:stream";
import { createGunzip } from "node:zlib";
import type { CheckoutAccess, CheckoutService } from "../../domain/checkout/checkout.ts";
import { HttpError } from "../http-error.ts";

// codeplane's git endpoint: git's smart HTTP protocol, upload-pack only, for
// the checkout of run and analysis pods (the contract's `/git/`). Not part of
// the JSON API and not in the OpenAPI document: its clients are git itself,
// authenticated by the workload's checkout token, presented as a bearer token
// (what the checkout container sends, through http.extraHeader) or as the
// password of HTTP Basic (what git asks for after a 401).

const REQUEST_TYPE = "application/x-git-upload-pack-request";
/** A checkout's request is its wants and haves: small. A client that sends more is not a checkout. */
const MAX_REQUEST_BYTES = 16 * 1024 * 1024;
const REALM = 'Basic realm="codeplane git", charset="UTF-8"';

const unauthenticated = () => new HttpError(401, "A valid checkout token is required", { "WWW-Authenticate": REALM });
const readOnly = () => new HttpError(403, "codeplane's git endpoint is read-only: push is not served");

/** The repository id of `<id>.git` (or a bare `<id>`). */
const repositoryOf = (segment: string) => segment.replace(/\.git$/, "");

function presentedToken(ctx: Context): string | null {
  const header = ctx.get("authorization");
  const bearer = /^Bearer ([^\s]+)$/i.exec(header);
  if (bearer) return bearer[1]!;
  const basic = /^Basic ([A-Za-z0-9+/=]+)$/i.exec(header);
  if (!basic) return null;
  const decoded = Buffer.from(basic[1]!, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon >= 0 ? decoded.slice(colon + 1) : null;
}

async function open(checkout: CheckoutService, ctx: Context): Promise<CheckoutAccess> {
  const token = presentedToken(ctx);
  if (!token) throw unauthenticated();
  const access = await checkout.open(token, repositoryOf((ctx.params as Record<string, string>).repository!));
  if (!access) throw unauthenticated();
  return access;
}

/** Aborts when the client goes away before the answer is complete. */
function abortOnClose(ctx: Context): AbortSignal {
  const ac = new AbortController();
  ctx.res.once("close", () => {
    if (!ctx.res.writableFinished) ac.abort();
  });
  ctx.req.once("aborted", () => ac.abort());
  return ac.signal;
}

function pktLine(text: string): string {
  return (text.length + 4).toString(16).padStart(4, "0") + text;
}

/** Streams the answer straight to the socket (with backpressure) once git starts. */
async function answer(checkout: CheckoutService, ctx: Context, access: CheckoutAccess, advertise: boolean, input: NodeJS.ReadableStream | null) {
  const signal = abortOnClose(ctx);
  await checkout.serve(access, {
    advertise,
    input,
    output: ctx.res,
    signal,
    onStart: () => {
      ctx.status = 200;
      ctx.type = advertise ? "application/x-git-upload-pack-advertisement" : "application/x-git-upload-pack-result";
      ctx.set("Cache-Control", "no-cache, max-age=0, must-revalidate");
      ctx.respond = false;
      ctx.res.flushHeaders();
      if (advertise) ctx.res.write(`${pktLine("# service=git-upload-pack\n")}0000`);
    },
  });
  ctx.res.end();
}

class SizeLimit extends Transform {
  #seen = 0;
  readonly max: number;
  constructor(max: number) {
    super();
    this.max = max;
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.#seen += chunk.length;
    if (this.#seen > this.max) return done(new HttpError(413, `The request is larger than ${this.max} bytes`));
    done(null, chunk);
  }
}

export function registerGitRoutes(router: Router, checkout: CheckoutService): void {
  router.get("/git/:repository/info/refs", async (ctx) => {
    const service = ctx.query.service;
    if (service === "git-receive-pack") throw readOnly();
    if (service !== "git-upload-pack") {
      throw new HttpError(403, "Only git's smart HTTP protocol is served: ask for info/refs?service=git-upload-pack");
    }
    const access = await open(checkout, ctx);
    await answer(checkout, ctx, access, true, null);
  });

  router.post("/git/:repository/git-upload-pack", async (ctx) => {
    if (!ctx.is(REQUEST_TYPE)) throw new HttpError(415, `The request body must be ${REQUEST_TYPE}`);
    const encoding = (ctx.get("content-encoding") || "identity").toLowerCase();
    if (encoding !== "identity" && encoding !== "gzip" && encoding !== "x-gzip") throw new HttpError(415, `Content-Encoding '${encoding}' is not supported`);
    const access = await open(checkout, ctx);
    const limit = new SizeLimit(MAX_REQUEST_BYTES);
    // pipeline, not pipe: a corrupt gzip stream or an oversized body must end the exchange, not the process.
    const ignore = () => {};
    const body = encoding === "identity" ? pipeline(ctx.req, limit, ignore) : pipeline(ctx.req, createGunzip(), limit, ignore);
    await answer(checkout, ctx, access, false, body);
  });

  router.post("/git/:repository/git-receive-pack", () => {
    throw readOnly();
  });
}
