import { code, conclusionOf, fit, md, type CheckRunOutput } from "./check-run-body.ts";

// What a check run on GitHub says about a run, from the run alone (pure): its
// name tells runs on one commit apart (GitHub lists check runs by name, and a
// later run of the same experiment supersedes the earlier one there, as a
// re-run job does), the title says how it ended, and the summary what ran
// (experiment or command, parameters) and what it measured (final metrics).

export const RUN_CHECK_RUN_PREFIX = "codeplane/run";
const NAME_LABEL_LIMIT = 80;

export interface RunCheckRunView {
  status: string;
  error: string | null;
  exit_code: number | null;
  /** The run was deleted before it finished. */
  deleted: boolean;
  experiment_id: string | null;
  command: string[];
  parameters: Record<string, string | number | boolean | null>;
  final_metrics: Record<string, number>;
  duration_seconds: number | null;
  /** Attempts the run took (infrastructure retries); 0 or 1 is said nothing about. */
  attempts: number;
}

export function runCheckRunName(r: Pick<RunCheckRunView, "experiment_id" | "command">): string {
  const label = (r.experiment_id ?? r.command.join(" ")).replace(/\s+/g, " ").trim();
  const cut = label.length > NAME_LABEL_LIMIT ? `${label.slice(0, NAME_LABEL_LIMIT - 1)}…` : label;
  return cut ? `${RUN_CHECK_RUN_PREFIX}: ${cut}` : RUN_CHECK_RUN_PREFIX;
}

const seconds = (s: number) => (s < 100 ? `${Math.round(s * 10) / 10} s` : s < 6000 ? `${Math.round(s / 60)} min` : `${Math.round(s / 360) / 10} h`);

export function runTitle(r: RunCheckRunView): string {
  const took = r.duration_seconds === null ? "" : ` in ${seconds(r.duration_seconds)}`;
  switch (conclusionOf(r)) {
    case "success":
      return `The run completed${took}`;
    case "cancelled":
      return r.deleted ? "The run was deleted" : "The run was cancelled";
    case "timed_out":
      return "The run timed out";
    case "failure":
      return r.exit_code !== null && r.exit_code !== 0 ? `The run failed with exit code ${r.exit_code}${took}` : "The run failed";
  }
}

/** A two-column Markdown table of name → value, at most 30 rows (one part: a blank line inside a table would end it). */
function table(head: [string, string], entries: [string, string][]): string[] {
  const rows = entries.slice(0, 30).map(([k, v]) => `| ${code(k, 80)} | ${v === "" ? "" : code(v, 80)} |`);
  const parts = [[`| ${head[0]} | ${head[1]} |`, "| --- | --- |", ...rows].join("\n")];
  if (entries.length > 30) parts.push(`and ${entries.length - 30} more.`);
  return parts;
}

export function runCheckRunOutput(r: RunCheckRunView, link: string): CheckRunOutput {
  const title = runTitle(r);
  const footer = `\n\n[Open the run in codeplane](${link})`;
  const parts: string[] = [];
  if (r.error) parts.push(`${title}: ${md(r.error, 4000)}`);
  if (r.experiment_id) parts.push(`**Experiment**: ${code(r.experiment_id, 200)}`);
  if (r.command.length) parts.push(`**Command**: ${code(r.command.join(" "), 1000)}`);
  const params = Object.entries(r.parameters);
  if (params.length)
    parts.push(
      "### Parameters",
      ...table(
        ["parameter", "value"],
        params.map(([k, v]) => [k, v === null ? "" : String(v)]),
      ),
    );
  const metrics = Object.entries(r.final_metrics);
  if (metrics.length)
    parts.push(
      "### Final metrics",
      ...table(
        ["metric", "value"],
        metrics.map(([k, v]) => [k, String(v)]),
      ),
    );
  if (r.attempts > 1) parts.push(`It took ${r.attempts} attempts (earlier ones were lost to the infrastructure).`);
  if (parts.length === 0) parts.push(`${title}.`);
  return fit(title, parts.join("\n\n"), footer);
}
