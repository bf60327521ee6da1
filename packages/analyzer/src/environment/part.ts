import type { AnalyzerContext } from "../detector.ts";
import type { EnvironmentStep, Experiment, Toolchain } from "../model.ts";

// What one ecosystem's resolver finds (environment/index.ts merges them).
// Resolvers are pure functions over the analyzer's context: they read
// manifests through its bounded reads and never run anything.

export interface EnvironmentInput {
  ctx: AnalyzerContext;
  experiments: readonly Experiment[];
}

export interface EnvironmentPart {
  toolchains: Toolchain[];
  /** Paths whose bytes define the install; index.ts hashes them. */
  manifests: string[];
  steps: EnvironmentStep[];
  cache_paths: string[];
  /** Distribution names (any spelling); index.ts normalises and keeps the notable ones. */
  packages: string[];
  notes: string[];
}

export function emptyPart(): EnvironmentPart {
  return { toolchains: [], manifests: [], steps: [], cache_paths: [], packages: [], notes: [] };
}

/** A root-level file's presence. */
export const has = (ctx: AnalyzerContext, path: string): boolean => ctx.byPath.has(path);

/** The first line of a small version file (.python-version, .nvmrc), trimmed; null when absent or empty. */
export function firstLine(ctx: AnalyzerContext, path: string): string | null {
  if (!has(ctx, path)) return null;
  const text = ctx.readText(path);
  const line = text
    ?.split(/\r?\n/)
    .map((l) => l.replace(/#.*$/, "").trim())
    .find((l) => l !== "");
  return line ?? null;
}

/** A shell word that sh reads back as exactly `s`. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9@%+=:,./_-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export function asTable(v: unknown): Record<string, unknown> {
  return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

export function parseJson(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  try {
    const v: unknown = JSON.parse(text);
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** "3.12.1" → "3.12"; "1.22" → "1.22"; null when it does not start with a dotted number. */
export function majorMinor(v: string): string | null {
  const m = /^v?(\d+)\.(\d+)/.exec(v.trim());
  return m ? `${Number(m[1])}.${Number(m[2])}` : null;
}
