import { parse as parseToml } from "smol-toml";
import { requirementName } from "../summary-manifests.ts";
import { asTable, parseJson } from "./part.ts";

// Poetry's and Pipenv's lockfiles turned into what pip reads, so a locked
// project installs its locked versions with pip alone (neither poetry nor
// pipenv is on an image or, necessarily, on the package mirror).

export interface LockLines {
  /** Requirement or constraint lines, one per locked distribution, sorted. */
  lines: string[];
  /** Every distribution name the lock holds (for the notable-package list). */
  names: string[];
  notes: string[];
}

function parseTomlOrNull(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  try {
    return parseToml(text);
  } catch {
    return null;
  }
}

function lockPackages(doc: Record<string, unknown>): Record<string, unknown>[] {
  return Array.isArray(doc.package) ? (doc.package as unknown[]).map(asTable) : [];
}

/**
 * poetry.lock as pip constraints ("name==version"): constraints pin what the
 * project's requirements pull in without installing what they do not (a
 * Windows-only package in the lock stays out on Linux), which a requirement
 * list made from the lock could not promise for lock formats without
 * per-package markers. Distributions from git, a URL or a folder have no
 * version pip can pin: left out, with a note.
 */
export function poetryConstraints(text: string | null): LockLines | null {
  const doc = parseTomlOrNull(text);
  if (!doc) return null;
  const lines: string[] = [];
  const names: string[] = [];
  const unpinned: string[] = [];
  for (const pkg of lockPackages(doc)) {
    if (typeof pkg.name !== "string" || typeof pkg.version !== "string") continue;
    names.push(pkg.name);
    const source = asTable(pkg.source).type;
    if (source === "git" || source === "url" || source === "directory" || source === "file") unpinned.push(pkg.name);
    else lines.push(`${pkg.name}==${pkg.version}`);
  }
  const notes = unpinned.length ? [`poetry.lock: ${unpinned.sort().join(", ")} come from git, a URL or a folder; pip resolves them without a pin`] : [];
  return { lines: lines.sort(), names, notes };
}

/** Every distribution a uv.lock holds (uv itself turns the lock into requirements: `uv export`). */
export function uvLockNames(text: string | null): string[] | null {
  const doc = parseTomlOrNull(text);
  if (!doc) return null;
  return lockPackages(doc)
    .map((p) => p.name)
    .filter((n): n is string => typeof n === "string");
}

/**
 * Pipfile.lock's "default" section (what `pipenv install` installs; "develop"
 * is the developers' tools) as requirement lines with their markers. The
 * lock is complete (every transitive dependency is listed), so these lines
 * are the whole install.
 */
export function pipfileLockRequirements(text: string | null): LockLines | null {
  const doc = parseJson(text);
  if (!doc) return null;
  const lines: string[] = [];
  const names: string[] = [];
  const skipped: string[] = [];
  for (const [name, raw] of Object.entries(asTable(doc.default))) {
    const entry = asTable(raw);
    names.push(name);
    const line = pipfileLine(name, entry);
    if (line) lines.push(line);
    else skipped.push(name);
  }
  const notes: string[] = [];
  if (Object.keys(asTable(doc.develop)).length) notes.push('Pipfile.lock: the "develop" packages are not installed (they are the developers\' tools)');
  if (skipped.length) notes.push(`Pipfile.lock: ${skipped.sort().join(", ")} come from git or a URL; not installed`);
  return { lines: lines.sort(), names, notes };
}

function pipfileLine(name: string, entry: Record<string, unknown>): string | null {
  const markers = typeof entry.markers === "string" ? ` ; ${entry.markers}` : "";
  const extras = Array.isArray(entry.extras) && entry.extras.length ? `[${(entry.extras as unknown[]).map(String).join(",")}]` : "";
  if (typeof entry.version === "string") return `${name}${extras}${entry.version}${markers}`;
  if (typeof entry.path === "string" && !entry.path.startsWith("/")) return `${entry.editable === true ? "-e " : ""}${entry.path}`;
  return null;
}

/**
 * A Pipfile's [packages] (no lock) as requirement lines: `name = "*"` is any
 * version, `name = "==1.2"` or `{version = ">=1"}` a specifier.
 */
export function pipfileRequirements(doc: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [name, raw] of Object.entries(asTable(doc.packages))) {
    const spec = typeof raw === "string" ? raw : asTable(raw).version;
    if (requirementName(name) === null) continue;
    out.push(typeof spec === "string" && spec !== "*" ? `${name}${spec}` : name);
  }
  return out.sort();
}
