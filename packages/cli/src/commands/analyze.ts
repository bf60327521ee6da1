import { CliError, EXIT } from "../errors.ts";
import type { Ctx } from "../main.ts";
import { json, table } from "../output.ts";
import { followStream } from "../sse.ts";
import { findRepository, refOf, str } from "./common.ts";

type Value = string | number | boolean | null;

export interface Parameter {
  name: string;
  value: Value;
  category: string;
  cli_option: string | null;
  choices: Value[] | null;
  description: string | null;
  required: boolean;
}

export interface Experiment {
  id: string;
  title: string;
  description: string | null;
  entry_point: string;
  kind: string;
  parameters: Parameter[];
}

export interface Analysis {
  id: string;
  repository_id: string;
  commit_hash: string;
  branch: string | null;
  status: "pending" | "running" | "completed" | "failed" | "cancelled";
  repo_summary: { text: string } | null;
  experiments: Experiment[];
  primary_ids: string[];
  env_vars: { valid: boolean; required_env_vars: string[]; missing_env_vars: string[] } | null;
  error: string | null;
}

const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/** A finished analysis as people read it: the summary, then each experiment with its parameters. */
export function renderAnalysis(a: Analysis): string {
  const out = [`analysis ${a.id}: ${a.status} at ${a.commit_hash.slice(0, 12)}${a.branch ? ` (${a.branch})` : ""}\n`];
  if (a.error) out.push(`error: ${a.error}\n`);
  if (a.repo_summary?.text) out.push(`\n${a.repo_summary.text}\n`);
  if (a.status === "completed" && a.experiments.length === 0) out.push("\nno experiments found: run a command with cpl run <repo> -- <command>\n");
  for (const e of a.experiments) {
    const primary = a.primary_ids.includes(e.id) ? " (primary)" : "";
    out.push(`\n${e.id}${primary}  ${e.kind}\n  $ ${e.entry_point}\n`);
    if (e.description) out.push(`  ${e.description.split("\n")[0]}\n`);
    if (e.parameters.length) {
      const rows = table(e.parameters, [
        ["parameter", (p) => p.name],
        ["default", (p) => (p.value === null ? null : JSON.stringify(p.value))],
        ["type", (p) => p.category],
        ["option", (p) => p.cli_option ?? "(positional)"],
        ["choices", (p) => p.choices?.map((c) => String(c))],
        ["required", (p) => (p.required ? "yes" : "no")],
        ["description", (p) => p.description],
      ]);
      out.push(rows.replace(/^/gm, "  "));
    }
  }
  if (a.env_vars && a.env_vars.required_env_vars.length) {
    out.push(`\nreads variables: ${a.env_vars.required_env_vars.join(", ")}`);
    out.push(a.env_vars.missing_env_vars.length ? `; missing: ${a.env_vars.missing_env_vars.join(", ")} (cpl env set NAME)\n` : "\n");
  }
  if (a.experiments.length) out.push(`\nrun one: cpl run <repo> ${a.commit_hash.slice(0, 12)} --experiment <id> [-p name=value ...] --follow\n`);
  return out.join("");
}

export async function analyze(ctx: Ctx): Promise<number> {
  const client = await ctx.client();
  const repo = await findRepository(client, ctx.args[0]!);
  const ref = refOf(repo, ctx.args[1]);
  const path = `/v1/repositories/${repo.id}/analysis/${encodeURIComponent(ref)}`;
  let analysis = await client.request<Analysis>("POST", path, { json: { ...(str(ctx.options.language) && { language: str(ctx.options.language) }) } });
  if (ctx.options.wait && !TERMINAL.has(analysis.status)) {
    // The commit's analysis by its hash: a branch that moves meanwhile does not change which one is awaited.
    const byCommit = `/v1/repositories/${repo.id}/analysis/${analysis.commit_hash}`;
    await followStream(client, `${byCommit}/logs/stream`, {
      ...(ctx.io.signal && { signal: ctx.io.signal }),
      onEvent(ev) {
        if (ev.event === "stdout" || ev.event === "stderr") ctx.io.stderr.write(`${(JSON.parse(ev.data) as { line: string }).line}\n`);
        else if (ev.event === "status") ctx.io.stderr.write(`analysis ${(JSON.parse(ev.data) as { status: string }).status}\n`);
      },
    });
    if (ctx.io.signal?.aborted) {
      ctx.io.stderr.write("cpl: stopped waiting; the analysis goes on\n");
      return EXIT.interrupted;
    }
    analysis = await client.get<Analysis>(byCommit);
  }
  ctx.io.stdout.write(ctx.output === "json" ? json(analysis) : renderAnalysis(analysis));
  if (!ctx.options.wait && !TERMINAL.has(analysis.status) && ctx.output !== "json")
    ctx.io.stderr.write(`(still ${analysis.status}: add --wait to wait for it)\n`);
  if (analysis.status === "failed" || analysis.status === "cancelled")
    throw new CliError(`the analysis ${analysis.status}${analysis.error ? `: ${analysis.error}` : ""}`);
  return EXIT.ok;
}
