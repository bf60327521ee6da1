import { toWebRequest } from "@modelcontextprotocol/node";
import { createMcpHandler, type AuthInfo } from "@modelcontextprotocol/server";
import type { Context } from "koa";
import type { Principal } from "../domain/auth/scopes.ts";
import type { Logger } from "../logger.ts";
import { buildMcpServer, callerOf, type McpCaller, type McpServerDeps } from "./server.ts";

export interface McpEndpointOptions extends McpServerDeps {
  logger: Logger;
  /** The largest request body read (CODEPLANE_BODY_LIMIT_BYTES); a larger one is a 413. */
  bodyLimitBytes: number;
}

export interface McpRequest {
  principal: Principal;
  log: Logger;
  /** The RFC 9728 document a scope challenge points at; undefined when the request gives no usable base URL. */
  resourceMetadataUrl: string | undefined;
}

/**
 * POST /mcp, stateless Streamable HTTP: the current MCP revision (one
 * self-contained request per exchange) and 2025-era clients (`initialize`,
 * then each request on its own POST, no session). Nothing is kept between
 * requests, so any replica serves any request. The caller is authenticated,
 * rate-limited and given here by the API layer; the body is read only then.
 */
export function mcpEndpoint(opts: McpEndpointOptions): (ctx: Context, req: McpRequest) => Promise<void> {
  const handler = createMcpHandler((rc) => buildMcpServer(opts, callerOf(rc.authInfo)), {
    legacy: "stateless",
    maxRequestBodySize: opts.bodyLimitBytes,
    onerror: (err) => opts.logger.debug({ err }, "MCP request refused"),
  });
  return async (ctx, req) => {
    // The client going away before the answer cancels the call (and any wait in it).
    const gone = new AbortController();
    ctx.res.once("close", () => {
      if (!ctx.res.writableFinished) gone.abort();
    });
    let request: Request;
    try {
      request = await toWebRequest(ctx.req, undefined, { signal: gone.signal, maxRequestBodySize: opts.bodyLimitBytes });
    } catch (err) {
      if ((err as { status?: unknown }).status === 413) ctx.throw(413, "Request body too large");
      throw err;
    }
    const caller: McpCaller = { principal: req.principal, log: req.log };
    const authInfo: AuthInfo = {
      // Only the credential's id: the secret itself goes no further than the authenticator.
      token: req.principal.credential.id,
      clientId: req.principal.credential.id,
      scopes: [...req.principal.scopes],
      ...(req.principal.credential.expiresAt && { expiresAt: Math.floor(req.principal.credential.expiresAt.getTime() / 1000) }),
      ...(req.resourceMetadataUrl && { resourceMetadataUrl: req.resourceMetadataUrl }),
      extra: { caller },
    };
    const response = await handler.fetch(request, { authInfo });
    ctx.body = response;
    if (!response.headers.has("content-type")) ctx.remove("Content-Type");
  };
}
