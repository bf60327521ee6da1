import type Router from "@koa/router";
import type { Middleware } from "koa";
import { HttpError } from "../http-error.ts";

const LITERAL_MEMO_SIZE = 1024;

/**
 * What a known path answers to a method none of its routes serves: `405` with
 * `Allow`, whatever the method (TRACE and CONNECT included, where koa-router
 * would answer 501 to a method it does not implement). `OPTIONS` answers `204`
 * with the same `Allow`. A path no router knows stays a `404`.
 *
 * Placed inside the error handler, so the 405 gets the usual `{"detail"}` body,
 * and outside every router, so it sees what they left unanswered.
 */
export function allowedMethods(routers: Router[]): Middleware {
  // Asked on every request, of the same few paths: matching every route of
  // every router each time was a few percent of a list request's CPU
  // (bench/api.ts, profiled). The routes are all registered before the app
  // serves, so a path's answer holds; the memo is emptied when it grows past
  // its bound (paths with ids in them are many).
  const literalByPath = new Map<string, string[]>();
  const literalFor = (path: string) => {
    let methods = literalByPath.get(path);
    if (!methods) {
      if (literalByPath.size >= LITERAL_MEMO_SIZE) literalByPath.clear();
      methods = allowedFor(routers, path, { literalOnly: true });
      literalByPath.set(path, methods);
    }
    return methods;
  };
  return async (ctx, next) => {
    // A path a route names literally is that route's, whatever a templated
    // route would also match (POST /v1/integrations/github is not
    // /v1/integrations/{integration_id}): its other methods are 405, as Allow says.
    const literal = literalFor(ctx.path);
    const method = ctx.method.toUpperCase();
    if (literal.length > 0 && !literal.includes(method)) throw new HttpError(405, "Method Not Allowed", { Allow: literal.join(", ") });
    await next();
    if (ctx.status !== 404 || ctx.body !== undefined) return;
    const allow = allowedFor(routers, ctx.path);
    if (allow.length === 0) return;
    if (method === "OPTIONS") {
      ctx.status = 204;
      ctx.set("Allow", allow.join(", "));
      return;
    }
    if (!allow.includes(method)) throw new HttpError(405, "Method Not Allowed", { Allow: allow.join(", ") });
  };
}

/**
 * The methods some route of these routers serves on this path (HEAD with GET),
 * plus OPTIONS; empty for an unknown path. Routes that name the path literally
 * win over templated ones; `literalOnly` asks for those alone.
 */
export function allowedFor(routers: Router[], path: string, opts: { literalOnly?: boolean } = {}): string[] {
  const layers = routers.flatMap((router) => router.match(path, "GET").path);
  const literal = layers.filter((layer) => layer.paramNames.length === 0);
  const methods = new Set<string>();
  for (const layer of literal.length > 0 || opts.literalOnly ? literal : layers) for (const m of layer.methods) methods.add(m.toUpperCase());
  if (methods.size === 0) return [];
  methods.add("OPTIONS");
  const order = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
  return [...methods].sort((a, b) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99) || a.localeCompare(b));
}
