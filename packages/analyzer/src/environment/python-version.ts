import type { AnalyzerContext } from "../detector.ts";
import { asTable, firstLine, majorMinor } from "./part.ts";

// Which Python the repository asks for, normalised to the "3.12" images are
// catalogued by. A file that names one version (.python-version, runtime.txt,
// Pipfile's python_version) is exact; a requirement (requires-python,
// Poetry's python dependency) is a floor: "at least".

export interface VersionChoice {
  version: string;
  exact: boolean;
  source: string;
}

/**
 * The lowest Python a PEP 440 specifier set allows, as "3.10", with whether it
 * pins one minor version ("==3.12.*"); null when it sets no lower bound.
 * Poetry's caret and tilde forms ("^3.10", "~3.11") count as floors too.
 */
export function pythonFloor(spec: string): { version: string; exact: boolean } | null {
  let best: string | null = null;
  let exact = false;
  for (const clause of spec.split(",").map((c) => c.trim())) {
    const m = /^(>=|>|~=|===?|\^|~)?\s*v?(\d+(?:\.\d+)*)(\.\*)?$/.exec(clause);
    if (!m) continue; // an upper bound or an exclusion: no floor
    const version = majorMinor(m[2]!.includes(".") ? m[2]! : `${m[2]}.0`);
    if (!version) continue;
    if (best === null || compareMinor(version, best) > 0) best = version;
    // "==3.12.*" or a bare "3.12" (Poetry's way of writing ==): that one version.
    if (m[1] === undefined || m[1].startsWith("==")) exact = true;
  }
  return best === null ? null : { version: best, exact };
}

export function compareMinor(a: string, b: string): number {
  const [am, an] = a.split(".").map(Number);
  const [bm, bn] = b.split(".").map(Number);
  return am! - bm! || an! - bn!;
}

/** The version a repository asks for, most specific source first; null when none does. */
export function pythonVersion(ctx: AnalyzerContext, pyproject: Record<string, unknown> | null, pipfile: Record<string, unknown> | null): VersionChoice | null {
  const pinned = firstLine(ctx, ".python-version");
  if (pinned && majorMinor(pinned)) return { version: majorMinor(pinned)!, exact: true, source: `.python-version ${pinned}` };
  const runtime = firstLine(ctx, "runtime.txt");
  const fromRuntime = runtime ? /^python-(\d+\.\d+)/.exec(runtime) : null;
  if (fromRuntime) return { version: majorMinor(fromRuntime[1]!)!, exact: true, source: `runtime.txt ${runtime}` };
  const requiresPython = asTable(pyproject?.project)["requires-python"];
  if (typeof requiresPython === "string") {
    const floor = pythonFloor(requiresPython);
    if (floor) return { ...floor, source: `pyproject.toml requires-python ${requiresPython}` };
  }
  const poetryPython = asTable(asTable(asTable(pyproject?.tool).poetry).dependencies).python;
  if (typeof poetryPython === "string") {
    const floor = pythonFloor(poetryPython);
    if (floor) return { ...floor, source: `pyproject.toml [tool.poetry.dependencies] python ${poetryPython}` };
  }
  const pipfilePython = asTable(pipfile?.requires).python_version;
  if (typeof pipfilePython === "string" && majorMinor(pipfilePython)) {
    return { version: majorMinor(pipfilePython)!, exact: true, source: `Pipfile python_version ${pipfilePython}` };
  }
  return null;
}
