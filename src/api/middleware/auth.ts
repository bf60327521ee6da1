import type { Middleware } from "koa";
import type { Principal } from "../../domain/auth/scopes.ts";
import { textProblem } from "../../domain/shared/storable-text.ts";
import { notAuthenticated } from "../http-error.ts";
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
 * public. Runs before the body is read.
 */
export function authenticate(authenticators: Authenticator[], failures?: FailedAuthentications): Middleware {
  return async (ctx, next) => {
    const header = ctx.get("Authorization");
    if (header) {
      await failures?.refuseIfSpent(ctx);
      const baseUrl = (ctx.state.baseUrl as string | null | undefined) ?? null;
      const refuse = async () => {
        await failures?.record(ctx);
        return notAuthenticated(baseUrl);
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
