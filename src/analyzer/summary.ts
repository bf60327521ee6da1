import type { AnalyzerContext } from "./detector.ts";
import type { Experiment, RepoSummary } from "./model.ts";

export interface SummaryInput {
  ctx: AnalyzerContext;
  language: "en" | "ja";
  /** From the detectors (imports they saw); merged with what the manifests name. */
  frameworks: string[];
  experiments: Experiment[];
  truncated: boolean;
  skipped: RepoSummary["skipped"];
}

// Placeholder until the summary lands.
export function buildRepoSummary(input: SummaryInput): RepoSummary {
  return {
    language: input.language,
    text: "",
    title: null,
    description: null,
    languages: [],
    file_count: input.ctx.files.length,
    total_bytes: input.ctx.files.reduce((n, f) => n + f.size, 0),
    license: null,
    manifests: [],
    frameworks: [...new Set(input.frameworks)].sort(),
    truncated: input.truncated,
    skipped: input.skipped,
  };
}
