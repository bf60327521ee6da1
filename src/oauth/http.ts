import type { Context } from "koa";
import { invalidRequest, OAuthProblem } from "./errors.ts";

// Reading what the OAuth endpoints are sent: form bodies (token, revocation,
// introspection, the authorization page's forms) and JSON (registration).
// A parameter sent twice is an error (RFC 6749 3.1 and 3.2).

const FORM = "application/x-www-form-urlencoded";

async function readRaw(ctx: Context, limit: number): Promise<string> {
  const declared = Number(ctx.get("content-length") || "0");
  if (declared > limit) throw new OAuthProblem("invalid_request", `the body is larger than ${limit} bytes`, 413);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new OAuthProblem("invalid_request", `the body is larger than ${limit} bytes`, 413);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** One value per name; throws invalid_request for a repeated parameter or an unparsable one. */
export function singleValues(params: URLSearchParams): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  for (const [k, v] of params) {
    if (k in out) throw invalidRequest(`parameter ${k} is repeated`);
    if (/\x00/.test(k) || /\x00/.test(v)) throw invalidRequest(`parameter ${k} holds a NUL character`);
    out[k] = v;
  }
  return out;
}

export async function readForm(ctx: Context, limit = 64 * 1024): Promise<Record<string, string>> {
  if (!ctx.request.is(FORM)) throw invalidRequest(`the body must be ${FORM}`);
  return singleValues(new URLSearchParams(await readRaw(ctx, limit)));
}

export async function readJson(ctx: Context, limit: number, bad: (msg: string) => OAuthProblem): Promise<unknown> {
  if (!ctx.request.is("application/json")) throw bad("the body must be application/json");
  try {
    return JSON.parse(await readRaw(ctx, limit));
  } catch (err) {
    if (err instanceof OAuthProblem) throw err;
    throw bad("the body is not valid JSON");
  }
}
