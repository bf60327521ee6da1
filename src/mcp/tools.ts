import { z } from "zod";
import type { Db } from "../db/database.ts";
import type { AnalysisService } from "../domain/analyses/analyses.ts";
import { analysisSchema, createAnalysisSchema } from "../domain/analyses/analyses.schemas.ts";
import type { Principal, Scope } from "../domain/auth/scopes.ts";
import type { EnvVarService } from "../domain/env-vars/env-vars.ts";
import { createEnvVarSchema, envVarSchema } from "../domain/env-vars/env-vars.schemas.ts";
import { normalizeRepoPath } from "../domain/repositories/repo-path.ts";
import type { RepositoryService } from "../domain/repositories/repositories.ts";
import {
  createRepositorySchema,
  fileContentSchema,
  filesQuerySchema,
  fileQuerySchema,
  repositorySchema,
  treeSchema,
} from "../domain/repositories/repositories.schemas.ts";
import { readRunLogAfter } from "../domain/runs/run-logs.ts";
import type { RunService } from "../domain/runs/runs.ts";
import { createRunSchema, runSchema, runStatusEnum } from "../domain/runs/runs.schemas.ts";
import { pageQuerySchema } from "../domain/shared/pagination.ts";
import type { LogHub } from "../logs/hub.ts";
import { pieceOf, READ_FILE_DEFAULT_BYTES, type FilePiece } from "./read-file.ts";
import { WithText, withTextBytes } from "./result.ts";
import { followLines, isTerminal, MAX_WAIT_SECONDS, readUntilChanged, type SharedReads, type WaitControl } from "./wait.ts";

// The MCP tools: each one calls the service its REST route calls, checks the
// same scope, and takes and returns the same zod schemas (copied into plain
// objects, so every tool's JSON schema has an object at its root).

/** What the tools serve from: the /v1 API's services (ApiServices has them all). */
export interface McpServices {
  db: Db;
  repositories: RepositoryService;
  analyses: AnalysisService;
  runs: RunService;
  envVars: EnvVarService;
  /** The log hub over runs' logs (get_run_logs follows it while waiting). */
  logHub: LogHub;
}

/** One tool call's caller and controls. */
export interface ToolCall extends WaitControl {
  principal: Principal;
  /** The largest result the call may return, as JSON (CODEPLANE_MCP_MAX_RESULT_BYTES). */
  maxResultBytes: number;
  /** The process's reads in flight (SharedReads): concurrent waits on one workload share each poll's query. */
  shared: SharedReads;
}

/**
 * MCP's tool annotations, every one stated (the spec's defaults, when one is
 * left out, are the cautious ones: not read-only, destructive, not
 * idempotent, open world). Hints for a client deciding what to confirm with
 * its user; they do not replace the scope checks.
 */
export interface ToolAnnotations {
  /** Changes nothing anywhere. */
  readOnlyHint: boolean;
  /** May change or remove what exists (rather than only add), or do what codeplane cannot bound (run code). Only meaningful when not read-only. */
  destructiveHint: boolean;
  /** A second call with the same arguments has no further effect. */
  idempotentHint: boolean;
  /** Reaches beyond codeplane's own state: fetches from a code host, or runs code that may reach the network. */
  openWorldHint: boolean;
}

export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  /** The scope of the matching REST route. */
  scope: Scope;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  /** Fields the service names as the REST API does (`analyzed_experiment`) that this tool takes under another name (`experiment_id`). */
  renames?: Readonly<Record<string, string>>;
  run(services: McpServices, args: z.output<I>, call: ToolCall): Promise<z.input<O> | WithText<z.input<O>>>;
}

/** The four annotations of each kind of tool (see ToolAnnotations); the table in docs/users/mcp.md says why each tool has its own. */
const READS: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
/** Reads of a repository's content: its mirror is fetched from the code host when stale, and the content is the repository's, not codeplane's. */
const READS_CODE_HOST: ToolAnnotations = { ...READS, openWorldHint: true };

const tool = <I extends z.ZodObject, O extends z.ZodObject>(t: ToolDefinition<I, O>) => t as unknown as ToolDefinition;

/** A schema's fields in a new object schema: no `id` of its own, so its JSON schema is an object, not a $ref. */
const fieldsOf = <S extends z.ZodObject>(s: S) => z.object({ ...s.shape }) as unknown as z.ZodObject<S["shape"]>;
const page = <T extends z.ZodType>(item: T) =>
  z.object({ items: z.array(item), next_cursor: z.string().nullable().meta({ description: "Pass as `cursor` for the next page; null on the last." }) });

const repositoryId = z.uuid().meta({ description: "A repository's `id` (list_repositories)." });
const commitHash = z.string().min(1).max(255).meta({ description: "A full or short commit hash, or a branch or tag name, resolved to the full hash." });
const runId = z.uuid().meta({ description: "A run's `run_id` (from run_experiment or run_command)." });
const waitSeconds = (what: string) =>
  z
    .int()
    .min(0)
    .max(MAX_WAIT_SECONDS)
    .default(0)
    .meta({ description: `Wait up to this many seconds (0 to ${MAX_WAIT_SECONDS}, default 0) for ${what}, then answer with the state at that moment.` });
const runOptions = {
  compute_type: createRunSchema.shape.compute_type,
  timeout_seconds: createRunSchema.shape.timeout_seconds,
  retries: createRunSchema.shape.retries,
};

const LOG_LIMIT_MAX = 5000;
const LOG_BYTES_MAX = 512 * 1024;

const logLineSchema = z.object({
  seq: z.int().meta({ description: "The line's position in the run's output (stdout and stderr share it); pass the last one as `after`." }),
  stream: z.enum(["stdout", "stderr"]),
  ts: z.string().meta({ description: "When the line was written (RFC 3339 UTC)." }),
  line: z.string().meta({ description: "The line without its newline." }),
});

type ListFilesArgs = z.output<typeof filesQuerySchema> & { repository_id: string };

/**
 * A directory page whose JSON fits the result limit: the git reader stops
 * after `limit` entries (the files of a 300k-entry directory are not all
 * read), and a page still too large (long names) is read again shorter, sized
 * from the first one, so the cursor comes from git's own names. Directories
 * always end with a next_cursor when cut, as more follows.
 */
async function listFilesWithin(s: McpServices, args: ListFilesArgs, c: ToolCall) {
  const path = normalizeRepoPath(args.path ?? "", ["path"]);
  let limit = args.limit;
  for (;;) {
    const tree = await s.repositories.tree(s.db, c.principal.accountId, args.repository_id, args.ref, path, { limit, cursor: args.cursor });
    const result = { ...tree, truncated: limit < args.limit };
    const size = Buffer.byteLength(JSON.stringify(result));
    if (size <= c.maxResultBytes || tree.entries.length <= 1) return result;
    const entriesSize = Buffer.byteLength(JSON.stringify(tree.entries));
    // What the entries may take: the rest of the result stays, and a shorter page's cursor may be longer (at most 8 KiB).
    const room = Math.max(0, c.maxResultBytes - (size - entriesSize) - 8192);
    limit = Math.max(1, Math.min(tree.entries.length - 1, Math.floor((tree.entries.length * room) / entriesSize)));
  }
}

export const TOOLS: readonly ToolDefinition[] = [
  tool({
    name: "list_repositories",
    title: "List repositories",
    description: "The account's registered repositories, newest first, a page at a time (GET /v1/repositories).",
    scope: "repositories:read",
    input: z.strictObject({ ...pageQuerySchema.shape }),
    output: page(repositorySchema),
    annotations: READS,
    run: (s, args, c) => s.repositories.list(s.db, c.principal.accountId, args),
  }),
  tool({
    name: "register_repository",
    title: "Register a repository",
    description:
      "Registers a git repository by its clone URL (POST /v1/repositories); codeplane fetches it once to check that it is readable and learn its default branch. Returns the repository; its `id` is what the other tools take.",
    scope: "repositories:write",
    input: z.strictObject({ ...createRepositorySchema.shape }),
    output: fieldsOf(repositorySchema),
    // Adds a repository; the same URL again is refused as already registered, changing nothing. It fetches from the code host.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    run: (s, args, c) => s.repositories.create(s.db, c.principal.accountId, args),
  }),
  tool({
    name: "list_files",
    title: "List a directory",
    description:
      "Lists a directory of the repository at a ref (GET /v1/repositories/{id}/files): `ref` a branch, tag or commit (default: the default branch), `path` a directory (default: the root). Directories first. Paginated with `limit` and `cursor`; the cursor pins the commit of the first page.",
    scope: "repositories:read",
    input: z.strictObject({ repository_id: repositoryId, ...filesQuerySchema.shape }),
    output: fieldsOf(treeSchema).extend({
      truncated: z.boolean().meta({
        description:
          "The page holds fewer than `limit` entries because all of them would exceed the server's result size limit; the rest follows at `next_cursor`.",
      }),
    }),
    annotations: READS_CODE_HOST,
    run: (s, args, c) => listFilesWithin(s, args, c),
  }),
  tool({
    name: "read_file",
    title: "Read a file",
    description:
      "Reads a file of the repository at a ref (GET /v1/repositories/{id}/files/{path}), a piece at a time: at most `max_bytes` bytes from byte `offset`. " +
      "The piece comes as a text block of its own (UTF-8 text as is, anything else base64, as `encoding` says), once; the structured result says what it is: " +
      "`size` (the whole file's), `offset` and `length` (the piece's bytes), `truncated` (the file goes on after it) and `next_offset` (pass it as `offset` for the next piece; null when there is none to read).",
    scope: "repositories:read",
    input: z.strictObject({
      repository_id: repositoryId,
      path: z.string().min(1).max(4096).meta({ description: "The file's path from the repository root, e.g. src/main.py." }),
      ...fileQuerySchema.shape,
      offset: z.int().min(0).default(0).meta({
        description: "The first byte to read (0: the start; a `next_offset` of an earlier call). An offset inside a UTF-8 character starts at the next one.",
      }),
      max_bytes: z
        .int()
        .min(1)
        .default(READ_FILE_DEFAULT_BYTES)
        .meta({
          description: `At most this many bytes (default ${READ_FILE_DEFAULT_BYTES / 1024} KiB); fewer when the result would exceed the server's result limit (CODEPLANE_MCP_MAX_RESULT_BYTES, 1 MiB by default), and never a UTF-8 character cut in two.`,
        }),
    }),
    output: z.object({
      commit_hash: fileContentSchema.shape.commit_hash.meta({ description: "The commit the ref resolved to." }),
      path: fileContentSchema.shape.path,
      size: fileContentSchema.shape.size,
      encoding: fileContentSchema.shape.encoding.meta({ description: "How the piece's text block holds its bytes: `utf-8` text as is, or `base64`." }),
      offset: z.int().meta({ description: "The piece's first byte in the file." }),
      length: z.int().meta({ description: "The piece's bytes." }),
      truncated: z.boolean().meta({ description: "The file goes on after this piece." }),
      next_offset: z.int().nullable().meta({
        description:
          "Where the next piece starts (pass it as `offset`); null when nothing more can be read: the end of the file, or, with `truncated` true, the end of what the server reads of a file (CODEPLANE_MAX_FILE_BYTES).",
      }),
    }),
    annotations: READS_CODE_HOST,
    run: async (s, args, c) => {
      const file = await s.repositories.file(s.db, c.principal.accountId, args.repository_id, args.ref, normalizeRepoPath(args.path, ["path"]));
      // What the piece's text may take: the limit, less the rest of the result (its description, twice) with that text empty.
      const room = (piece: FilePiece) => c.maxResultBytes - withTextBytes(new WithText(piece, "")) + 2;
      const { piece, text } = pieceOf(file, args.offset, args.max_bytes, room);
      return new WithText(piece, text);
    },
  }),
  tool({
    name: "start_analysis",
    title: "Analyse a commit",
    description:
      "Starts the analysis of a commit (POST /v1/repositories/{id}/analysis/{commit_hash}): what the repository holds, which experiments can be run and with which parameters, which environment variables the code needs. One analysis per repository and commit: if there is one already, it is returned. Follow it with get_analysis and `wait_seconds`.",
    scope: "analyses:write",
    input: z.strictObject({ repository_id: repositoryId, commit_hash: commitHash, ...createAnalysisSchema.shape }),
    output: fieldsOf(analysisSchema),
    // Adds an analysis, or returns the commit's existing one; the analysis checks the commit out of the code host.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    run: async (s, { repository_id, commit_hash, ...body }, c) =>
      (await s.analyses.create(s.db, c.principal.accountId, repository_id, commit_hash, body)).analysis,
  }),
  tool({
    name: "get_analysis",
    title: "Get a commit's analysis",
    description:
      "The analysis of a commit (GET /v1/repositories/{id}/analysis/{commit_hash}): status, summary, experiments (their `id` is what run_experiment takes), environment variables required and missing. With `wait_seconds`, waits while the analysis is pending or running until its status changes or it ends.",
    scope: "analyses:read",
    input: z.strictObject({ repository_id: repositoryId, commit_hash: commitHash, wait_seconds: waitSeconds("the analysis to complete or change status") }),
    output: fieldsOf(analysisSchema),
    annotations: READS,
    run: async (s, args, c) => {
      const first = await s.analyses.get(s.db, c.principal.accountId, args.repository_id, args.commit_hash);
      if (args.wait_seconds === 0 || isTerminal(first.status)) return first;
      // Later reads name the resolved commit, so a branch that moves meanwhile does not switch analyses.
      let reads = 0;
      const key = `analysis:${c.principal.accountId}:${args.repository_id}:${first.commit_hash}`;
      return readUntilChanged(
        () =>
          reads++ === 0 ? Promise.resolve(first) : c.shared.read(key, () => s.analyses.get(s.db, c.principal.accountId, args.repository_id, first.commit_hash)),
        args.wait_seconds,
        c,
        1000,
      );
    },
  }),
  tool({
    name: "run_experiment",
    title: "Run an experiment",
    description:
      "Runs an experiment found by the commit's completed analysis, as a Kubernetes Job (POST /v1/repositories/{id}/{commit_hash}/runs with `analyzed_experiment`); `parameters` override its defaults. Returns the run; follow it with get_run and get_run_logs.",
    scope: "runs:write",
    input: z.strictObject({
      repository_id: repositoryId,
      commit_hash: commitHash,
      experiment_id: createRunSchema.shape.analyzed_experiment.unwrap().meta({ description: "An experiment `id` from get_analysis." }),
      parameters: createRunSchema.shape.parameters,
      ...runOptions,
    }),
    output: fieldsOf(runSchema),
    // Runs the repository's code with the account's variables (credentials among them, perhaps): what it does is not codeplane's to bound.
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    renames: { analyzed_experiment: "experiment_id" },
    run: (s, { repository_id, commit_hash, experiment_id, ...rest }, c) =>
      s.runs.create(s.db, c.principal.accountId, repository_id, commit_hash, { analyzed_experiment: experiment_id, ...rest }),
  }),
  tool({
    name: "run_command",
    title: "Run a command",
    description:
      "Runs a command (an argv, no shell) in a checkout of the commit, as a Kubernetes Job (POST /v1/repositories/{id}/{commit_hash}/runs with `command`). The account's and repository's environment variables are set. Returns the run; follow it with get_run and get_run_logs.",
    scope: "runs:write",
    input: z.strictObject({ repository_id: repositoryId, commit_hash: commitHash, command: createRunSchema.shape.command.unwrap(), ...runOptions }),
    output: fieldsOf(runSchema),
    // Any command, with the account's variables: as run_experiment.
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    run: (s, { repository_id, commit_hash, ...body }, c) => s.runs.create(s.db, c.principal.accountId, repository_id, commit_hash, body),
  }),
  tool({
    name: "get_run",
    title: "Get a run",
    description:
      "A run's status, exit code and error (GET /v1/runs/{run_id}). Statuses: pending, preprocessing, running, then completed, failed or cancelled. With `wait_seconds`, waits until the status changes or the run ends.",
    scope: "runs:read",
    input: z.strictObject({ run_id: runId, wait_seconds: waitSeconds("the run's status to change") }),
    output: fieldsOf(runSchema),
    annotations: READS,
    run: (s, args, c) => {
      const key = `run:${c.principal.accountId}:${args.run_id}`;
      return readUntilChanged(() => c.shared.read(key, () => s.runs.get(s.db, c.principal.accountId, args.run_id)), args.wait_seconds, c);
    },
  }),
  tool({
    name: "get_run_logs",
    title: "Read a run's output",
    description:
      "A run's output lines after `after` (stdout and stderr interleaved, each with its `seq`), the same lines the log stream (GET /v1/runs/{run_id}/logs/stream) sends. Read incrementally: pass the returned `next_after` as `after` next time. `complete: true` means the run is over and there is nothing more. With `wait_seconds`, waits for new lines when there are none yet.",
    scope: "runs:read",
    input: z.strictObject({
      run_id: runId,
      after: z.int().min(0).default(0).meta({ description: "Return lines with a greater `seq` (0: from the start)." }),
      limit: z
        .int()
        .min(1)
        .max(LOG_LIMIT_MAX)
        .default(1000)
        .meta({ description: `At most this many lines (1 to ${LOG_LIMIT_MAX}, default 1000; fewer when they exceed ${LOG_BYTES_MAX / 1024} KiB).` }),
      wait_seconds: waitSeconds("new lines when there are none yet"),
    }),
    output: z.object({
      run_id: z.uuid(),
      status: runStatusEnum.meta({ description: "The run's status when the lines were read." }),
      lines: z.array(logLineSchema),
      next_after: z.int().meta({ description: "The `seq` of the last line returned (or `after` when none): the next call's `after`." }),
      complete: z.boolean().meta({ description: "The run is over and every line after `after` has been returned: nothing more will come." }),
    }),
    annotations: READS,
    run: async (s, args, c) => {
      // Half the result limit for the lines themselves: each one's seq, stream, time and JSON escaping come on top.
      const read = { limit: args.limit, maxBytes: Math.min(LOG_BYTES_MAX, Math.floor(c.maxResultBytes / 2)) };
      let { lines, complete } = await readRunLogAfter(s.db, c.principal.accountId, args.run_id, args.after, read);
      if (lines.length === 0 && !complete && args.wait_seconds > 0) {
        const followed = await followLines(s.logHub, args.run_id, args.after, { ...read, seconds: args.wait_seconds }, c);
        ({ lines } = followed);
        complete = followed.ended;
      }
      const run = await s.runs.get(s.db, c.principal.accountId, args.run_id);
      return { run_id: run.run_id, status: run.status, lines, next_after: lines.at(-1)?.seq ?? args.after, complete };
    },
  }),
  tool({
    name: "cancel_run",
    title: "Cancel a run",
    description:
      "Stops a run (POST /v1/runs/{run_id}/cancel): answers with the run as it is now; its status becomes `cancelled` within seconds (get_run with `wait_seconds` shows it). A run that already finished is an error.",
    scope: "runs:write",
    input: z.strictObject({ run_id: runId }),
    output: fieldsOf(runSchema),
    // Stops work for good (a cancelled run does not resume); cancelling again changes nothing more.
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    run: (s, args, c) => s.runs.cancel(s.db, c.principal.accountId, args.run_id),
  }),
  tool({
    name: "list_environment_variables",
    title: "List environment variables",
    description:
      "The account's environment variables (GET /v1/environment-variables), or with `repository_id` only that repository's. Secret values are never shown (`value: null`).",
    scope: "env:read",
    input: z.strictObject({ repository_id: createEnvVarSchema.shape.repository_id, ...pageQuerySchema.shape }),
    output: page(envVarSchema),
    annotations: READS,
    run: (s, { repository_id, ...p }, c) => s.envVars.list(s.db, c.principal.accountId, repository_id, p),
  }),
  tool({
    name: "set_environment_variable",
    title: "Set an environment variable",
    description:
      "Creates the variable, or replaces the value of the one with this name in the same scope (the account, or `repository_id`); runs and analyses get it, repository scope overriding account scope. Values are encrypted at rest; a secret's value is never shown again.",
    scope: "env:write",
    input: z.strictObject({
      ...createEnvVarSchema.shape,
      secret: z
        .boolean()
        .optional()
        .meta({ description: "Secret values are never returned. Default: true for a new variable; an existing one keeps its setting." }),
    }),
    output: fieldsOf(envVarSchema),
    // Replaces the value of an existing variable (a secret's old value cannot be read back); the same value again changes nothing.
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    run: async (s, args, c) => (await s.envVars.set(s.db, c.principal.accountId, args)).envVar,
  }),
];

/**
 * The scopes the `/mcp` 401 challenge names (RFC 6750 `scope`), which MCP
 * clients ask for before any other (the MCP authorization spec's scope
 * selection): those of the read-only tools, so an agent starts able to look
 * at everything and change nothing. A write tool's first call is answered with
 * a step-up challenge for its scope (an OAuth token's 403), which the client
 * asks the person for then; scopes no tool needs (`keys:write`,
 * `integrations:*`) are never asked for through MCP.
 */
export const MCP_CHALLENGE_SCOPES: readonly Scope[] = [...new Set(TOOLS.filter((t) => t.annotations.readOnlyHint).map((t) => t.scope))];
