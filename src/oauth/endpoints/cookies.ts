import type { Context } from "koa";
import { OIDC_FLOW_SECONDS, type OidcSignIn } from "../oidc.ts";
import { newSecret } from "../secrets.ts";

// The cookies of the authorization server's pages: the session (after
// sign-in), the pre-login nonce that binds a sign-in form and an OIDC flow to
// one browser, and the OIDC flow's sealed state. __Host- names over HTTPS.

const SESSION_COOKIE = "codeplane_session";
const LOGIN_COOKIE = "codeplane_login";
const OIDC_COOKIE = "codeplane_oidc";
export const LOGIN_SECONDS = 1800;

const hostOnly = (baseUrl: string, name: string) => (baseUrl.startsWith("https://") ? `__Host-${name}` : name);
export const sessionCookieName = (baseUrl: string): string => hostOnly(baseUrl, SESSION_COOKIE);
export const loginCookieName = (baseUrl: string): string => hostOnly(baseUrl, LOGIN_COOKIE);
export const oidcCookieName = (baseUrl: string): string => hostOnly(baseUrl, OIDC_COOKIE);

export function setCookie(ctx: Context, baseUrl: string, name: string, value: string, maxAgeSeconds: number): void {
  const secure = baseUrl.startsWith("https://") ? "; Secure" : "";
  ctx.append("Set-Cookie", `${name}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure}`);
}

export const cookie = (ctx: Context, name: string): string | undefined => {
  const header = ctx.get("cookie");
  for (const part of header.split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
};

/**
 * A fresh pre-login nonce for this browser, set here: every sign-in form and
 * every OIDC flow gets a new one, never the one the browser brought. A nonce
 * someone planted (a cookie set over http, or from a sibling host) is known to
 * them, and a form bound to it would be theirs to post: rotating it for every
 * browser that is not signed in means the page's form is bound to a value only
 * this response has seen. (Another sign-in tab opened meanwhile is refused and
 * starts again.)
 */
export function loginNonce(ctx: Context, baseUrl: string): string {
  const nonce = newSecret("login");
  setCookie(ctx, baseUrl, loginCookieName(baseUrl), nonce, LOGIN_SECONDS);
  return nonce;
}

/**
 * Sends a browser to the OIDC provider, coming back to `returnTo`: the flow's
 * sealed state goes in a cookie bound to a fresh pre-login cookie set here
 * beside it, so only this browser can finish it. The provider's
 * URL, or OidcRefusal when the provider cannot be reached.
 */
export async function startOidcFlow(ctx: Context, baseUrl: string, oidc: OidcSignIn, returnTo: string): Promise<string> {
  const nonce = loginNonce(ctx, baseUrl);
  const started = await oidc.start(baseUrl, nonce, returnTo);
  setCookie(ctx, baseUrl, oidcCookieName(baseUrl), started.sealed, OIDC_FLOW_SECONDS);
  return started.url;
}
