import { randomUUID } from "node:crypto";
import type { Middleware } from "koa";
import type { Logger } from "../../logger.ts";
import type { HttpMetrics } from "../metrics.ts";

// A client-sent id is echoed only when it is a sane token, so it can't be used
// to inject text into logs or headers.
const CLIENT_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;
const PROBES = new Set(["/healthz", "/readyz", "/metrics"]);

/**
 * A request's `ctx.state`. Its logger is made when something logs through it:
 * most requests only write the line requestContext writes, which names the
 * request itself. The getter is the class's, not one defined on each request's
 * state: a getter made per object gives each its own hidden class, and with
 * one per request every object the request touched outlived the
 * young-generation collections and was promoted, to be freed only by full
 * collections (bench/api.ts: the list's scavenges cost 3x).
 */
export class RequestState {
  [key: string]: unknown;
  readonly requestId: string;
  readonly #logger: Logger;
  #log: Logger | undefined;

  constructor(logger: Logger, requestId: string) {
    this.#logger = logger;
    this.requestId = requestId;
  }

  get log(): Logger {
    return (this.#log ??= this.#logger.child({ request_id: this.requestId }));
  }
}

export function requestContext(logger: Logger, metrics: HttpMetrics): Middleware {
  return async (ctx, next) => {
    const sent = ctx.get("X-Request-Id");
    const requestId = CLIENT_ID_RE.test(sent) ? sent : randomUUID();
    // This is the first middleware: nothing is in the state Koa made yet.
    ctx.state = new RequestState(logger, requestId);
    ctx.set("X-Request-Id", requestId);
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      // Label by route template, never by raw path, to keep metric cardinality bounded.
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? "unmatched";
      metrics.observe(ctx.method, String(route), ctx.status, seconds);
      // Probes and scrapes come every few seconds: at debug, so they do not drown the requests people make.
      const entry = { request_id: requestId, method: ctx.method, path: ctx.path, status: ctx.status, duration_ms: Math.round(seconds * 1000) };
      if (PROBES.has(ctx.path)) logger.debug(entry, "request");
      else logger.info(entry, "request");
    }
  };
}
