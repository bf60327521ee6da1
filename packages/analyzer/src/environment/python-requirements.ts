import type { AnalyzerContext } from "../detector.ts";
import { requirementName } from "../summary-manifests.ts";

// Which requirements file a person installs when a repository has several,
// and the files it pulls in (`-r base.txt`), which define the install too.

const REQUIREMENTS_FILE = /^requirements[^/]*\.txt$/i;
const IN_FOLDER = /^requirements\/[^/]+\.txt$/i;
/** The names a project gives its main list when it splits them. */
const MAIN_NAMES = ["base", "main", "common", "core", "default", "prod", "production", "runtime", "requirements", "install"];
/** Lists for a project's own developers or its CI, not for running it. */
const CHORE = /(^|[-_.])(dev|develop|development|test|tests|testing|docs?|lint|ci|style|typing|mypy|build|bench|benchmarks?|local)([-_.]|$)/i;
const ACCELERATOR = /(^|[-_.])(gpu|cuda|cu\d+|rocm|tpu)([-_.]|$)/i;

export interface RequirementsChoice {
  chosen: string;
  why: string;
  /** The other candidates, not installed. */
  others: string[];
}

/** The variant part of a candidate's name: "requirements-dev.txt" → "dev", "requirements/base.txt" → "base". */
function variant(path: string): string {
  return path
    .replace(/^requirements\//i, "")
    .replace(/^requirements[-_.]?/i, "")
    .replace(/\.txt$/i, "")
    .toLowerCase();
}

function rank(path: string): number {
  if (path === "requirements.txt") return 0;
  const v = variant(path);
  const main = MAIN_NAMES.indexOf(v);
  if (main >= 0) return (IN_FOLDER.test(path) ? 10 : 30) + main;
  if (CHORE.test(v)) return 90;
  if (ACCELERATOR.test(v)) return 70;
  return 50;
}

function reason(path: string): string {
  const r = rank(path);
  if (r === 0) return "requirements.txt at the root is what a user installs first (pip install -r requirements.txt)";
  if (r < 50) return `${path} is the project's main list (the others build on it or serve development)`;
  if (r < 90) return `${path} is the only list not meant for development, testing or an accelerator`;
  return `${path} is the only requirements list`;
}

export function requirementsCandidates(ctx: AnalyzerContext): string[] {
  return ctx.files.map((f) => f.path).filter((p) => (!p.includes("/") && REQUIREMENTS_FILE.test(p)) || IN_FOLDER.test(p));
}

/** The list to install; null when there is none. Ties go to the path's order, so the choice is deterministic. */
export function chooseRequirements(candidates: readonly string[]): RequirementsChoice | null {
  if (!candidates.length) return null;
  const sorted = [...candidates].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  const chosen = sorted[0]!;
  return { chosen, why: reason(chosen), others: sorted.slice(1).sort() };
}

export interface RequirementsRead {
  /** The chosen file and every repository file it includes (-r, -c), in the order met. */
  files: string[];
  /** Distribution names across them. */
  names: string[];
  /** It installs the project itself (`-e .`, `.`). */
  installsProject: boolean;
  /** Included files that could not be read. */
  unreadable: string[];
}

/** Follows `-r`/`-c` includes within the repository (each file once). */
export function readRequirements(ctx: AnalyzerContext, path: string): RequirementsRead {
  const out: RequirementsRead = { files: [], names: [], installsProject: false, unreadable: [] };
  const queue = [path];
  while (queue.length) {
    const file = queue.shift()!;
    if (out.files.includes(file)) continue;
    out.files.push(file);
    const text = ctx.readText(file);
    if (text === null) {
      out.unreadable.push(file);
      continue;
    }
    for (const raw of text.split(/\r?\n/)) readLine(raw, file, ctx, queue, out);
  }
  return out;
}

function readLine(raw: string, file: string, ctx: AnalyzerContext, queue: string[], out: RequirementsRead): void {
  const line = raw.replace(/(^|\s)#.*$/, "").trim();
  const include = /^(?:-r|--requirement|-c|--constraint)\s*=?\s*(\S+)$/.exec(line);
  if (include) {
    const target = joinPath(file, include[1]!);
    if (target && ctx.byPath.has(target)) queue.push(target);
    return;
  }
  if (/^(-e\s+|--editable\s+)?\.(\[[^\]]*\])?\/?$/.test(line)) out.installsProject = true;
  const name = requirementName(line);
  if (name) out.names.push(name);
}

/** A path relative to the including file's folder, normalised; null when it leaves the repository. */
function joinPath(from: string, rel: string): string | null {
  const parts = from.split("/").slice(0, -1);
  for (const seg of rel.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (!parts.length) return null;
      parts.pop();
    } else parts.push(seg);
  }
  return parts.join("/");
}
