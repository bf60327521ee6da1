import { McpServer, type AuthInfo, type CallToolResult, type ScopeChallengeHandler } from "@modelcontextprotocol/server";
import type { Principal, Scope } from "../domain/auth/scopes.ts";
import { DomainError, DomainValidationError } from "../domain/errors.ts";
import { classifyInfrastructureError } from "../domain/infrastructure-errors.ts";
import type { Logger } from "../logger.ts";
import { TOOLS, type McpServices, type ToolDefinition } from "./tools.ts";
import type { SharedReads, WaitSlots } from "./wait.ts";

/** Who is calling, as the API layer authenticated them; carried to the per-request server in AuthInfo.extra. */
export interface McpCaller {
  principal: Principal;
  log: Logger;
}

export const callerOf = (auth: AuthInfo | undefined): McpCaller => {
  const caller = auth?.extra?.caller as McpCaller | undefined;
  // The endpoint never dispatches without one; a server built without a caller must not serve anything.
  if (!caller) throw new Error("MCP request without an authenticated caller");
  return caller;
};

const SERVER_INSTRUCTIONS =
  "codeplane runs code from git repositories on Kubernetes. Register a repository (or list them), browse its files, " +
  "analyse a commit to learn what can be run there, then run an experiment or a command and read its output. " +
  "Runs and analyses take a while: get_run and get_analysis take `wait_seconds`, and get_run_logs reads output incrementally with `after`.";

const text = (s: string): CallToolResult => ({ content: [{ type: "text", text: s }], isError: true });

/**
 * A tool error with the message the REST API would put in `detail`. Anything
 * that is not a domain error is logged and answered without details, like a 500.
 */
export function toolError(err: unknown, log: Logger, tool: string): CallToolResult {
  if (err instanceof DomainError) return text(err.message);
  if (err instanceof DomainValidationError) return text(`Validation failed: ${err.message}`);
  // A database, Kubernetes or network failure under load says what the REST API's 503/409 says.
  const infrastructure = classifyInfrastructureError(err);
  if (infrastructure) {
    log.warn({ err, tool, answer: infrastructure.message }, "MCP tool: infrastructure failure");
    return text(infrastructure.message);
  }
  log.error({ err, tool }, "MCP tool failed");
  return text("Internal Server Error");
}

/**
 * A credential without the tool's scope is answered 403 with an
 * `insufficient_scope` challenge naming it (MCP's step-up authorization), as
 * the REST route answers 403: an OAuth client can ask for the scope and retry.
 * The challenge lists the scopes already held as well, so re-authorising does
 * not lose them.
 */
const scopeChallenge =
  (scope: Scope, principal: Principal): ScopeChallengeHandler =>
  () =>
    principal.scopes.has(scope)
      ? undefined
      : { scopes: [...new Set<string>([...principal.scopes, scope])] as [string, ...string[]], errorDescription: `Missing scope: ${scope}` };

export interface McpServerDeps {
  services: McpServices;
  version: string;
  /** The process is shutting down: waits end early. */
  stopping: () => boolean;
  /** The waits each credential holds at once (CODEPLANE_MCP_MAX_WAITS_PER_KEY), shared by every request of the process. */
  waits: WaitSlots;
  /** The largest tool result, as JSON (CODEPLANE_MCP_MAX_RESULT_BYTES). */
  maxResultBytes: number;
  /** Reads in flight, shared by the waits of every request of the process. */
  shared: SharedReads;
}

/**
 * The result of a tool call: its JSON as text (for clients that read only
 * content) and as structured content. A result over the limit is never sent:
 * the tools that can return much (list_files, get_run_logs) size their pages
 * to the limit first, so this answers only what they could not shrink.
 */
function resultOf(out: unknown, maxBytes: number): CallToolResult {
  const json = JSON.stringify(out);
  if (Buffer.byteLength(json) > maxBytes) {
    return text(`The result is larger than the server's limit of ${maxBytes} bytes (CODEPLANE_MCP_MAX_RESULT_BYTES): ask for less, e.g. a smaller \`limit\``);
  }
  return { content: [{ type: "text", text: json }], structuredContent: out };
}

/** One server per request (stateless): every tool, bound to this caller. */
export function buildMcpServer(deps: McpServerDeps, caller: McpCaller): McpServer {
  const server = new McpServer(
    { name: "codeplane", title: "codeplane", version: deps.version },
    { instructions: SERVER_INSTRUCTIONS, capabilities: { tools: {} } },
  );
  for (const t of TOOLS) register(server, deps, caller, t);
  return server;
}

function register(server: McpServer, deps: McpServerDeps, caller: McpCaller, t: ToolDefinition): void {
  const { principal } = caller;
  const log = caller.log.child({ tool: t.name });
  server.registerTool(
    t.name,
    {
      title: t.title,
      description: `${t.description} Needs the \`${t.scope}\` scope.`,
      inputSchema: t.input,
      outputSchema: t.output,
      annotations: { title: t.title, readOnlyHint: t.readOnly, destructiveHint: false, idempotentHint: t.idempotent, openWorldHint: false },
      scopeChallenge: scopeChallenge(t.scope, principal),
    },
    async (args: unknown, ctx): Promise<CallToolResult> => {
      // The challenge above answers first; this keeps a tool closed should it ever be bypassed.
      if (!principal.scopes.has(t.scope)) return text(`Missing scope: ${t.scope}`);
      const started = Date.now();
      let result: CallToolResult;
      try {
        const out = await t.run(deps.services, args as never, {
          principal,
          signal: ctx.mcpReq.signal,
          stopping: deps.stopping,
          acquireWait: () => deps.waits.tryAcquire(principal.credential.id),
          maxResultBytes: deps.maxResultBytes,
          shared: deps.shared,
        });
        result = resultOf(out, deps.maxResultBytes);
      } catch (err) {
        result = toolError(err, log, t.name);
      }
      // Which tool a POST /mcp was, for the operator (the request line says only /mcp); never its arguments.
      log.info({ duration_ms: Date.now() - started, is_error: result.isError === true }, "MCP tool call");
      return result;
    },
  );
}
