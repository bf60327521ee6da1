import { keyValues, UsageError } from "../args.ts";
import type { Client } from "../client.ts";
import { EXIT } from "../errors.ts";
import type { Ctx } from "../main.ts";
import { ago, duration, fields, json } from "../output.ts";
import { followStream } from "../sse.ts";
import { findRepository, intOption, printList, refOf, str, type Repository } from "./common.ts";

export interface Run {
  run_id: string;
  repository_id: string;
  commit_hash: string;
  status: string;
  experiment_id: string | null;
  compute_type: string;
  run_config: { command: string[]; parameters: Record<string, unknown>; timeout_seconds: number; retries?: number };
  /** Absent from servers older than retries. */
  attempts?: { attempt: number; reason: string | null; error: string | null }[];
  exit_code: number | null;
  error: string | null;
  duration_seconds: number | null;
  start_time: string | null;
  close_time: string | null;
  created_at: string;
}

interface RunLog {
  content: string;
  size: number;
  truncated: boolean;
}

const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/** The shell's exit status for a run that ended: its own exit code, 0 for a completion without one, otherwise 125. */
export function exitStatusOf(status: string, exitCode: number | null): number {
  if (exitCode !== null) return exitCode;
  return status === "completed" ? EXIT.ok : EXIT.noExitCode;
}

/** The body of POST .../runs from `run`'s arguments: an experiment with parameters, or a command. */
export function runBody(ctx: Pick<Ctx, "options" | "rest">): Record<string, unknown> {
  const experiment = str(ctx.options.experiment);
  const params = (ctx.options.param as string[] | undefined) ?? [];
  const command = ctx.rest ?? [];
  if (experiment && command.length) throw new UsageError("give --experiment or a command after --, not both");
  if (!experiment && !command.length) throw new UsageError("give --experiment ID (see cpl analyze) or a command after --");
  if (!experiment && params.length) throw new UsageError("-p sets an experiment's parameters: give --experiment too (a command takes its arguments after --)");
  const timeout = intOption(ctx, "timeout");
  const retries = str(ctx.options.retries);
  if (retries !== undefined && !/^[0-5]$/.test(retries)) throw new UsageError(`--retries takes a whole number from 0 to 5 (got ${JSON.stringify(retries)})`);
  return {
    ...(experiment ? { analyzed_experiment: experiment, ...(params.length && { parameters: keyValues(params, "-p") }) } : { command }),
    ...(str(ctx.options.compute) && { compute_type: str(ctx.options.compute) }),
    ...(timeout !== undefined && { timeout_seconds: timeout }),
    ...(str(ctx.options.environment) && { environment: str(ctx.options.environment) }),
    ...(retries !== undefined && { retries: Number(retries) }),
  };
}

/** "2 (1: PodLost)": how many attempts the run took, and how each earlier one ended; null for one attempt. */
function attemptsOf(run: Run): string | null {
  const attempts = run.attempts ?? [];
  if (attempts.length < 2) return null;
  const lost = attempts.slice(0, -1).map((a) => `${a.attempt}: ${a.reason ?? "?"}`);
  return `${attempts.length} (${lost.join(", ")})`;
}

function showRun(ctx: Ctx, run: Run): void {
  ctx.io.stdout.write(
    ctx.output === "json"
      ? json(run)
      : fields([
          ["id", run.run_id],
          ["status", run.status],
          ["exit code", run.exit_code],
          ["error", run.error],
          ["repository", run.repository_id],
          ["commit", run.commit_hash],
          ["experiment", run.experiment_id],
          ["command", run.run_config.command.join(" ")],
          ["parameters", Object.keys(run.run_config.parameters).length ? run.run_config.parameters : null],
          ["compute", run.compute_type],
          ["attempts", attemptsOf(run)],
          ["created", run.created_at],
          ["duration", duration(run.duration_seconds)],
        ]),
  );
}

/**
 * Streams a run's output until it ends: stdout lines to stdout and stderr lines
 * to stderr as they come (escape sequences untouched), resuming after a
 * dropped connection; with -o json, one JSON object per event on stdout.
 * Returns the run's exit status.
 */
export async function followRun(ctx: Ctx, client: Client, runId: string): Promise<number> {
  const chatty = !!ctx.io.stderr.isTTY && ctx.output !== "json";
  const note = (text: string) => chatty && ctx.io.stderr.write(`\x1b[2m${text}\x1b[0m\n`);
  let end: { status: string; exit_code: number | null } | null = null;
  await followStream(client, `/v1/runs/${runId}/logs/stream`, {
    ...(ctx.io.signal && { signal: ctx.io.signal }),
    onEvent(ev) {
      if (ctx.output === "json") {
        if (ev.event !== "timeline") ctx.io.stdout.write(JSON.stringify({ event: ev.event, id: ev.id, data: JSON.parse(ev.data) as unknown }) + "\n");
        if (ev.event === "end") end = JSON.parse(ev.data) as typeof end;
        return;
      }
      switch (ev.event) {
        case "stdout":
          ctx.io.stdout.write(`${(JSON.parse(ev.data) as { line: string }).line}\n`);
          break;
        case "stderr":
          ctx.io.stderr.write(`${(JSON.parse(ev.data) as { line: string }).line}\n`);
          break;
        case "setup":
          note(`setup | ${(JSON.parse(ev.data) as { line: string }).line}`);
          break;
        case "status":
          note(`run ${(JSON.parse(ev.data) as { status: string }).status}`);
          break;
        case "end":
          end = JSON.parse(ev.data) as typeof end;
          break;
      }
    },
    onReconnect(lastId, attempt, reason) {
      ctx.io.stderr.write(`cpl: ${reason}; resuming after ${lastId ?? "the start"} (attempt ${attempt})\n`);
    },
  });
  const ended = end as { status: string; exit_code: number | null } | null;
  if (!ended) {
    ctx.io.stderr.write(`cpl: stopped following; run ${runId} goes on (cpl runs cancel ${runId} stops it)\n`);
    return EXIT.interrupted;
  }
  note(`run ${ended.status}${ended.exit_code !== null ? ` with exit code ${ended.exit_code}` : ""}`);
  if (ended.status !== "completed" && ended.exit_code === null) {
    const run = await client.get<Run>(`/v1/runs/${runId}`);
    ctx.io.stderr.write(`cpl: run ${runId} ${ended.status}${run.error ? `: ${run.error}` : ""}\n`);
  }
  return exitStatusOf(ended.status, ended.exit_code);
}

export async function run(ctx: Ctx): Promise<number> {
  const body = runBody(ctx);
  const client = await ctx.client();
  const repo = await findRepository(client, ctx.args[0]!);
  const ref = refOf(repo, ctx.args[1]);
  const created = await client.request<Run>("POST", `/v1/repositories/${repo.id}/${encodeURIComponent(ref)}/runs`, { json: body });
  if (!ctx.options.follow) {
    showRun(ctx, created);
    return EXIT.ok;
  }
  if (ctx.output === "json") ctx.io.stdout.write(JSON.stringify({ event: "run", id: null, data: created }) + "\n");
  else if (ctx.io.stderr.isTTY) ctx.io.stderr.write(`\x1b[2mrun ${created.run_id} at ${created.commit_hash.slice(0, 12)}\x1b[0m\n`);
  return followRun(ctx, client, created.run_id);
}

export async function list(ctx: Ctx): Promise<void> {
  const client = await ctx.client();
  const repoName = str(ctx.options.repo);
  const repo = repoName ? await findRepository(client, repoName) : null;
  const runs = await client.all<Run>("/v1/runs", { repository_id: repo?.id, status: str(ctx.options.status) }, intOption(ctx, "limit") ?? 20);
  const names = new Map<string, string>();
  if (ctx.output !== "json" && runs.length) {
    if (repo) names.set(repo.id, repo.name);
    else for (const r of await client.all<Repository>("/v1/repositories")) names.set(r.id, r.name);
  }
  printList(ctx, runs, [
    ["id", (r) => r.run_id],
    ["status", (r) => r.status],
    ["exit", (r) => r.exit_code],
    ["repository", (r) => names.get(r.repository_id) ?? r.repository_id],
    ["commit", (r) => r.commit_hash.slice(0, 12)],
    ["what", (r) => r.experiment_id ?? r.run_config.command.join(" ")],
    ["created", (r) => ago(r.created_at)],
    ["duration", (r) => duration(r.duration_seconds)],
  ]);
}

export async function get(ctx: Ctx): Promise<void> {
  showRun(ctx, await (await ctx.client()).get<Run>(`/v1/runs/${encodeURIComponent(ctx.args[0]!)}`));
}

export async function cancel(ctx: Ctx): Promise<void> {
  const run = await (await ctx.client()).request<Run>("POST", `/v1/runs/${encodeURIComponent(ctx.args[0]!)}/cancel`);
  if (ctx.output === "json") ctx.io.stdout.write(json(run));
  else ctx.io.stdout.write(`run ${run.run_id}: ${run.status}${TERMINAL.has(run.status) ? "" : " (cancelling)"}\n`);
}

export async function logs(ctx: Ctx): Promise<number> {
  const client = await ctx.client();
  const id = encodeURIComponent(ctx.args[0]!);
  if (ctx.options.follow) return followRun(ctx, client, id);
  const [out, err] = await Promise.all([client.get<RunLog>(`/v1/runs/${id}/logs/stdout`), client.get<RunLog>(`/v1/runs/${id}/logs/stderr`)]);
  if (ctx.output === "json") {
    ctx.io.stdout.write(json({ stdout: out, stderr: err }));
    return EXIT.ok;
  }
  ctx.io.stdout.write(out.content);
  ctx.io.stderr.write(err.content);
  for (const [name, log] of [
    ["stdout", out],
    ["stderr", err],
  ] as const) {
    if (log.truncated) ctx.io.stderr.write(`cpl: the run wrote more ${name} than is kept; this is the first ${log.size} bytes\n`);
  }
  return EXIT.ok;
}
