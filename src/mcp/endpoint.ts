import { toWebRequest } from "@modelcontextprotocol/node";
import { createMcpHandler, type AuthInfo } from "@modelcontextprotocol/server";
import type { Context } from "koa";
import type { Principal } from "../domain/auth/scopes.ts";
import { DomainValidationError } from "../domain/errors.ts";
import type { Logger } from "../logger.ts";
import { buildMcpServer, callerOf, type McpCaller, type McpServerDeps } from "./server.ts";
import { SharedReads, WaitSlots } from "./wait.ts";

export interface McpLimits {
  /** JSON-RPC messages in one POST (CODEPLANE_MCP_MAX_BATCH_MESSAGES); more: 422. */
  maxBatchMessages: number;
  /** Waits each credential holds at once in this process (CODEPLANE_MCP_MAX_WAITS_PER_KEY). */
  maxWaitsPerKey: number;
  /** The largest tool result, as JSON (CODEPLANE_MCP_MAX_RESULT_BYTES). */
  maxResultBytes: number;
}

export const DEFAULT_MCP_LIMITS: McpLimits = { maxBatchMessages: 10, maxWaitsPerKey: 4, maxResultBytes: 1024 * 1024 };

export interface McpEndpointOptions extends Omit<McpServerDeps, "waits" | "maxResultBytes" | "shared"> {
  logger: Logger;
  /** The largest request body read (CODEPLANE_BODY_LIMIT_BYTES); a larger one is a 413. */
  bodyLimitBytes: number;
  limits: McpLimits;
}

export interface McpRequest {
  principal: Principal;
  log: Logger;
  /** The RFC 9728 document a scope challenge points at; undefined when the request gives no usable base URL. */
  resourceMetadataUrl: string | undefined;
  /**
   * Charges the caller's rate limit `points` more than the request's own one
   * point; throws the API's 429 (with Retry-After), charging nothing, when
   * the credential cannot afford them.
   */
  charge: (points: number) => Promise<void>;
}

/** The JSON-RPC messages of a body: a batch's length, else one (what is not JSON is the SDK's to refuse). */
function messagesIn(body: string): { parsed: unknown; count: number } | null {
  try {
    const parsed: unknown = JSON.parse(body);
    return { parsed, count: Array.isArray(parsed) ? Math.max(1, parsed.length) : 1 };
  } catch {
    return null;
  }
}

const tooManyMessages = (max: number) =>
  new DomainValidationError([{ loc: ["body"], msg: `A JSON-RPC batch holds at most ${max} messages`, type: "too_long" }]);

/**
 * POST /mcp, stateless Streamable HTTP: the current MCP revision (one
 * self-contained request per exchange) and 2025-era clients (`initialize`,
 * then each request on its own POST, no session). Nothing is kept between
 * requests, so any replica serves any request. The caller is authenticated,
 * rate-limited and given here by the API layer; the body is read only then.
 */
export function mcpEndpoint(opts: McpEndpointOptions): (ctx: Context, req: McpRequest) => Promise<void> {
  const deps: McpServerDeps = {
    ...opts,
    waits: new WaitSlots(opts.limits.maxWaitsPerKey),
    maxResultBytes: opts.limits.maxResultBytes,
    shared: new SharedReads(),
  };
  const handler = createMcpHandler((rc) => buildMcpServer(deps, callerOf(rc.authInfo)), {
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
    let body: string;
    try {
      request = await toWebRequest(ctx.req, undefined, { signal: gone.signal, maxRequestBodySize: opts.bodyLimitBytes });
      // Read here (bounded as above) to count its messages before any runs; the SDK gets it parsed.
      body = await request.text();
    } catch (err) {
      if ((err as { status?: unknown }).status === 413) ctx.throw(413, "Request body too large");
      throw err;
    }
    const messages = messagesIn(body);
    // Every message is a unit of work: a batch of N costs N points, all charged before the first runs.
    if (messages && messages.count > opts.limits.maxBatchMessages) throw tooManyMessages(opts.limits.maxBatchMessages);
    if (messages) await req.charge(messages.count - 1);
    // A body that is not JSON goes to the SDK as it came, for its own parse error.
    const forward = new Request(request.url, { method: request.method, headers: request.headers, body, signal: gone.signal });
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
    const response = await handler.fetch(forward, { authInfo, ...(messages && { parsedBody: messages.parsed }) });
    ctx.body = response;
    if (!response.headers.has("content-type")) ctx.remove("Content-Type");
  };
}
