import { randomUUID } from "node:crypto";
import type { Middleware } from "koa";
import type { Logger } from "../../logger.ts";
import type { HttpMetrics } from "../metrics.ts";

// A client-sent id is echoed only when it is a sane token, so it can't be used
// to inject text into logs or headers.
const CLIENT_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;
const PROBES = new Set(["/healthz", "/readyz", "/metrics"]);

export function requestContext(logger: Logger, metrics: HttpMetrics): Middleware {
  return async (ctx, next) => {
    const sent = ctx.get("X-Request-Id");
    const requestId = CLIENT_ID_RE.test(sent) ? sent : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set("X-Request-Id", requestId);
    const log = logger.child({ request_id: requestId });
    ctx.state.log = log;
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      // Label by route template, never by raw path, to keep metric cardinality bounded.
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? "unmatched";
      metrics.observe(ctx.method, String(route), ctx.status, seconds);
      // Probes and scrapes come every few seconds: at debug, so they do not drown the requests people make.
      const entry = { method: ctx.method, path: ctx.path, status: ctx.status, duration_ms: Math.round(seconds * 1000) };
      if (PROBES.has(ctx.path)) log.debug(entry, "request");
      else log.info(entry, "request");
    }
  };
}
