import type { Context } from "koa";

/**
 * Whether a state-changing browser request comes from a page of this origin:
 * `Sec-Fetch-Site`, when the browser sends it, must be `same-origin`, and
 * `Origin`, when sent, must be the base URL's origin (`ctx.state.baseUrl`).
 * A cross-site page may then neither sign a browser in (login CSRF), nor
 * approve for it, nor read or end its session. The dashboard's session calls
 * and the authorization page's forms use this one check.
 */
export function sameOrigin(ctx: Context): boolean {
  const site = ctx.get("Sec-Fetch-Site");
  if (site && site !== "same-origin") return false;
  const origin = ctx.get("Origin");
  const b = (ctx.state.baseUrl as string | null | undefined) ?? null;
  return !origin || (b !== null && origin === new URL(b).origin);
}
