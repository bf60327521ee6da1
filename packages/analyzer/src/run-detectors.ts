import type { AnalyzerContext, DetectorOutput } from "./detector.ts";
import { DETECTORS } from "./detectors/index.ts";
import { FileReader, type RepoFile, type Refusals, type WalkLimits } from "./files.ts";
import type { Grammar, Syntax } from "./syntax.ts";

// Running a set of detectors over a listing, in this thread or in a worker
// (detector-worker.ts). Either way the outputs are keyed by
// detector name and merged in DETECTORS order, so the result does not depend
// on where a detector ran.

export type DetectorOutputs = [name: string, output: DetectorOutput][];

export function analyzerContext(
  root: string,
  files: readonly RepoFile[],
  reader: FileReader,
  syntax: Syntax,
  deadline: number,
): AnalyzerContext & { timedOut(): boolean } {
  const byPath = new Map<string, RepoFile>(files.map((f) => [f.path, f]));
  let timedOut = false;
  return {
    files,
    byPath,
    readText: (path) => {
      const f = byPath.get(path);
      return f ? reader.readText(f) : null;
    },
    isBinary: (path) => reader.isBinary(path),
    sha256: (path) => {
      const f = byPath.get(path);
      return f ? reader.sha256(f) : null;
    },
    syntax,
    outOfTime: () => {
      if (!timedOut && Date.now() > deadline) timedOut = true;
      return timedOut;
    },
    timedOut: () => timedOut,
  };
}

export function runDetectors(ctx: AnalyzerContext, names: ReadonlySet<string>, progress: (message: string) => void): DetectorOutputs {
  const outputs: DetectorOutputs = [];
  for (const { name, detect } of DETECTORS) {
    if (!names.has(name)) continue;
    if (ctx.outOfTime()) {
      progress(`time budget spent: skipping ${name}`);
      continue;
    }
    const started = Date.now();
    const out = detect(ctx);
    if (out.experiments.length || out.envVars.length) {
      const vars = new Set(out.envVars.map((e) => e.name)).size;
      progress(`${name}: ${out.experiments.length} experiment(s), ${vars} environment variable(s) (${Date.now() - started} ms)`);
    }
    outputs.push([name, out]);
  }
  return outputs;
}

/**
 * The grammars these detectors will parse with on this listing, so a thread
 * loads only those (each costs its compiled code, parse or not).
 */
export function grammarsNeeded(files: readonly RepoFile[], names: ReadonlySet<string>): Set<Grammar> {
  const out = new Set<Grammar>();
  for (const { path, executable } of files) {
    const base = path.slice(path.lastIndexOf("/") + 1).toLowerCase();
    const ext = base.includes(".") ? base.slice(base.lastIndexOf(".")) : "";
    if ((names.has("python") && ext === ".py") || (names.has("notebook") && ext === ".ipynb")) out.add("python");
    if (names.has("go") && ext === ".go") out.add("go");
    if (names.has("node")) {
      if (ext === ".tsx") out.add("tsx");
      else if (ext === ".ts" || ext === ".mts" || ext === ".cts") out.add("typescript");
      // A package's bin may be a file without an extension: JavaScript with a shebang.
      else if (ext === ".js" || ext === ".mjs" || ext === ".cjs" || ext === ".jsx" || base === "package.json") out.add("javascript");
    }
    if (names.has("shell") && (ext === ".sh" || ext === ".bash" || executable)) out.add("bash");
  }
  return out;
}

/** What a worker (thread or process) is asked to do. */
export interface WorkerTask {
  root: string;
  files: RepoFile[];
  limits: WalkLimits;
  deadline: number;
  names: string[];
  /** The per-file parse budget of the Syntax the caller would have used. */
  parseTimeoutMs: number;
}

/** What a worker sends back: progress lines as they come, then one result (or an error). */
export type WorkerMessage =
  | { kind: "progress"; message: string }
  | { kind: "done"; outputs: DetectorOutputs; refusals: Refusals; budgetExhausted: boolean; timedOut: boolean; parsed: number; unparsable: number }
  | { kind: "error"; message: string };
