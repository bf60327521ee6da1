import type { Context, Middleware } from "koa";
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";
import type { Principal } from "../../domain/auth/scopes.ts";
import { HttpError } from "../http-error.ts";

export interface RateLimitOptions {
  requests: number;
  windowSeconds: number;
}

const retryAfterSeconds = (msBeforeNext: number) => Math.max(1, Math.ceil(msBeforeNext / 1000));

/**
 * Charges a request that carries more than one unit of work (an MCP batch of
 * N messages) N - 1 points more, to the same credential and window: set on
 * `ctx.state.rateLimit` by rateLimit(). A charge the credential cannot afford
 * is refused whole with the same 429 and takes nothing (the request's own
 * point stays spent, as any refused request's does).
 */
export interface RateLimitCharge {
  charge(points: number): Promise<void>;
}

const tooMany = (opts: RateLimitOptions, msBeforeNext: number) => {
  const retry = retryAfterSeconds(msBeforeNext);
  return new HttpError(429, "Too many requests", {
    "Retry-After": String(retry),
    "RateLimit-Limit": String(opts.requests),
    "RateLimit-Remaining": "0",
    "RateLimit-Reset": String(retry),
  });
};

const setHeaders = (ctx: Context, opts: RateLimitOptions, res: RateLimiterRes) => {
  ctx.set("RateLimit-Limit", String(opts.requests));
  ctx.set("RateLimit-Remaining", String(res.remainingPoints));
  ctx.set("RateLimit-Reset", String(Math.ceil(res.msBeforeNext / 1000)));
};

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
      res = await limiter.consume(key, 1);
    } catch (rejected) {
      if (!(rejected instanceof RateLimiterRes)) throw rejected;
      throw tooMany(opts, rejected.msBeforeNext);
    }
    setHeaders(ctx, opts, res);
    const charge: RateLimitCharge = {
      async charge(points) {
        if (points <= 0) return;
        try {
          setHeaders(ctx, opts, await limiter.consume(key, points));
        } catch (rejected) {
          if (!(rejected instanceof RateLimiterRes)) throw rejected;
          // The memory limiter counts a refused consume: give the points back, the batch ran nothing.
          await limiter.reward(key, points);
          throw tooMany(opts, rejected.msBeforeNext);
        }
      },
    };
    ctx.state.rateLimit = charge;
    await next();
  };
}

export interface FailedAuthLimitOptions {
  /** Failed authentications allowed per client address and window; 0: unlimited. */
  failures: number;
  windowSeconds: number;
}

/** Counts failed authentications per client address (`ctx.ip`: the proxy's view when CODEPLANE_TRUST_PROXY is set). */
export interface FailedAuthentications {
  /** Refuses (429) an address that has spent its budget, before its credential costs a lookup. */
  refuseIfSpent(ctx: Context): Promise<void>;
  /** Counts one failure; refuses (429) the request that goes over the budget. */
  record(ctx: Context): Promise<void>;
}

const tooManyFailures = (msBeforeNext: number) =>
  new HttpError(429, "Too many failed authentication attempts", { "Retry-After": String(retryAfterSeconds(msBeforeNext)) });

export function failedAuthLimit(opts: FailedAuthLimitOptions): FailedAuthentications {
  if (opts.failures === 0) return { refuseIfSpent: async () => undefined, record: async () => undefined };
  const limiter = new RateLimiterMemory({ points: opts.failures, duration: opts.windowSeconds, keyPrefix: "auth-failures" });
  return {
    async refuseIfSpent(ctx) {
      const res = await limiter.get(ctx.ip);
      if (res && res.consumedPoints >= opts.failures) throw tooManyFailures(res.msBeforeNext);
    },
    async record(ctx) {
      try {
        await limiter.consume(ctx.ip);
      } catch (rejected) {
        if (!(rejected instanceof RateLimiterRes)) throw rejected;
        throw tooManyFailures(rejected.msBeforeNext);
      }
    },
  };
}
