import { parse as parseToml } from "smol-toml";
import type { AnalyzerContext } from "./detector.ts";

// Dependency manifests, and the notable Python libraries they declare, named
// as the Python detector names them so that the two lists merge cleanly.

const MANIFEST_NAMES = new Set([
  "package.json",
  "pyproject.toml",
  "setup.py",
  "setup.cfg",
  "Pipfile",
  "environment.yml",
  "environment.yaml",
  "go.mod",
  "Cargo.toml",
  "pom.xml",
  "build.gradle",
  "build.gradle.kts",
  "Gemfile",
  "composer.json",
]);

const REQUIREMENTS = /^requirements.*\.txt$/i;

export const PYTHON_FRAMEWORKS: ReadonlyMap<string, string> = new Map([
  ["torch", "PyTorch"],
  ["tensorflow", "TensorFlow"],
  ["tensorflow-cpu", "TensorFlow"],
  ["tensorflow-gpu", "TensorFlow"],
  ["jax", "JAX"],
  ["scikit-learn", "scikit-learn"],
  ["transformers", "Hugging Face Transformers"],
  ["pandas", "pandas"],
  ["numpy", "NumPy"],
  ["fastapi", "FastAPI"],
  ["flask", "Flask"],
  ["django", "Django"],
  ["streamlit", "Streamlit"],
  ["click", "Click"],
  ["lightning", "PyTorch Lightning"],
  ["pytorch-lightning", "PyTorch Lightning"],
]);

export function findManifests(ctx: AnalyzerContext): string[] {
  return ctx.files
    .map((f) => f.path)
    .filter((p) => {
      const name = p.slice(p.lastIndexOf("/") + 1);
      return MANIFEST_NAMES.has(name) || REQUIREMENTS.test(name);
    })
    .sort();
}

/** The distribution name of a PEP 508 requirement ("torch>=2; python_version>'3.8'" → "torch"), normalised; null for options and URLs. */
export function requirementName(line: string): string | null {
  const s = line.replace(/(^|\s)#.*$/, "").trim();
  if (!s || s.startsWith("-") || /^[a-z+]+:\/\//i.test(s)) return null;
  const m = /^([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(s);
  return m ? m[1]!.toLowerCase().replace(/[._]+/g, "-") : null;
}

export function manifestFrameworks(ctx: AnalyzerContext, manifests: readonly string[]): string[] {
  const names: string[] = [];
  for (const path of manifests) {
    if (ctx.outOfTime()) break;
    const file = path.slice(path.lastIndexOf("/") + 1);
    if (REQUIREMENTS.test(file)) {
      const text = ctx.readText(path);
      if (text !== null) for (const line of text.split(/\r?\n/)) names.push(requirementName(line) ?? "");
    } else if (file === "pyproject.toml") {
      const text = ctx.readText(path);
      if (text !== null) names.push(...pyprojectDependencies(text));
    }
  }
  const out = new Set<string>();
  for (const name of names) {
    const display = PYTHON_FRAMEWORKS.get(name);
    if (display) out.add(display);
  }
  return [...out];
}

function pyprojectDependencies(text: string): string[] {
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(text);
  } catch {
    return [];
  }
  const requirements: unknown[] = [];
  const keys: string[] = [];
  const project = asTable(doc.project);
  if (Array.isArray(project.dependencies)) requirements.push(...(project.dependencies as unknown[]));
  for (const group of Object.values(asTable(project["optional-dependencies"]))) if (Array.isArray(group)) requirements.push(...(group as unknown[]));
  for (const group of Object.values(asTable(doc["dependency-groups"]))) if (Array.isArray(group)) requirements.push(...(group as unknown[]));
  const poetry = asTable(asTable(doc.tool).poetry);
  keys.push(...Object.keys(asTable(poetry.dependencies)), ...Object.keys(asTable(poetry["dev-dependencies"])));
  for (const group of Object.values(asTable(poetry.group))) keys.push(...Object.keys(asTable(asTable(group).dependencies)));
  return [
    ...requirements.map((r) => (typeof r === "string" ? requirementName(r) : null)).filter((n): n is string => n !== null),
    ...keys.map((k) => requirementName(k)).filter((n): n is string => n !== null),
  ];
}

function asTable(v: unknown): Record<string, unknown> {
  return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** Unique, sorted without regard to case (so "NumPy" sits between "Flask" and "pandas"). */
export function mergeFrameworks(...lists: readonly (readonly string[])[]): string[] {
  const unique = [...new Set(lists.flat().filter((n) => n.trim() !== ""))];
  return unique.sort((a, b) => {
    const x = a.toLowerCase();
    const y = b.toLowerCase();
    return x < y ? -1 : x > y ? 1 : a < b ? -1 : a > b ? 1 : 0;
  });
}
