import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import type Router from "@koa/router";
import type { Registry } from "prom-client";
import type { Logger } from "../../logger.ts";

/** Something /readyz waits for: Postgres now, Kubernetes once runs exist. */
export interface ReadinessCheck {
  name: string;
  check(): Promise<void>;
}

const CHECK_TIMEOUT_MS = 2_000;

async function runCheck(c: ReadinessCheck): Promise<{ ok: boolean; error?: string }> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([c.check(), new Promise((_, reject) => (timer = setTimeout(() => reject(new Error("timed out")), CHECK_TIMEOUT_MS)))]);
    return { ok: true };
  } catch (err) {
    return { ok: false, error: err instanceof Error ? err.message : String(err) };
  } finally {
    clearTimeout(timer);
  }
}

const DOCS_ASSETS = new Set(["swagger-ui.css", "swagger-ui-bundle.js", "favicon-32x32.png"]);
const swaggerDir = path.dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>codeplane API reference</title>
<link rel="icon" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>`;

// Kept out of the HTML so the page works under a strict Content-Security-Policy.
const DOCS_INIT = `window.ui = SwaggerUIBundle({ url: "/openapi.json", dom_id: "#reference", deepLinking: true, persistAuthorization: false, validatorUrl: "none" });`;

/** Prometheus's view of the process. */
export function registerMetricsRoute(router: Router, registry: Registry): void {
  router.get("/metrics", async (ctx) => {
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  });
}

export function registerOpsRoutes(
  router: Router,
  opts: {
    checks: ReadinessCheck[];
    /** null: /metrics is served on a listener of its own (CODEPLANE_METRICS_PORT). */
    metrics: Registry | null;
    /** The API's description; null in a process that serves no API (CODEPLANE_COMPONENTS=controller): no /openapi.json or /docs. */
    openapi: (() => object) | null;
    logger: Logger;
    isShuttingDown: () => boolean;
  },
): void {
  router.get("/healthz", (ctx) => {
    ctx.body = { status: "ok" };
  });

  router.get("/readyz", async (ctx) => {
    const results = await Promise.all(opts.checks.map(async (c) => [c.name, await runCheck(c)] as const));
    const failing = results.filter(([, r]) => !r.ok);
    const shuttingDown = opts.isShuttingDown();
    ctx.status = failing.length || shuttingDown ? 503 : 200;
    ctx.body = {
      status: ctx.status === 200 ? "ready" : "not ready",
      ...(shuttingDown && { detail: "shutting down" }),
      checks: Object.fromEntries(results.map(([name, r]) => [name, r.ok ? "ok" : r.error])),
    };
    if (failing.length) opts.logger.warn({ failing: failing.map(([n, r]) => ({ check: n, error: r.error })) }, "not ready");
  });

  if (opts.metrics) registerMetricsRoute(router, opts.metrics);

  const openapi = opts.openapi;
  if (!openapi) return;
  let cachedDoc: string | null = null;
  router.get("/openapi.json", (ctx) => {
    cachedDoc ??= JSON.stringify(openapi());
    ctx.type = "application/json";
    ctx.body = cachedDoc;
  });

  router.get("/docs", (ctx) => {
    ctx.type = "text/html; charset=utf-8";
    ctx.body = DOCS_HTML;
  });
  router.get("/docs/init.js", (ctx) => {
    ctx.type = "application/javascript";
    ctx.body = DOCS_INIT;
  });
  router.get("/docs/assets/:file", async (ctx) => {
    const file = String(ctx.params.file);
    if (!DOCS_ASSETS.has(file)) return;
    ctx.type = path.extname(file);
    ctx.set("Cache-Control", "public, max-age=86400");
    ctx.body = await readFile(path.join(swaggerDir, file));
  });
}
