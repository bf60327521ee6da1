import type Router from "@koa/router";
import type { Middleware } from "koa";
import { HttpError } from "../http-error.ts";

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
  return async (ctx, next) => {
    await next();
    if (ctx.status !== 404 || ctx.body !== undefined) return;
    const allow = allowedFor(routers, ctx.path);
    if (allow.length === 0) return;
    const method = ctx.method.toUpperCase();
    if (method === "OPTIONS") {
      ctx.status = 204;
      ctx.set("Allow", allow.join(", "));
      return;
    }
    if (!allow.includes(method)) throw new HttpError(405, "Method Not Allowed", { Allow: allow.join(", ") });
  };
}

/** The methods some route of these routers serves on this path (HEAD with GET), plus OPTIONS; empty for an unknown path. */
export function allowedFor(routers: Router[], path: string): string[] {
  const methods = new Set<string>();
  for (const router of routers) {
    for (const layer of router.match(path, "GET").path) for (const m of layer.methods) methods.add(m.toUpperCase());
  }
  if (methods.size === 0) return [];
  methods.add("OPTIONS");
  const order = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
  return [...methods].sort((a, b) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99) || a.localeCompare(b));
}
