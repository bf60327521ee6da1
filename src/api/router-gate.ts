import type Router from "@koa/router";
import type { Middleware } from "koa";

// The app mounts seven routers one after the other, and @koa/router's
// middleware tests every route of a router against the path (and reads the
// request's host first) whether or not any could match: a request for
// /v1/repositories went through the health, git, webhook, OAuth and dashboard
// routers before reaching the API's, each finding nothing. Gated by the
// literal start of its routes' paths, a router is asked only about paths one
// of them could match, and the answer is the same: a router that matches
// nothing only calls next().

/** Where a path-to-regexp pattern stops being literal: parameters, wildcards, groups, optional parts, escapes. */
const PATTERN_START = /[:*{}()[\]?+!\\]/;

/**
 * The literal starts of a router's paths (lower-cased unless the router is case-sensitive),
 * or null when some route could match any path (a RegExp path, or middleware with none).
 */
export function literalPrefixes(router: Router): { prefixes: string[]; sensitive: boolean } | null {
  const sensitive = router.opts.sensitive === true;
  const prefixes = new Set<string>();
  for (const layer of router.stack) {
    if (typeof layer.path !== "string") return null;
    const cut = layer.path.search(PATTERN_START);
    const prefix = cut === -1 ? layer.path : layer.path.slice(0, cut);
    if (prefix === "" || prefix === "/") return null;
    prefixes.add(sensitive ? prefix : prefix.toLowerCase());
  }
  return { prefixes: [...prefixes], sensitive };
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/** A test for the paths a router could match; null when it could match any. */
export function pathGate(router: Router): RegExp | null {
  const literal = literalPrefixes(router);
  if (!literal) return null;
  // No routes: (?!) matches nothing.
  const alternatives = literal.prefixes.length ? literal.prefixes.map(escape).join("|") : "(?!)";
  return new RegExp(`^(?:${alternatives})`, literal.sensitive ? "" : "i");
}

/** router.routes(), asked only about paths that start like one of its routes. */
export function gatedRoutes(router: Router): Middleware {
  const dispatch = router.routes() as unknown as Middleware;
  // Made at the first request, when every route is registered.
  let gate: RegExp | null | undefined;
  return (ctx, next) => {
    if (gate === undefined) gate = pathGate(router);
    return gate === null || gate.test(ctx.path) ? dispatch(ctx, next) : next();
  };
}

/**
 * Several routers, one after the other, as one middleware: what
 * `app.use(gatedRoutes(a)); app.use(gatedRoutes(b)); ...` does, without a step
 * of Koa's chain (a bound `next` and a promise) for each router a request
 * passes by. A `/v1` request passed five routers that could not match it on
 * every request (issue 36); now it is one gate test each and one step in all.
 */
export function gatedRouterChain(routers: Router[]): Middleware {
  const dispatches = routers.map((router) => router.routes() as unknown as Middleware);
  // Made at the first request, when every route is registered.
  let gates: (RegExp | null)[] | undefined;
  return (ctx, next) => {
    const tests = (gates ??= routers.map(pathGate));
    const from = (i: number): Promise<unknown> => {
      for (; i < dispatches.length; i++) {
        const gate = tests[i]!;
        if (gate === null || gate.test(ctx.path)) return dispatches[i]!(ctx, () => from(i + 1));
      }
      return next();
    };
    return from(0);
  };
}
