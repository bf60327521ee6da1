import { timingSafeEqual } from "node:crypto";
import type { Middleware } from "koa";
import type { Principal } from "../../domain/auth/scopes.ts";
import { textProblem } from "../../domain/shared/storable-text.ts";
import { HttpError, notAuthenticated } from "../http-error.ts";
import type { FailedAuthentications } from "./rate-limit.ts";

/**
 * Resolves a bearer token to a principal, or null when this authenticator does
 * not recognise it. API keys are one; OAuth access tokens are another, which
 * checks the token's audience against the request's base URL
 * (`ctx.state.baseUrl`, set by the app; null when the Host is unusable).
 */
export type Authenticator = (token: string, request: { baseUrl: string | null }) => Promise<Principal | null>;

/**
 * Sets ctx.state.principal when a valid bearer token is sent. A token that is
 * sent but not valid is refused here (and counted against the client address:
 * once it has spent its budget, its credentials are refused with 429 before
 * any lookup); a missing one is left to each route, since some routes are
 * public. Runs before the body is read. `challengeScope`: the `scope` a
 * refusal's challenge names on a path (/mcp's), if any.
 */
export function authenticate(
  authenticators: Authenticator[],
  failures?: FailedAuthentications,
  challengeScope?: (path: string) => string | undefined,
): Middleware {
  return async (ctx, next) => {
    const header = ctx.get("Authorization");
    if (header) {
      await failures?.refuseIfSpent(ctx);
      const baseUrl = (ctx.state.baseUrl as string | null | undefined) ?? null;
      const refuse = async () => {
        await failures?.record(ctx);
        return notAuthenticated(baseUrl, true, challengeScope?.(ctx.path));
      };
      const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
      // No authenticator ever sees text it could not look up (Node's parser refuses NUL in headers already).
      if (!m?.[1] || textProblem(m[1])) throw await refuse();
      let principal: Principal | null = null;
      for (const auth of authenticators) {
        principal = await auth(m[1], { baseUrl });
        if (principal) break;
      }
      if (!principal) throw await refuse();
      ctx.state.principal = principal;
    }
    await next();
  };
}

/** A dashboard session named by the request's cookie, with the CSRF token bound to it (src/ui/sessions.ts). */
export interface CookieSession {
  principal: Principal;
  csrfToken: string;
}

/** Resolves the request's Cookie header (under the request's base URL, which names the cookie) to a working session, or null. */
export type SessionResolver = (cookieHeader: string, baseUrl: string | null) => Promise<CookieSession | null>;

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The dashboard's session cookie as a /v1 credential, after the bearer step
 * and only when no Authorization header was sent. Never for cross-site
 * requests: a `Sec-Fetch-Site` other than same-origin (or none: typed into the
 * address bar) leaves the cookie unused, so the route answers 401 as without a
 * credential. A state-changing method also needs `X-CSRF-Token`, the HMAC of
 * the session id that only a same-origin page can read (GET /ui/session), and,
 * when the browser sends `Origin`, the base URL's origin: a form or a
 * cross-origin fetch cannot send the header, so a forged POST is 403.
 */
export function authenticateSession(resolve: SessionResolver): Middleware {
  return async (ctx, next) => {
    const cookieHeader = ctx.get("Cookie");
    if (ctx.state.principal || ctx.get("Authorization") || !cookieHeader) return next();
    const site = ctx.get("Sec-Fetch-Site");
    if (site && site !== "same-origin" && site !== "none") return next();
    const baseUrl = (ctx.state.baseUrl as string | null | undefined) ?? null;
    const session = await resolve(cookieHeader, baseUrl);
    if (!session) return next();
    if (!SAFE_METHODS.has(ctx.method)) {
      const origin = ctx.get("Origin");
      if (origin && (!baseUrl || origin !== new URL(baseUrl).origin)) throw new HttpError(403, "Cross-origin request refused for a session cookie");
      if (!sameSecret(ctx.get("X-CSRF-Token"), session.csrfToken)) throw new HttpError(403, "Missing or wrong X-CSRF-Token for the session cookie");
    }
    ctx.state.principal = session.principal;
    await next();
  };
}

const sameSecret = (sent: string, expected: string): boolean => {
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};
