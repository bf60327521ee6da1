import type { Middleware } from "koa";

// Headers every response gets, errors included (set before anything can fail).
//
// - nosniff everywhere: every body is served with its real type.
// - No framing anywhere (X-Frame-Options for old browsers, frame-ancestors for the rest).
// - A Content-Security-Policy: the API's answers are data, so nothing may load
//   from them; the rendered reference under /docs may run only its own,
//   same-origin scripts (the swagger-ui bundle from /docs/assets and
//   /docs/init.js: no inline script, no eval), its stylesheet (swagger-ui sets
//   inline styles, hence 'unsafe-inline' for styles only), its own and data:
//   images (swagger-ui's icons), and fetch only from this origin (the document
//   and "Try it out").
// - Cache-Control: no-store on /v1: its answers carry account data, and POST
//   /v1/auth/keys carries a new key that must never sit in a cache.

const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

// The dashboard (/ui): its own modules and stylesheet only; no inline script or style, no eval;
// fetch and EventSource to this origin only; forms post nowhere (the modules use fetch).
export const UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const isUi = (path: string) => path === "/ui" || path.startsWith("/ui/");
const isDocs = (path: string) => path === "/docs" || path.startsWith("/docs/");
const isApi = (path: string) => path === "/v1" || path.startsWith("/v1/");

/** The headers for each kind of path, made once: not an object per request (issue 36). */
const headersWith = (csp: string) => ({
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Content-Security-Policy": csp,
});
const API_HEADERS = { ...headersWith(API_CSP), "Cache-Control": "no-store" };
const DOCS_HEADERS = headersWith(DOCS_CSP);
const UI_HEADERS = headersWith(UI_CSP);
const OTHER_HEADERS = headersWith(API_CSP);

export function securityHeaders(): Middleware {
  return (ctx, next) => {
    const path = ctx.path;
    ctx.set(isApi(path) ? API_HEADERS : isDocs(path) ? DOCS_HEADERS : isUi(path) ? UI_HEADERS : OTHER_HEADERS);
    return next();
  };
}
