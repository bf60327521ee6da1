import type { AnalyzerContext } from "./detector.ts";
import type { Experiment, RepoSummary } from "./model.ts";
import { rankExperiments } from "./rank.ts";
import { countLanguages } from "./summary-languages.ts";
import { detectLicense } from "./summary-license.ts";
import { findManifests, manifestFrameworks, mergeFrameworks } from "./summary-manifests.ts";
import { findReadme, readmeFacts } from "./summary-readme.ts";
import { summaryText } from "./summary-text.ts";

// What the repository is, in facts (languages, licence, manifests, the
// README's own words) and in a few sentences built from them.

export interface SummaryInput {
  ctx: AnalyzerContext;
  language: "en" | "ja";
  /** From the detectors (imports they saw); merged with what the manifests name. */
  frameworks: string[];
  experiments: Experiment[];
  truncated: boolean;
  skipped: RepoSummary["skipped"];
}

const MAX_TEXT = 8192;

export function buildRepoSummary(input: SummaryInput): RepoSummary {
  const { ctx } = input;
  const counted = countLanguages(ctx);
  const readme = findReadme(ctx);
  const { title, description } = readme ? readmeFacts(readme) : { title: null, description: null };
  const license = detectLicense(ctx);
  const manifests = findManifests(ctx);
  const frameworks = mergeFrameworks(input.frameworks, manifestFrameworks(ctx, manifests)).slice(0, 128);
  const primaryId = rankExperiments(input.experiments, readme?.text ?? "")[0];
  const primary = input.experiments.find((e) => e.id === primaryId);
  const truncated = input.truncated || counted.partial;
  const text = summaryText({
    language: input.language,
    title,
    description,
    languages: counted.languages,
    fileCount: ctx.files.length,
    empty: ctx.files.every((f) => f.size === 0),
    experimentCount: input.experiments.length,
    entryPoint: primary?.entry_point ?? null,
    frameworks,
    license,
    truncated,
  });
  return {
    language: input.language,
    text: text.slice(0, MAX_TEXT),
    title,
    description,
    languages: counted.languages.slice(0, 128),
    file_count: ctx.files.length,
    total_bytes: ctx.files.reduce((n, f) => n + f.size, 0),
    license,
    manifests: manifests.slice(0, 512),
    frameworks,
    truncated,
    skipped: input.skipped,
  };
}
