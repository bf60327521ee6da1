import { fork } from "node:child_process";
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { DETECTORS } from "./detectors/index.ts";
import { mergeEnvUses } from "./env-rules.ts";
import { resolveEnvironment } from "./environment/index.ts";
import { DEFAULT_LIMITS, FileReader, walk, type WalkLimits } from "./files.ts";
import { analyzerResultSchema, type AnalyzerResult, type EnvVarUse, type Experiment } from "./model.ts";
import { rankExperiments } from "./rank.ts";
import { attributeRequiredEnv } from "./reach.ts";
import { analyzerContext, grammarsNeeded, runDetectors, type DetectorOutputs, type WorkerMessage, type WorkerTask } from "./run-detectors.ts";
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
  /**
   * Run the Python and notebook detectors in a worker thread while the rest
   * run here. Default: when the machine has more than one core and the
   * repository has at least PARALLEL_MIN_FILES files (below that a worker's
   * start-up costs more than it saves). The result is the same either way.
   */
  parallel?: boolean;
}

const README_RE = /^readme(\.(md|markdown|rst|txt))?$/i;
export const PARALLEL_MIN_FILES = 1000;
/** The detectors a worker takes: together about half the work on a typical large repository. */
const WORKER_DETECTORS = new Set(["python", "notebook"]);
/**
 * The detectors that run in a child process with V8 flags of its own. The bash
 * grammar's lexer is one 160 KB WebAssembly function: once it is hot, V8's
 * optimising compiler (TurboFan) spends about 500 MiB compiling it, even for a
 * one-line script, while the other grammars' largest functions are under
 * 20 KB. V8 picks its compilers per process only, so shell scripts are parsed
 * in a process that keeps to the baseline compiler (Liftoff); everything else
 * keeps the optimised code (about five times faster).
 */
const CHILD_DETECTORS = new Set(["shell"]);
export const CHILD_NODE_FLAGS = ["--liftoff-only", "--max-semi-space-size=1"];
/** A worker thread's young generation: V8's default lets it grow to tens of MiB for no gain here. */
const WORKER_YOUNG_GENERATION_MB = 4;

export async function analyzeRepository(root: string, options: AnalyzeOptions = {}): Promise<AnalyzerResult> {
  const started = Date.now();
  const progress = options.onProgress ?? (() => undefined);
  const limits = options.limits ?? DEFAULT_LIMITS;
  const deadline = started + (options.timeBudgetMs ?? 10 * 60_000);

  const listing = walk(root, limits);
  progress(`listed ${listing.files.length} files${listing.truncated ? " (limit reached; the rest is not looked at)" : ""}`);
  const reader = new FileReader(root, limits);

  const parallel = options.parallel ?? (availableParallelism() > 1 && listing.files.length >= PARALLEL_MIN_FILES);
  const inWorker = parallel ? WORKER_DETECTORS : new Set<string>();
  // Without a file for them to parse, they need no process of their own.
  const inChild = grammarsNeeded(listing.files, CHILD_DETECTORS).size > 0 ? CHILD_DETECTORS : new Set<string>();
  const here = new Set(DETECTORS.map((d) => d.name).filter((n) => !inWorker.has(n) && !inChild.has(n)));
  const syntax = options.syntax ?? (await Syntax.load({ grammars: [] }));
  await syntax.ensure(grammarsNeeded(listing.files, here));
  const unparsableBefore = syntax.unparsable;
  const parsedBefore = syntax.parsed;
  const ctx = analyzerContext(root, listing.files, reader, syntax, deadline);
  const task = (names: Set<string>): WorkerTask => ({ root, files: listing.files, limits, deadline, names: [...names], parseTimeoutMs: syntax.timeoutMs });
  // The child process runs first, alone: while it lives its memory adds to
  // this process's, which is smallest before the detectors run (parsing a
  // repository's shell scripts takes a fraction of a second).
  const childDone = inChild.size ? await startChild(task(inChild), progress) : null;
  const helpers = [
    ...(inWorker.size ? [{ names: inWorker, done: startWorker(task(inWorker), progress) }] : []),
    ...(childDone ? [{ names: inChild, done: Promise.resolve(childDone) }] : []),
  ];
  const outputs: DetectorOutputs = runDetectors(ctx, here, progress);
  const helped = await awaitHelpers(helpers, outputs, { ctx, reader, syntax, files: listing.files, childNames: inChild, progress });
  const { experiments, envUses, frameworks } = collectOutputs(outputs);
  const unique = dedupe(experiments);
  const required = attributeRequiredEnv(ctx, unique, envUses);
  const timedOut = ctx.timedOut() || helped.timedOut;

  const readmeFile = listing.files.find((f) => !f.path.includes("/") && README_RE.test(f.path));
  const readme = (readmeFile && reader.readText(readmeFile)) || "";
  const truncated = listing.truncated || timedOut || reader.budgetExhausted;
  const repo_summary = buildRepoSummary({
    ctx,
    language: options.language ?? "en",
    frameworks,
    experiments: unique,
    truncated,
    skipped: { ...reader.skipped, symlinks: listing.symlinks, unparsable: syntax.unparsable - unparsableBefore + helped.unparsable },
  });
  const result: AnalyzerResult = {
    version: 1,
    repo_summary,
    experiments: unique.slice(0, 1000),
    primary_ids: rankExperiments(unique, readme),
    env_vars: mergeEnvUses(envUses, required)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .slice(0, 1000),
    environment: resolveEnvironment({ ctx, experiments: unique }),
    stats: { files_scanned: listing.files.length, files_parsed: syntax.parsed - parsedBefore + helped.parsed, duration_ms: Date.now() - started },
  };
  progress(`found ${result.experiments.length} experiment(s) and ${result.env_vars.length} environment variable(s) in ${result.stats.duration_ms} ms`);
  // Our own output must pass the check the controller will apply.
  return analyzerResultSchema.parse(result);
}

interface Helper {
  names: Set<string>;
  done: Promise<Finished>;
}

/** What this thread lends a helper's detectors when the helper fails. */
interface HereContext {
  ctx: ReturnType<typeof analyzerContext>;
  reader: FileReader;
  syntax: Syntax;
  files: Parameters<typeof grammarsNeeded>[0];
  /** The detectors of the child process, to name it in the progress line. */
  childNames: Set<string>;
  progress: (message: string) => void;
}

/** Adds each helper's outputs to outputs (running a failed helper's detectors here); what the helpers timed out and parsed. */
async function awaitHelpers(
  helpers: Helper[],
  outputs: DetectorOutputs,
  here: HereContext,
): Promise<{ timedOut: boolean; parsed: number; unparsable: number }> {
  const totals = { timedOut: false, parsed: 0, unparsable: 0 };
  for (const helper of helpers) {
    const done = await helper.done;
    if (done.kind === "done") {
      outputs.push(...done.outputs);
      here.reader.absorb(done.refusals);
      if (done.budgetExhausted) here.reader.budgetExhausted = true;
      totals.timedOut ||= done.timedOut;
      totals.parsed += done.parsed;
      totals.unparsable += done.unparsable;
    } else {
      // A worker that could not start or died: the same detectors, here.
      here.progress(`${helper.names === here.childNames ? "child process" : "parallel analysis"} failed (${done.message}); continuing in this thread`);
      await here.syntax.ensure(grammarsNeeded(here.files, helper.names));
      outputs.push(...runDetectors(here.ctx, helper.names, here.progress));
    }
  }
  return totals;
}

/** The detectors' findings, in the order of DETECTORS whichever thread ran them. */
function collectOutputs(outputs: DetectorOutputs): { experiments: Experiment[]; envUses: EnvVarUse[]; frameworks: string[] } {
  const experiments: Experiment[] = [];
  const envUses: EnvVarUse[] = [];
  const frameworks: string[] = [];
  const byName = new Map(outputs);
  for (const { name } of DETECTORS) {
    const out = byName.get(name);
    if (!out) continue;
    experiments.push(...out.experiments);
    frameworks.push(...(out.frameworks ?? []));
    envUses.push(...out.envVars);
  }
  return { experiments, envUses, frameworks };
}

/** Two detectors may find the same thing (an executable .py is also an executable file): first wins. */
function dedupe(experiments: Experiment[]): Experiment[] {
  const seen = new Set<string>();
  return experiments.filter((e) => (seen.has(e.id) ? false : (seen.add(e.id), true)));
}

// The source runs as .ts (type stripping), a build as .js: the worker is the sibling file of this one.
const WORKER_FILE = new URL(import.meta.url.endsWith(".ts") ? "./detector-worker.ts" : "./detector-worker.js", import.meta.url);

type Finished = Exclude<WorkerMessage, { kind: "progress" }>;

function startChild(task: WorkerTask, progress: (message: string) => void): Promise<Finished> {
  return new Promise((resolve) => {
    let settled = false;
    let stderr = "";
    const settle = (m: Finished) => {
      if (settled) return;
      settled = true;
      resolve(m);
    };
    let child: ReturnType<typeof fork>;
    try {
      // Nothing of the parent's own flags (a test runner's loaders): the child runs this file as Node runs the source.
      child = fork(WORKER_FILE, [], { execArgv: CHILD_NODE_FLAGS, serialization: "advanced", stdio: ["ignore", "ignore", "pipe", "ipc"] });
    } catch (err) {
      settle({ kind: "error", message: err instanceof Error ? err.message : String(err) });
      return;
    }
    child.stderr?.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString("utf8")).slice(-2000)));
    child.on("message", (m: WorkerMessage) => {
      if (m.kind === "progress") progress(m.message);
      else settle(m);
    });
    child.on("error", (err) => settle({ kind: "error", message: err.message }));
    child.on("exit", (code, signal) =>
      settle({ kind: "error", message: `child exited with ${signal ?? `code ${code}`}${stderr.trim() ? `: ${stderr.trim().split("\n").at(-1)}` : ""}` }),
    );
    child.send(task);
  });
}

function startWorker(task: WorkerTask, progress: (message: string) => void): Promise<Finished> {
  const file = WORKER_FILE;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (m: Finished) => {
      if (settled) return;
      settled = true;
      resolve(m);
    };
    let worker: Worker;
    try {
      worker = new Worker(file, { workerData: task, resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB } });
    } catch (err) {
      settle({ kind: "error", message: err instanceof Error ? err.message : String(err) });
      return;
    }
    worker.on("message", (m: WorkerMessage) => {
      if (m.kind === "progress") progress(m.message);
      else {
        settle(m);
        void worker.terminate();
      }
    });
    worker.on("error", (err: Error) => settle({ kind: "error", message: err.message }));
    worker.on("exit", (code) => settle({ kind: "error", message: `worker exited with code ${code}` }));
  });
}
