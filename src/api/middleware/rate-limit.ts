import type { Middleware } from "koa";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import type { Principal } from "../../domain/auth/scopes.ts";
import { HttpError } from "../http-error.ts";

export interface RateLimitOptions {
  requests: number;
  windowSeconds: number;
}

/**
 * A fixed window per credential (per client address before authentication),
 * with the IETF RateLimit-* headers. Counters live in this process: with N
 * replicas a key gets up to N times the budget, which is documented.
 */
export function rateLimit(opts: RateLimitOptions): Middleware {
  if (opts.requests === 0) return (_ctx, next) => next();
  const limiter = new RateLimiterMemory({ points: opts.requests, duration: opts.windowSeconds });
  return async (ctx, next) => {
    const principal = ctx.state.principal as Principal | undefined;
    const key = principal ? `cred:${principal.credential.id}` : `ip:${ctx.ip}`;
    let res: RateLimiterRes;
    try {
      res = await limiter.consume(key);
    } catch (rejected) {
      if (!(rejected instanceof RateLimiterRes)) throw rejected;
      const retry = Math.max(1, Math.ceil(rejected.msBeforeNext / 1000));
      throw new HttpError(429, "Too many requests", {
        "Retry-After": String(retry),
        "RateLimit-Limit": String(opts.requests),
        "RateLimit-Remaining": "0",
        "RateLimit-Reset": String(retry),
      });
    }
    ctx.set("RateLimit-Limit", String(opts.requests));
    ctx.set("RateLimit-Remaining", String(res.remainingPoints));
    ctx.set("RateLimit-Reset", String(Math.ceil(res.msBeforeNext / 1000)));
    await next();
  };
}
