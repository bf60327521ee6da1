import Router from "@koa/router";
import { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import Koa from "koa";
import type { Registry } from "prom-client";
import { HttpMethodEnum, koaBody } from "koa-body";
import type { Db } from "../db/database.ts";
import type { EnvVarService } from "../domain/env-vars/env-vars.ts";
import type { RepositoryService } from "../domain/repositories/repositories.ts";
import type { LogHub } from "../logs/hub.ts";
import type { RunFeed } from "../domain/runs/run-feed.ts";
import type { RunService } from "../domain/runs/runs.ts";
import type { Logger } from "../logger.ts";
import { createHttpMetrics } from "./metrics.ts";
import { authenticate, authenticateSession, type Authenticator } from "./middleware/auth.ts";
import { allowedMethods } from "./middleware/allowed-methods.ts";
import { errorHandler } from "./middleware/errors.ts";
import { failedAuthLimit, rateLimit } from "./middleware/rate-limit.ts";
import { requestContext } from "./middleware/request-context.ts";
import { securityHeaders } from "./middleware/security-headers.ts";
import { buildOpenApiDocument } from "./openapi.ts";
import { Routes } from "./route.ts";
import { gatedRouterChain, gatedRoutes } from "./router-gate.ts";
import { registerEnvVarRoutes } from "./routes/env-vars.ts";
import { registerNotificationRoutes } from "./routes/notifications.ts";
import type { NotificationService } from "../domain/notifications/notifications.ts";
import { registerKeyRoutes } from "./routes/keys.ts";
import { registerMetricsRoute, registerOpsRoutes, type ReadinessCheck } from "./routes/ops.ts";
import { registerRepositoryRoutes } from "./routes/repositories.ts";
import { registerRunRoutes } from "./routes/runs.ts";
import { registerAnalysisRoutes } from "./routes/analyses.ts";
import type { AnalysisService } from "../domain/analyses/analyses.ts";
import type { CheckoutService } from "../domain/checkout/checkout.ts";
import { registerGitRoutes } from "./routes/git.ts";
import { registerEnvironmentArchiveRoutes } from "./routes/environment-archives.ts";
import { registerPoolRoutes } from "./routes/pool.ts";
import type { PoolService } from "../domain/pools/pool-pods.ts";
import { registerOutputRoutes, registerOutputUploadRoutes } from "./routes/outputs.ts";
import type { OutputService } from "../domain/outputs/outputs.ts";
import { registerEnvironmentRoutes } from "./routes/environments.ts";
import type { EnvironmentService } from "../domain/environments/environments.ts";
import { registerWebhookIntake, registerWebhookRoutes } from "./routes/webhooks.ts";
import { DEFAULT_WEBHOOK_LIMITS, InflightBytes, type WebhookIntakeLimits } from "./webhook-body.ts";
import type { WebhookService } from "../domain/webhooks/webhooks.ts";
import type { HttpMetrics } from "./metrics.ts";
import type { IntegrationService } from "../domain/integrations/integrations.ts";
import { registerIntegrationRoutes } from "./routes/integrations.ts";
import { registerMcpRoute } from "./routes/mcp.ts";
import { DEFAULT_MCP_LIMITS, type McpLimits } from "../mcp/endpoint.ts";
import { MCP_CHALLENGE_SCOPES } from "../mcp/tools.ts";
import { baseUrlOf, type OAuthServer } from "../oauth/index.ts";
import { registerOAuthRoutes } from "./routes/oauth.ts";
import { createUiRouter } from "../ui/router.ts";
import type { DashboardSessions } from "../ui/sessions.ts";

/** What the /v1 API serves from. */
export interface ApiServices {
  db: Db;
  authenticators: Authenticator[];
  repositories: RepositoryService;
  envVars: EnvVarService;
  runs: RunService;
  /** Installed environments: the account's cache (/v1/environments) and the archive doors pods use (/internal/environments). */
  environments: EnvironmentService;
  /** Run outputs: /v1/runs/{run_id}/outputs and the upload door run pods use (/internal/runs/{run_id}/outputs). Absent: neither is served. */
  outputs?: OutputService;
  /** Warm pools: the door pool pods take their assignment from (/internal/pool/*). Absent: not served. */
  pools?: PoolService;
  logHub: LogHub;
  /** The account's runs as they change (GET /v1/runs/events). Absent: documented, not served (the route declarations' tests). */
  runFeed?: RunFeed;
  analyses: AnalysisService;
  /** The log hub over analyses' logs. */
  analysisLogHub: LogHub;
  /** The git endpoint (/git/) that workloads' checkouts fetch from. */
  checkout: CheckoutService;
  /** Code-host integrations (the GitHub App); answers 503 itself when none is configured. */
  integrations: IntegrationService;
  /** GitHub webhook intake and the deliveries list. */
  webhooks: WebhookService;
  /** Accounts' notification endpoints (outgoing webhooks) and their deliveries. */
  notifications: NotificationService;
  /** The OAuth 2.0 authorization server (src/oauth/): /.well-known/*, /oauth/*, /v1/oauth/*. */
  oauth: OAuthServer;
  /** The dashboard's sessions (src/ui/): /ui is served, and /v1 accepts the session cookie with CSRF protection. */
  dashboard?: DashboardSessions;
}

/**
 * Every /v1 operation, in one place: the server serves what this registers and
 * the OpenAPI document describes the same list (the lint and schema tests
 * register it with no services: registering only stores the declarations).
 */
export function registerApiRoutes(routes: Routes, s: ApiServices): void {
  registerKeyRoutes(routes, s.db);
  registerRepositoryRoutes(routes, s.db, s.repositories);
  registerEnvVarRoutes(routes, s.db, s.envVars);
  registerRunRoutes(routes, s.db, s.runs, s.logHub, s.outputs, s.runFeed);
  if (s.outputs) registerOutputRoutes(routes, s.db, s.outputs);
  registerEnvironmentRoutes(routes, s.db, s.environments);
  registerAnalysisRoutes(routes, s.db, s.analyses, s.analysisLogHub);
  registerIntegrationRoutes(routes, s.db, s.integrations);
  registerWebhookRoutes(routes, s.db, s.webhooks);
  registerNotificationRoutes(routes, s.db, s.notifications);
  registerOAuthRoutes(routes, s.oauth);
}

/** Every /v1 operation declared, with no service behind it: what the OpenAPI document, its tests and the SDKs are made from. */
export function documentedRoutes(): Routes {
  const routes = new Routes(new Router(), new OpenAPIRegistry());
  registerApiRoutes(routes, { outputs: {} } as unknown as ApiServices);
  return routes;
}

export interface AppDeps {
  logger: Logger;
  version: string;
  /** The process's metrics registry (the controller's counters are on it too); a new one when absent. */
  metrics?: Registry;
  /** null in a process that runs only the controller: it serves health, readiness and metrics, and no /v1 route. */
  api: ApiServices | null;
  readiness: ReadinessCheck[];
  http: { bodyLimitBytes: number; trustProxy: boolean };
  /** POST /v1/webhooks/github's limits (src/api/webhook-body.ts); the defaults when absent. */
  webhookLimits?: WebhookIntakeLimits;
  /** `authFailures`: failed authentications per client address and window; 0 disables. `oauth`: requests per address and window on /oauth/token, /oauth/register and sign-in, each (default 30; 0 disables). */
  rateLimit: { requests: number; windowSeconds: number; authFailures: number; oauth?: number };
  /** POST /mcp's limits (config.mcp); the defaults when absent. */
  mcp?: McpLimits;
  /** CODEPLANE_PUBLIC_URL: the base URL; null or absent: derived from each request (src/oauth/base-url.ts). */
  publicUrl?: string | null;
  isShuttingDown?: () => boolean;
  /**
   * Listeners besides the main one: `git` serves only /git/ (what run pods may
   * reach, so nothing else is exposed to them), `metrics` serves /metrics,
   * which the main listener then no longer does.
   */
  listeners?: { git: boolean; metrics: boolean };
}

/** One Koa app per listener. */
export interface Apps {
  main: Koa;
  git: Koa | null;
  metrics: Koa | null;
}

export function createApps(deps: AppDeps): Apps {
  const metrics = createHttpMetrics(deps.metrics);
  const separate = deps.listeners ?? { git: false, metrics: false };
  return {
    main: createMainApp(deps, metrics, !separate.metrics),
    git:
      separate.git && deps.api
        ? createSideApp(deps, metrics, (r) => {
            registerGitRoutes(r, deps.api!.checkout);
            registerEnvironmentArchiveRoutes(r, deps.api!.db, deps.api!.environments);
            if (deps.api!.outputs) registerOutputUploadRoutes(r, deps.api!.db, deps.api!.outputs);
            if (deps.api!.pools) registerPoolRoutes(r, deps.api!.db, deps.api!.pools);
          })
        : null,
    metrics: separate.metrics ? createSideApp(deps, metrics, (r) => registerMetricsRoute(r, metrics.registry)) : null,
  };
}

/** The main listener's app alone (tests that need no side listener). */
export function createApp(deps: AppDeps): Koa {
  return createApps({ ...deps, listeners: { git: false, metrics: false } }).main;
}

/** A listener with one purpose: its routes, /healthz, and the usual request handling. */
function createSideApp(deps: AppDeps, metrics: HttpMetrics, register: (router: Router) => void): Koa {
  const app = new Koa({ proxy: deps.http.trustProxy, maxIpsCount: 1 });
  app.silent = true;
  const router = new Router();
  router.get("/healthz", (ctx) => {
    ctx.body = { status: "ok" };
  });
  register(router);
  app.use(requestContext(deps.logger, metrics));
  app.use(securityHeaders());
  app.use(errorHandler(deps.logger));
  app.use(allowedMethods([router]));
  app.use(router.routes());
  return app;
}

function createMainApp(deps: AppDeps, metrics: HttpMetrics, serveMetrics: boolean): Koa {
  // Behind a trusted proxy the client address is the one that proxy saw: the last
  // X-Forwarded-For entry (maxIpsCount 1), not the first, which the client writes itself.
  const app = new Koa({ proxy: deps.http.trustProxy, maxIpsCount: 1 });
  app.silent = true; // errors are logged by errorHandler, with the request id

  const api = new Router();
  // Each route reads its body itself, after authentication, rate limits and its scope check.
  const readBody = koaBody({
    json: true,
    jsonStrict: true,
    // Every JSON media type the routes accept (route.ts: application/json and any application/*+json, such as
    // application/merge-patch+json), so none passes the content-type check unparsed and reads as a missing body.
    jsonTypes: ["application/json", "application/*+json"],
    jsonLimit: deps.http.bodyLimitBytes,
    multipart: false,
    urlencoded: false,
    text: false,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
  });
  const routes = new Routes(api, new OpenAPIRegistry(), readBody);
  const s = deps.api;
  if (s) registerApiRoutes(routes, s);
  // Webhooks are signed, not bearer-authenticated: served ahead of the /v1 authentication and rate limits.
  const hooks = new Router();
  // One budget of failed authentications per address: forged webhook signatures spend the same one as bad API keys.
  const failures = failedAuthLimit({ failures: deps.rateLimit.authFailures, windowSeconds: deps.rateLimit.windowSeconds });
  const webhookLimits = deps.webhookLimits ?? DEFAULT_WEBHOOK_LIMITS;
  if (s)
    registerWebhookIntake(hooks, routes, s.db, s.webhooks, {
      limits: webhookLimits,
      inflight: new InflightBytes(webhookLimits.maxInflightBytes, metrics.registry),
      failures,
      windowSeconds: deps.rateLimit.windowSeconds,
    });
  // The git endpoint authenticates with checkout tokens, not API keys: outside /v1 and its limits.
  const git = new Router();
  if (s) {
    registerGitRoutes(git, s.checkout);
    registerEnvironmentArchiveRoutes(git, s.db, s.environments);
    if (s.outputs) registerOutputUploadRoutes(git, s.db, s.outputs);
    if (s.pools) registerPoolRoutes(git, s.db, s.pools);
  }
  // MCP (src/mcp/): authenticated and rate-limited like /v1, below.
  const mcp = new Router({ sensitive: true, strict: true });
  if (s)
    registerMcpRoute(mcp, {
      services: s,
      version: deps.version,
      logger: deps.logger,
      bodyLimitBytes: deps.http.bodyLimitBytes,
      isShuttingDown: deps.isShuttingDown ?? (() => false),
      limits: deps.mcp ?? DEFAULT_MCP_LIMITS,
    });

  // OAuth (src/oauth/): discovery and /oauth/*, unversioned, outside /v1's authentication; their own per-address limits.
  const oauthLimit = () => rateLimit({ requests: deps.rateLimit.oauth ?? 30, windowSeconds: deps.rateLimit.windowSeconds });
  const oauth = s
    ? s.oauth.router({
        token: oauthLimit(),
        register: oauthLimit(),
        signIn: oauthLimit(),
        revoke: oauthLimit(),
        introspect: oauthLimit(),
        authorize: oauthLimit(),
      })
    : null;

  // The dashboard (src/ui/): its shell, modules and sign-in; everything else it does goes through /v1.
  const ui = s?.dashboard ? createUiRouter({ sessions: s.dashboard, signIn: s.oauth, signInLimit: oauthLimit() }) : null;

  const ops = new Router();
  registerOpsRoutes(ops, {
    checks: deps.readiness,
    metrics: serveMetrics ? metrics.registry : null,
    openapi: s ? () => buildOpenApiDocument(routes.registry, deps.version) : null,
    logger: deps.logger,
    isShuttingDown: deps.isShuttingDown ?? (() => false),
  });

  app.use(requestContext(deps.logger, metrics));
  app.use(securityHeaders());
  // The base URL ({base_url}): the OAuth issuer and audience, and where 401s point (WWW-Authenticate resource_metadata).
  const publicUrl = deps.publicUrl ?? null;
  app.use((ctx, next) => {
    ctx.state.baseUrl = baseUrlOf(ctx, publicUrl);
    return next();
  });
  app.use(errorHandler(deps.logger));
  // A known path with a method it does not serve (TRACE and CONNECT included): 405 with Allow.
  app.use(allowedMethods(s && oauth ? [ops, git, hooks, oauth, ...(ui ? [ui] : []), api, mcp] : [ops]));
  if (!s) {
    app.use(gatedRoutes(ops));
    return app;
  }
  // In this order, each asked only about the paths it could match (router-gate.ts).
  app.use(gatedRouterChain([ops, git, hooks, ...(oauth ? [oauth] : []), ...(ui ? [ui] : [])]));
  // /mcp's challenges name the scopes an MCP client should ask for (src/mcp/tools.ts).
  const auth = authenticate(s.authenticators, failures, (path) => (path === "/mcp" ? MCP_CHALLENGE_SCOPES.join(" ") : undefined));
  const limit = rateLimit(deps.rateLimit);
  const dashboard = s.dashboard;
  const session = dashboard ? authenticateSession((cookie, baseUrl) => dashboard.resolve(cookie, baseUrl)) : null;
  app.use((ctx, next) => {
    const path = ctx.path;
    if (!path.startsWith("/v1/") && path !== "/mcp") return next();
    // The session cookie is a /v1 credential (the dashboard's), never one for /mcp.
    const limited = () => limit(ctx, next);
    return auth(ctx, session && path !== "/mcp" ? () => session(ctx, limited) : limited);
  });
  app.use(gatedRoutes(api));
  app.use(gatedRoutes(mcp));
  return app;
}
