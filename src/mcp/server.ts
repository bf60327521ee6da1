import { McpServer, type AuthInfo, type CallToolResult, type ScopeChallengeHandler } from "@modelcontextprotocol/server";
import type { Principal, Scope } from "../domain/auth/scopes.ts";
import { DomainError, DomainValidationError } from "../domain/errors.ts";
import { classifyInfrastructureError } from "../domain/infrastructure-errors.ts";
import type { Logger } from "../logger.ts";
import { validationText } from "./arguments.ts";
import { resultOf, toolErrorResult } from "./result.ts";
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

const text = toolErrorResult;

/**
 * A tool error with the message the REST API would put in `detail`, a
 * validation failure naming the tool's own arguments (`experiment_id`, not
 * the REST API's `body.analyzed_experiment`). Anything that is not a domain
 * error is logged and answered without details, like a 500.
 */
export function toolError(err: unknown, log: Logger, tool: string, renames?: Readonly<Record<string, string>>): CallToolResult {
  if (err instanceof DomainError) return text(err.message);
  if (err instanceof DomainValidationError) return text(validationText(err.issues, renames));
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
 * An OAuth access token without the tool's scope is answered 403 with an
 * `insufficient_scope` challenge naming it (MCP's step-up authorization), as
 * the REST route answers 403: the client can ask for the scope and retry.
 * The challenge lists the scopes already held as well, so that a client that
 * re-authorises with the challenge's scopes alone (what 2025-era clients do;
 * the current revision has clients add them to what they asked before) does
 * not lose them. An API key gets no challenge: it cannot gain a scope, and
 * clients that cannot step up drop the call (or the session) on a 403, so
 * the call is a tool error instead (missingScope).
 */
const scopeChallenge =
  (scope: Scope, principal: Principal): ScopeChallengeHandler =>
  () =>
    principal.scopes.has(scope) || principal.credential.kind !== "oauth"
      ? undefined
      : { scopes: [...new Set<string>([...principal.scopes, scope])] as [string, ...string[]], errorDescription: `Missing scope: ${scope}` };

/** The tool error of a call its credential lacks the scope of (an API key's, as an OAuth token's is challenged first). */
export const missingScope = (scope: Scope, principal: Principal): CallToolResult =>
  text(
    principal.credential.kind === "api_key"
      ? `Missing scope: ${scope}. This API key does not have it, and a key's scopes cannot change: use a key created with ${scope} (POST /v1/auth/keys).`
      : `Missing scope: ${scope}`,
  );

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
      annotations: { title: t.title, ...t.annotations },
      scopeChallenge: scopeChallenge(t.scope, principal),
    },
    async (args: unknown, ctx): Promise<CallToolResult> => {
      // An OAuth token's challenge above answers first; an API key's missing scope is answered here, as a tool error.
      if (!principal.scopes.has(t.scope)) {
        log.info({ is_error: true, missing_scope: t.scope }, "MCP tool call");
        return missingScope(t.scope, principal);
      }
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
        result = toolError(err, log, t.name, t.renames);
      }
      // Which tool a POST /mcp was, for the operator (the request line says only /mcp); never its arguments.
      log.info({ duration_ms: Date.now() - started, is_error: result.isError === true }, "MCP tool call");
      return result;
    },
  );
}
