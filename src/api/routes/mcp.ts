import type Router from "@koa/router";
import type { Principal } from "../../domain/auth/scopes.ts";
import type { Logger } from "../../logger.ts";
import { mcpEndpoint, type McpLimits } from "../../mcp/endpoint.ts";
import { MCP_CHALLENGE_SCOPES, type McpServices } from "../../mcp/tools.ts";
import { resourceMetadataUrl } from "../../oauth/index.ts";
import { notAuthenticated } from "../http-error.ts";
import type { RateLimitCharge } from "../middleware/rate-limit.ts";

export interface McpRouteOptions {
  services: McpServices;
  version: string;
  logger: Logger;
  bodyLimitBytes: number;
  isShuttingDown: () => boolean;
  limits: McpLimits;
}

/**
 * POST /mcp (src/mcp/). It runs behind the same authentication and rate
 * limits as /v1 (app.ts), so an OAuth access token works as an API key does
 * (its audience must be the base URL); a request without a credential is
 * refused here with the same 401 as /v1 (naming the protected-resource
 * metadata, where an MCP client starts OAuth), before its body is read. GET and DELETE, which a
 * stateless server does not serve, are 405 with Allow: POST.
 */
export function registerMcpRoute(router: Router, opts: McpRouteOptions): void {
  const serve = mcpEndpoint({
    services: opts.services,
    version: opts.version,
    logger: opts.logger,
    bodyLimitBytes: opts.bodyLimitBytes,
    stopping: opts.isShuttingDown,
    limits: opts.limits,
  });
  router.post("/mcp", async (ctx) => {
    const principal = ctx.state.principal as Principal | undefined;
    // The base URL (app.ts): where the 401's and a scope challenge's resource_metadata point.
    const baseUrl = (ctx.state.baseUrl as string | null | undefined) ?? null;
    // The scope names what an MCP client should ask for first (MCP's scope selection): the read-only tools' scopes.
    if (!principal) throw notAuthenticated(baseUrl, false, MCP_CHALLENGE_SCOPES.join(" "));
    // Set by the rate limit (app.ts); absent when CODEPLANE_RATE_LIMIT_REQUESTS is 0.
    const limit = ctx.state.rateLimit as RateLimitCharge | undefined;
    await serve(ctx, {
      principal,
      log: ctx.state.log as Logger,
      resourceMetadataUrl: baseUrl ? resourceMetadataUrl(baseUrl) : undefined,
      charge: async (points) => limit?.charge(points),
    });
  });
}
