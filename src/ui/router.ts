import { createHash } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { createRequire, stripTypeScriptTypes } from "node:module";
import { fileURLToPath } from "node:url";
import Router from "@koa/router";
import type { Context, Middleware } from "koa";
import { OidcRefusal, sameOrigin, sessionCookieName } from "../oauth/index.ts";
import type { DashboardSessions } from "./sessions.ts";

// The dashboard (/ui): one HTML shell, a stylesheet and small browser modules
// written in TypeScript (src/ui/app/). Browsers cannot read TypeScript, so the
// modules are served with their types stripped by Node's own stripper
// (node:module stripTypeScriptTypes, the same erasure Node applies to src/),
// once per file version (cached by mtime and size), with an ETag. Nothing is
// generated or committed, and the image, which ships src/, serves them as is.
// Everything else the dashboard does goes through /v1 with the session cookie;
// the routes here only sign in and out and tell the page its CSRF token.

/** src/ui/ beside this module; from dist/ (the compiled CLI) it is the source tree's. */
function uiDir(): string {
  const here = fileURLToPath(new URL(".", import.meta.url));
  if (existsSync(`${here}app/main.ts`)) return here;
  return fileURLToPath(new URL("../../src/ui/", import.meta.url));
}

interface Asset {
  key: string;
  body: string;
  etag: string;
}

const MODULE_NAME = /^[a-z][a-z0-9-]*\.ts$/;
const STATIC_TYPES: Record<string, string> = { "index.html": "text/html; charset=utf-8", "app.css": "text/css; charset=utf-8" };

/**
 * Kept libraries the browser modules use, served beside them (/ui/app/uplot.js) as their packages
 * ship them (from node_modules, production dependencies, so the image has them too): uPlot's ES
 * module and stylesheet draw the
 * metric plots. uPlot builds its DOM with createElement and textContent and sets styles through
 * the CSSOM only, so it runs under the dashboard's CSP (no inline script or style, no eval).
 * Each is typed for the browser modules by a declaration beside them (src/ui/app/uplot.d.ts).
 */
const VENDOR: Record<string, { module: string; type: string }> = {
  "uplot.js": { module: "uplot/dist/uPlot.esm.js", type: "text/javascript; charset=utf-8" },
  "uplot.css": { module: "uplot/dist/uPlot.min.css", type: "text/css; charset=utf-8" },
};
const vendorFile = (name: string): string => createRequire(import.meta.url).resolve(VENDOR[name]!.module);

/** The OAuth server's sign-in methods (src/oauth/index.ts), which the dashboard offers as the authorization page does. */
export interface BrowserSignIn {
  readonly signInMethods: { apiKey: boolean; oidc: string | null };
  startOidcSignIn(ctx: Context, baseUrl: string, returnTo: string): Promise<string>;
}

export interface UiRouterOptions {
  sessions: DashboardSessions;
  signIn: BrowserSignIn;
  /** The sign-in endpoint's per-address limit (the API layer's). */
  signInLimit: Middleware;
}

export function createUiRouter(o: UiRouterOptions): Router {
  const dir = uiDir();
  const cache = new Map<string, Asset>();
  const load = (file: string, transform: (text: string) => string): Asset => {
    const st = statSync(file);
    const key = `${st.mtimeMs}:${st.size}`;
    const hit = cache.get(file);
    if (hit?.key === key) return hit;
    const body = transform(readFileSync(file, "utf8"));
    const asset = { key, body, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"` };
    cache.set(file, asset);
    return asset;
  };
  const send = (ctx: Context, asset: Asset, type: string) => {
    ctx.set("Cache-Control", "no-cache");
    ctx.set("ETag", asset.etag);
    if (ctx.get("If-None-Match") === asset.etag) {
      ctx.status = 304;
      return;
    }
    ctx.type = type;
    ctx.body = asset.body;
  };
  const baseUrl = (ctx: Context) => (ctx.state.baseUrl as string | null | undefined) ?? null;
  const json = (ctx: Context, status: number, body: unknown) => {
    ctx.status = status;
    ctx.set("Cache-Control", "no-store");
    ctx.body = body;
  };
  const cookie = (ctx: Context, value: string, maxAge: number) => {
    const b = baseUrl(ctx) ?? "http://";
    const secure = b.startsWith("https://") ? "; Secure" : "";
    ctx.append("Set-Cookie", `${sessionCookieName(b)}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`);
  };

  const router = new Router({ sensitive: true, strict: true });
  const shell = (ctx: Context) =>
    send(
      ctx,
      load(`${dir}static/index.html`, (t) => t),
      STATIC_TYPES["index.html"]!,
    );
  router.get("/ui", shell);
  router.get("/ui/", shell);
  // Where the GitHub App's setup callback sends the browser (GET /v1/integrations/github/callback).
  router.get("/ui/integrations", shell);
  router.get("/ui/integrations/:id", shell);
  router.get("/ui/app.css", (ctx) =>
    send(
      ctx,
      load(`${dir}static/app.css`, (t) => t),
      STATIC_TYPES["app.css"]!,
    ),
  );
  router.get("/ui/app/:name", (ctx) => {
    const name = ctx.params.name!;
    if (Object.hasOwn(VENDOR, name)) {
      send(
        ctx,
        load(vendorFile(name), (t) => t),
        VENDOR[name]!.type,
      );
      return;
    }
    if (!MODULE_NAME.test(name) || name.endsWith(".test.ts") || name.endsWith(".d.ts") || !existsSync(`${dir}app/${name}`)) {
      json(ctx, 404, { detail: "Not found" });
      return;
    }
    send(
      ctx,
      load(`${dir}app/${name}`, (t) => stripTypeScriptTypes(t, { mode: "strip" })),
      "text/javascript; charset=utf-8",
    );
  });

  // The session: who is signed in, and the CSRF token /v1 wants with the cookie on anything but GET.
  router.get("/ui/session", async (ctx) => {
    if (!sameOrigin(ctx)) return json(ctx, 403, { detail: "Cross-origin request refused" });
    const s = await o.sessions.resolve(ctx.get("Cookie"), baseUrl(ctx));
    if (!s) return json(ctx, 401, { detail: "Not signed in" });
    json(ctx, 200, {
      account_id: s.session.accountId,
      account_name: await o.sessions.accountName(s.session.accountId),
      api_key_id: s.session.apiKeyId,
      scopes: s.session.scopes,
      expires_at: s.session.expiresAt.toISOString(),
      csrf_token: s.csrfToken,
    });
  });
  // How one signs in here: the sign-in page shows the API-key form and the provider's button accordingly.
  router.get("/ui/sign-in", (ctx) => {
    const m = o.signIn.signInMethods;
    json(ctx, 200, { api_key: m.apiKey, oidc: m.oidc === null ? null : { name: m.oidc } });
  });
  // Sign-in at the OIDC provider: the provider's URL for the page to go to, with the flow's cookies
  // set; the provider sends the browser back through /oauth/oidc/callback to return_to, signed in.
  router.post("/ui/sign-in/oidc", o.signInLimit, async (ctx) => {
    const body = await readJsonObject(ctx, '{"return_to": "/ui/#/runs"} (return_to optional)');
    if (!body.ok) return json(ctx, body.status, { detail: body.detail });
    const b = baseUrl(ctx);
    if (!o.signIn.signInMethods.oidc) return json(ctx, 404, { detail: "Sign-in through an OpenID Connect provider is not configured" });
    if (!b) return json(ctx, 400, { detail: "The Host header is not a host name" });
    const returnTo = body.value.return_to ?? "/ui/";
    if (typeof returnTo !== "string" || !isDashboardPath(returnTo)) return json(ctx, 400, { detail: "return_to must be a path of the dashboard (/ui/...)" });
    try {
      json(ctx, 200, { authorization_url: await o.signIn.startOidcSignIn(ctx, b, returnTo) });
    } catch (err) {
      if (!(err instanceof OidcRefusal)) throw err;
      json(ctx, err.status, { detail: err.message });
    }
  });
  // Sign-in with an API key of the account (JSON only, same origin only: a form on another site cannot post it).
  router.post("/ui/session", o.signInLimit, async (ctx) => {
    const body = await readJsonObject(ctx, '{"api_key": "cp_..."}');
    if (!body.ok) return json(ctx, body.status, { detail: body.detail });
    const methods = o.signIn.signInMethods;
    if (!methods.apiKey) return json(ctx, 403, { detail: `Signing in with an API key is turned off here; sign in with ${methods.oidc}.` });
    const apiKey = body.value.api_key;
    if (typeof apiKey !== "string" || !apiKey.trim()) return json(ctx, 400, { detail: "api_key is required" });
    const created = await o.sessions.signIn(apiKey);
    if (!created) return json(ctx, 401, { detail: "That is not a valid API key." });
    cookie(ctx, created.token, o.sessions.sessionSeconds);
    json(ctx, 201, {
      account_id: created.session.accountId,
      scopes: created.session.scopes,
      expires_at: created.session.expiresAt.toISOString(),
      csrf_token: o.sessions.csrfToken(created.session.id),
    });
  });
  router.delete("/ui/session", async (ctx) => {
    if (!sameOrigin(ctx)) return json(ctx, 403, { detail: "Cross-origin request refused" });
    const s = await o.sessions.resolve(ctx.get("Cookie"), baseUrl(ctx));
    if (s) {
      if (ctx.get("X-CSRF-Token") !== s.csrfToken) return json(ctx, 403, { detail: "Missing or wrong X-CSRF-Token" });
      await o.sessions.signOut(s.session);
    }
    cookie(ctx, "", 0);
    ctx.status = 204;
  });
  return router;
}

/** The dashboard's own pages (a hash or query allowed): where a sign-in at the provider may come back to. */
function isDashboardPath(p: string): boolean {
  if (!/^\/ui(\/|\?|#|$)/.test(p) || /[\\\u0000-\u0020\u007f]/.test(p)) return false;
  const u = new URL(p, "http://dashboard.invalid");
  return u.host === "dashboard.invalid" && (u.pathname === "/ui" || u.pathname.startsWith("/ui/"));
}

type JsonBody = { ok: true; value: Record<string, unknown> } | { ok: false; status: number; detail: string };

/**
 * A sign-in request's JSON object, from the same origin only (a cross-site page may
 * neither sign a browser in nor start a sign-in for it), a few hundred bytes at most.
 */
async function readJsonObject(ctx: Context, shape: string): Promise<JsonBody> {
  if (!sameOrigin(ctx)) return { ok: false, status: 403, detail: "Cross-origin request refused" };
  if (!ctx.is("application/json")) return { ok: false, status: 415, detail: `Send JSON: ${shape}` };
  const raw = await readSmallBody(ctx);
  let value: unknown;
  try {
    value = raw.trim() ? JSON.parse(raw) : {};
  } catch {
    return { ok: false, status: 400, detail: "Malformed JSON" };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, status: 400, detail: `Send a JSON object: ${shape}` };
  return { ok: true, value: value as Record<string, unknown> };
}

/** The sign-in body: a few hundred bytes at most. */
async function readSmallBody(ctx: Context, limit = 4096): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      const err = Object.assign(new Error("Request body too large"), { status: 413, expose: true });
      throw err;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
