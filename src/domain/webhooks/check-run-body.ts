import type { Analysis } from "../analyses/analyses.schemas.ts";

// What a check run on GitHub says about an analysis, from the analysis alone
// (pure). GitHub caps a check run's output summary and text at 65535
// characters each; the summary is cut to fit, with a note and the link.

export const CHECK_RUN_NAME = "codeplane/analysis";
export const SUMMARY_LIMIT = 65_535;
export const TITLE_LIMIT = 255;

export type CheckRunState = "queued" | "in_progress" | "completed";
export type Conclusion = "success" | "failure" | "cancelled" | "timed_out";

export interface CheckRunView {
  status: Analysis["status"];
  /** The analysis was deleted before it finished. */
  deleted: boolean;
}

export function desiredState(a: CheckRunView): CheckRunState {
  if (a.deleted) return "completed";
  if (a.status === "pending") return "queued";
  if (a.status === "running") return "in_progress";
  return "completed";
}

const TIMEOUT = /\b(timed out|time limit|deadline|timeout)\b/i;

/** For analyses and runs alike: both end `completed`, `failed` (a timeout says so in its error) or `cancelled`. */
export function conclusionOf(a: { status: string; error: string | null; deleted: boolean }): Conclusion {
  if (a.deleted || a.status === "cancelled") return "cancelled";
  if (a.status === "completed") return "success";
  return a.error && TIMEOUT.test(a.error) ? "timed_out" : "failure";
}

/** Markdown for GitHub: text from the repository must not open links, images or HTML there. */
export function md(s: string, max = 500): string {
  const one = s.replace(/\s+/g, " ").trim();
  const cut = one.length > max ? `${one.slice(0, max - 1)}…` : one;
  return cut.replace(/[\\`*_{}[\]()<>#+!|~]/g, (c) => `\\${c}`);
}

export const code = (s: string, max = 200) => {
  const one = s.replace(/\s+/g, " ").trim();
  const cut = one.length > max ? `${one.slice(0, max - 1)}…` : one;
  // A code span that cannot be closed early by the text inside it.
  const ticks = "`".repeat(Math.max(1, ...[...cut.matchAll(/`+/g)].map((m) => m[0].length + 1)));
  return `${ticks} ${cut.replaceAll("|", "\\|")} ${ticks}`;
};

export interface CheckRunOutput {
  title: string;
  summary: string;
}

export function checkRunOutput(a: Analysis, deleted: boolean, link: string): CheckRunOutput {
  const conclusion = conclusionOf({ status: a.status, error: a.error, deleted });
  const footer = `\n\n[Open the analysis in codeplane](${link})`;
  if (conclusion !== "success") {
    const title = deleted
      ? "The analysis was deleted"
      : conclusion === "cancelled"
        ? "The analysis was cancelled"
        : conclusion === "timed_out"
          ? "The analysis timed out"
          : "The analysis failed";
    const body = a.error ? `${title}: ${md(a.error, 4000)}` : `${title}.`;
    return fit(title, body, footer);
  }
  const experiments = a.experiments;
  const primary = a.primary_ids.map((id) => experiments.find((e) => e.id === id)).filter((e) => e !== undefined);
  const shown = primary.length ? primary : experiments.slice(0, 3);
  const missing = a.env_vars?.missing_env_vars ?? [];
  const title = `${experiments.length} experiment${experiments.length === 1 ? "" : "s"} found${missing.length ? `, ${missing.length} environment variable${missing.length === 1 ? "" : "s"} missing` : ""}`;
  const parts: string[] = [];
  if (a.repo_summary?.text) parts.push(md(a.repo_summary.text, 1000));
  if (shown.length) {
    parts.push(`### ${primary.length ? "Primary experiments" : "Experiments"}`);
    for (const e of shown) {
      parts.push(`**${md(e.title, 200)}**: ${code(e.entry_point)}`);
      if (e.parameters.length) {
        // One part: a blank line inside a table would end it.
        const rows = e.parameters.slice(0, 30).map(
          (p) =>
            `| ${code(p.cli_option ?? p.name, 80)} | ${p.value === null ? "" : code(String(p.value), 80)} | ${p.category}${
              p.choices?.length
                ? `: ${p.choices
                    .slice(0, 10)
                    .map((c) => md(String(c), 40))
                    .join(", ")}`
                : ""
            } |`,
        );
        parts.push(["| parameter | default | kind |", "| --- | --- | --- |", ...rows].join("\n"));
        if (e.parameters.length > 30) parts.push(`and ${e.parameters.length - 30} more parameters.`);
      }
    }
    if (experiments.length > shown.length)
      parts.push(`and ${experiments.length - shown.length} more experiment${experiments.length - shown.length === 1 ? "" : "s"}.`);
  } else parts.push("No runnable entry point was found.");
  if (missing.length) {
    parts.push("### Missing environment variables");
    parts.push(
      `Set these for the repository or the account before running: ${missing
        .slice(0, 50)
        .map((n) => code(n, 100))
        .join(", ")}${missing.length > 50 ? ` and ${missing.length - 50} more` : ""}.`,
    );
  }
  return fit(title, parts.join("\n\n"), footer);
}

export function fit(title: string, body: string, footer: string): CheckRunOutput {
  const t = title.length > TITLE_LIMIT ? `${title.slice(0, TITLE_LIMIT - 1)}…` : title;
  if (body.length + footer.length <= SUMMARY_LIMIT) return { title: t, summary: body + footer };
  const note = "\n\n(cut to fit GitHub's limit; codeplane has the rest)";
  return { title: t, summary: body.slice(0, SUMMARY_LIMIT - footer.length - note.length) + note + footer };
}
