import type { AnalyzerContext } from "./detector.ts";
import { DETECTORS } from "./detectors/index.ts";
import { DEFAULT_LIMITS, FileReader, walk, type RepoFile, type WalkLimits } from "./files.ts";
import { analyzerResultSchema, type AnalyzerResult, type EnvVarUse, type Experiment } from "./model.ts";
import { rankExperiments } from "./rank.ts";
import { buildRepoSummary } from "./summary.ts";
import { Syntax } from "./syntax.ts";

// The analyzer: list the files, let each detector look, merge, rank, and
// summarise. It reads; it never runs anything from the repository.

export interface AnalyzeOptions {
  language?: "en" | "ja";
  /** Past this, detectors stop and the result says it is truncated. */
  timeBudgetMs?: number;
  limits?: WalkLimits;
  /** Progress, a line at a time, for the analysis's log stream. */
  onProgress?: (message: string) => void;
  /** Loaded once per process when analysing many repositories (benchmarks, tests). */
  syntax?: Syntax;
}

const README_RE = /^readme(\.(md|markdown|rst|txt))?$/i;

export async function analyzeRepository(root: string, options: AnalyzeOptions = {}): Promise<AnalyzerResult> {
  const started = Date.now();
  const progress = options.onProgress ?? (() => undefined);
  const limits = options.limits ?? DEFAULT_LIMITS;
  const deadline = started + (options.timeBudgetMs ?? 10 * 60_000);

  const listing = walk(root, limits);
  progress(`listed ${listing.files.length} files${listing.truncated ? " (limit reached; the rest is not looked at)" : ""}`);
  const reader = new FileReader(root, limits);
  const syntax = options.syntax ?? (await Syntax.load());
  const unparsableBefore = syntax.unparsable;
  const parsedBefore = syntax.parsed;
  const byPath = new Map<string, RepoFile>(listing.files.map((f) => [f.path, f]));
  let timedOut = false;
  const ctx: AnalyzerContext = {
    files: listing.files,
    byPath,
    readText: (path) => {
      const f = byPath.get(path);
      return f ? reader.readText(f) : null;
    },
    isBinary: (path) => reader.isBinary(path),
    syntax,
    outOfTime: () => {
      if (!timedOut && Date.now() > deadline) timedOut = true;
      return timedOut;
    },
  };

  const experiments: Experiment[] = [];
  const envVars = new Map<string, EnvVarUse>();
  const frameworks: string[] = [];
  for (const { name, detect } of DETECTORS) {
    if (ctx.outOfTime()) {
      progress(`time budget spent: skipping ${name}`);
      continue;
    }
    const t0 = Date.now();
    const out = detect(ctx);
    const ms = Date.now() - t0;
    experiments.push(...out.experiments);
    frameworks.push(...(out.frameworks ?? []));
    for (const use of out.envVars) mergeEnvVar(envVars, use);
    if (out.experiments.length || out.envVars.length) {
      progress(`${name}: ${out.experiments.length} experiment(s), ${new Set(out.envVars.map((e) => e.name)).size} environment variable(s) (${ms} ms)`);
    }
  }
  const unique = dedupe(experiments);

  const readmeFile = listing.files.find((f) => !f.path.includes("/") && README_RE.test(f.path));
  const readme = (readmeFile && reader.readText(readmeFile)) || "";
  const truncated = listing.truncated || timedOut || reader.budgetExhausted;
  const repo_summary = buildRepoSummary({
    ctx,
    language: options.language ?? "en",
    frameworks,
    experiments: unique,
    truncated,
    skipped: { ...reader.skipped, symlinks: listing.symlinks, unparsable: syntax.unparsable - unparsableBefore },
  });
  const result: AnalyzerResult = {
    version: 1,
    repo_summary,
    experiments: unique.slice(0, 1000),
    primary_ids: rankExperiments(unique, readme),
    env_vars: [...envVars.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).slice(0, 1000),
    stats: { files_scanned: listing.files.length, files_parsed: syntax.parsed - parsedBefore, duration_ms: Date.now() - started },
  };
  progress(`found ${result.experiments.length} experiment(s) and ${result.env_vars.length} environment variable(s) in ${result.stats.duration_ms} ms`);
  // Our own output must pass the check the controller will apply.
  return analyzerResultSchema.parse(result);
}

/** One entry per name: required if any use is, located at the first required use (else the first use). */
function mergeEnvVar(into: Map<string, EnvVarUse>, use: EnvVarUse): void {
  const seen = into.get(use.name);
  if (!seen) into.set(use.name, use);
  else if (use.required && !seen.required) into.set(use.name, use);
}

/** Two detectors may find the same thing (an executable .py is also an executable file): first wins. */
function dedupe(experiments: Experiment[]): Experiment[] {
  const seen = new Set<string>();
  return experiments.filter((e) => (seen.has(e.id) ? false : (seen.add(e.id), true)));
}
