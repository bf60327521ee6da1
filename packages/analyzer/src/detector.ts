import type { RepoFile } from "./files.ts";
import type { EnvVarUse, Experiment } from "./model.ts";
import type { Syntax } from "./syntax.ts";

// A detector looks at the repository for one ecosystem and reports what can
// be run there and which environment variables its code reads. Detectors are
// pure over the context (no network, no writes, never run the repository's
// code) and deterministic: the same files give the same output, in order.

export interface AnalyzerContext {
  /** Every regular file the walk listed, sorted by path (symlinks never appear). */
  readonly files: readonly RepoFile[];
  /** Files by path, for existence checks. */
  readonly byPath: ReadonlyMap<string, RepoFile>;
  /** UTF-8 text, or null when binary, too large or past the read budget. Cached. */
  readText(path: string): string | null;
  /** After readText returned null: whether the file held binary data (rather than being too large). */
  isBinary?(path: string): boolean;
  /** Hex SHA-256 of the file's bytes (no text decoding), or null when it cannot be read within the limits. */
  sha256?(path: string): string | null;
  readonly syntax: Syntax;
  /** True once the analysis's time budget is spent: stop and return what was found. */
  outOfTime(): boolean;
}

export interface DetectorOutput {
  experiments: Experiment[];
  envVars: EnvVarUse[];
  /** Notable libraries or frameworks seen in this ecosystem's manifests or imports. */
  frameworks?: string[];
}

export type Detector = (ctx: AnalyzerContext) => DetectorOutput;
