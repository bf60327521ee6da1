import { parse as parseToml } from "smol-toml";
import type { AnalyzerContext } from "../detector.ts";
import { requirementName } from "../summary-manifests.ts";
import { asTable, has } from "./part.ts";

// What pyproject.toml (and setup.py/setup.cfg) say about the project itself:
// whether it is a package pip can install (and with which build backend),
// and the dependencies it declares.

export interface PythonProject {
  /** pyproject.toml parsed; null when absent or unreadable. */
  doc: Record<string, unknown> | null;
  /** pip can build and install it (editable): a [build-system], or setup.py/setup.cfg. */
  isPackage: boolean;
  /** Its build backend ("hatchling.build"), or the reason it is not a package. */
  backend: string | null;
  /** PEP 508 lines of [project].dependencies. */
  dependencies: string[];
  /** Distribution names from [project] (with extras and groups) and [tool.poetry]. */
  names: string[];
  notes: string[];
}

export function readPythonProject(ctx: AnalyzerContext): PythonProject {
  const notes: string[] = [];
  let doc: Record<string, unknown> | null = null;
  if (has(ctx, "pyproject.toml")) {
    const text = ctx.readText("pyproject.toml");
    if (text === null) notes.push("pyproject.toml could not be read (too large or binary): the project itself is not installed");
    else doc = parseOrNote(text, notes);
  }
  const setupFile = has(ctx, "setup.py") ? "setup.py" : has(ctx, "setup.cfg") ? "setup.cfg" : null;
  const { isPackage, backend } = packageKind(doc, setupFile);
  const project = asTable(doc?.project);
  const dependencies = Array.isArray(project.dependencies) ? (project.dependencies as unknown[]).filter((d): d is string => typeof d === "string") : [];
  return { doc, isPackage, backend, dependencies, names: declaredNames(doc), notes };
}

function parseOrNote(text: string, notes: string[]): Record<string, unknown> | null {
  try {
    return parseToml(text);
  } catch (err) {
    notes.push(`pyproject.toml is not valid TOML (${err instanceof Error ? err.message.split("\n")[0] : "parse error"}): the project itself is not installed`);
    return null;
  }
}

/**
 * A [build-system] table makes a package (pip builds it with that backend),
 * unless the project opts out (Poetry's package-mode = false, uv's
 * package = false). A [project] table alone is an application's dependency
 * list (uv calls it a virtual project): pip would guess a setuptools layout
 * for it and often fail, so only its dependencies are installed. A
 * pyproject.toml with only [tool.*] sections configures tools.
 */
export function packageKind(doc: Record<string, unknown> | null, setupFile: string | null): { isPackage: boolean; backend: string | null } {
  const tool = asTable(doc?.tool);
  const optedOut = asTable(tool.poetry)["package-mode"] === false || asTable(tool.uv).package === false;
  const buildSystem = doc && "build-system" in doc ? asTable(doc["build-system"]) : null;
  if (optedOut) return { isPackage: false, backend: null };
  if (buildSystem) {
    const backend = typeof buildSystem["build-backend"] === "string" ? buildSystem["build-backend"] : "setuptools.build_meta:__legacy__";
    return { isPackage: true, backend };
  }
  if (setupFile) return { isPackage: true, backend: `setuptools (${setupFile})` };
  if (asTable(tool.uv).package === true) return { isPackage: true, backend: "setuptools.build_meta:__legacy__" };
  return { isPackage: false, backend: null };
}

function declaredNames(doc: Record<string, unknown> | null): string[] {
  if (!doc) return [];
  const lines: unknown[] = [];
  const project = asTable(doc.project);
  if (Array.isArray(project.dependencies)) lines.push(...(project.dependencies as unknown[]));
  for (const group of Object.values(asTable(project["optional-dependencies"]))) if (Array.isArray(group)) lines.push(...(group as unknown[]));
  const poetry = asTable(asTable(doc.tool).poetry);
  const keys = Object.keys(asTable(poetry.dependencies)).filter((k) => k !== "python");
  return [...lines.filter((l): l is string => typeof l === "string"), ...keys].map(requirementName).filter((n): n is string => n !== null);
}

/** [tool.poetry.dependencies] names a non-package Poetry project installs (not python, not optional, not from git or a path). */
export function poetryDirectNames(doc: Record<string, unknown> | null): string[] {
  const deps = asTable(asTable(asTable(doc?.tool).poetry).dependencies);
  return Object.entries(deps)
    .filter(([name, spec]) => name !== "python" && asTable(spec).optional !== true && !("git" in asTable(spec)) && !("path" in asTable(spec)))
    .map(([name]) => name)
    .sort();
}
