import type { Context } from "koa";
import { baseUrlOf } from "../base-url.ts";
import { OidcRefusal } from "../oidc.ts";
import { errorPage, pageCsp } from "../pages.ts";
import { createSession } from "../store.ts";
import { cookie, loginCookieName, oidcCookieName, sessionCookieName, setCookie } from "./cookies.ts";
import type { EndpointDeps } from "./endpoint.ts";

// The upstream OpenID Connect provider sends the browser back here (src/oauth/oidc.ts):
// a session is made for the account the provider vouched for.

export const oidcCallback =
  (d: Pick<EndpointDeps, "db" | "publicUrl" | "config" | "audit" | "oidc">) =>
  async (ctx: Context): Promise<void> => {
    const { oidc } = d;
    ctx.set("Cache-Control", "no-store");
    ctx.type = "text/html; charset=utf-8";
    ctx.set("Content-Security-Policy", pageCsp());
    const b = baseUrlOf(ctx, d.publicUrl);
    if (!oidc || !b) {
      ctx.status = 404;
      ctx.body = errorPage("Not found", oidc ? "The Host header is not a host name." : "Sign-in through an OpenID Connect provider is not configured.");
      return;
    }
    const sealed = cookie(ctx, oidcCookieName(b));
    // The flow state is spent whatever happens next.
    if (sealed) setCookie(ctx, b, oidcCookieName(b), "", 0);
    try {
      const who = await oidc.finish(b, cookie(ctx, loginCookieName(b)), sealed, ctx.querystring);
      const created = await createSession(d.db, who.accountId, who.apiKeyId, d.config.sessionSeconds);
      setCookie(ctx, b, sessionCookieName(b), created.token, d.config.sessionSeconds);
      d.audit.info(
        {
          event: "oauth.sign_in",
          method: "oidc",
          account_id: who.accountId,
          api_key_id: who.apiKeyId,
          session_id: created.session.id,
          oidc_subject: who.subject,
        },
        "signed in through the OIDC provider",
      );
      ctx.status = 303;
      ctx.redirect(who.returnTo);
      ctx.status = 303;
    } catch (err) {
      if (!(err instanceof OidcRefusal)) throw err;
      d.audit.info({ event: "oauth.sign_in_failed", method: "oidc", reason: err.reason }, "OIDC sign-in refused");
      ctx.status = err.status;
      ctx.body = errorPage("Sign-in refused", err.message);
    }
  };
