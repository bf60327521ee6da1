import type { AnalyzerContext } from "../detector.ts";
import { firstLine } from "./part.ts";
import type { VersionChoice } from "./python-version.ts";

// Which Node the repository asks for, as the major version images are
// catalogued by ("22"). .nvmrc and .node-version name one (exact);
// package.json's engines.node is a floor unless it pins one major.

/** "v20.11.1" → "20", "lts/iron" → "20"; null for what names no version ("lts/*", "node"). */
export function nodeMajor(s: string): string | null {
  const m = /^v?(\d+)(\.|$)/.exec(s.trim());
  if (m) return String(Number(m[1]));
  return (
    LTS_NAMES.get(
      s
        .trim()
        .toLowerCase()
        .replace(/^lts\//, ""),
    ) ?? null
  );
}

/** Node's LTS code names, for .nvmrc files that use them. */
const LTS_NAMES = new Map([
  ["hydrogen", "18"],
  ["iron", "20"],
  ["jod", "22"],
  ["krypton", "24"],
]);

/**
 * The lowest major engines.node allows (">=18", "^20.9", "18 || 20", "20.x"),
 * and whether it allows one major only ("20.x", "^20", "~20.1", "20").
 */
export function enginesFloor(spec: string): { version: string; exact: boolean } | null {
  let lowest: number | null = null;
  let alternatives = 0;
  let floorOnly = false;
  for (const alt of spec.split("||").map((a) => a.trim())) {
    const m = /^(>=|>|\^|~|=)?\s*v?(\d+)(?:\.(\d+|x|\*))?/.exec(alt);
    if (!m) continue;
    alternatives += 1;
    if (m[1] === ">=" || m[1] === ">") floorOnly = true;
    const major = Number(m[2]) + (m[1] === ">" && m[3] === undefined ? 1 : 0);
    if (lowest === null || major < lowest) lowest = major;
  }
  if (lowest === null) return null;
  return { version: String(lowest), exact: alternatives === 1 && !floorOnly };
}

export function nodeVersion(ctx: AnalyzerContext, pkg: Record<string, unknown> | null): VersionChoice | null {
  for (const file of [".nvmrc", ".node-version"]) {
    const line = firstLine(ctx, file);
    const major = line ? nodeMajor(line) : null;
    if (line && major) return { version: major, exact: true, source: `${file} ${line}` };
  }
  const engines = pkg?.engines;
  const spec = engines && typeof engines === "object" ? (engines as Record<string, unknown>).node : undefined;
  if (typeof spec === "string") {
    const floor = enginesFloor(spec);
    if (floor) return { ...floor, source: `package.json engines.node ${spec}` };
  }
  return null;
}
