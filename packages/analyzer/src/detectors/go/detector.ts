import { goFiles, type GoFiles } from "./io.ts";
import { posix } from "node:path";
import type { AnalyzerContext, Detector } from "../../detector.ts";
import { EnvUseSet } from "../../env-rules.ts";
import type { EnvVarUse, Experiment, Parameter } from "../../model.ts";
import { children, type Node } from "../../syntax.ts";
import { goEnvUses } from "./env.ts";
import { goFlagParameters, goPositionalParameters } from "./flags.ts";
import { goImports } from "./literals.ts";
import { goFrameworks, moduleName, parseGoMod, type GoMod } from "./mod.ts";

// Go: every directory whose package is `main` and has `func main()` is a
// program (`go run ./dir`), with the flags it declares through the standard
// flag package; plus the environment variables all Go code reads.

interface GoFileFacts {
  packageName: string;
  hasMain: boolean;
  doc: string | null;
  parameters: Parameter[];
  envVars: EnvVarUse[];
  /** The files a main package's file names for reading and writing. */
  files: GoFiles;
}

const SKIPPED_SEGMENTS = new Set(["vendor", "testdata"]);

export const detectGo: Detector = (ctx) => {
  const mods = new Map<string, GoMod>();
  const byDir = new Map<string, GoFileFacts[]>();
  const envFound = new EnvUseSet();
  for (const file of ctx.files) {
    if (ctx.outOfTime()) break;
    const base = posix.basename(file.path);
    const dir = posix.dirname(file.path) === "." ? "" : posix.dirname(file.path);
    if (dir.split("/").some((s) => SKIPPED_SEGMENTS.has(s))) continue;
    if (base === "go.mod") {
      const text = ctx.readText(file.path);
      if (text !== null) mods.set(dir, parseGoMod(text));
      continue;
    }
    if (!base.endsWith(".go") || base.endsWith("_test.go")) continue;
    const facts = fileFacts(ctx, file.path);
    if (!facts) continue;
    const list = byDir.get(dir) ?? [];
    list.push(facts);
    byDir.set(dir, list);
    envFound.addAll(facts.envVars);
  }
  const workspace = ctx.byPath.has("go.work");
  const experiments: Experiment[] = [];
  for (const [dir, files] of [...byDir].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const experiment = programExperiment(dir, files, mods, workspace);
    if (experiment) experiments.push(experiment);
  }
  return {
    experiments,
    envVars: envFound.list(),
    frameworks: goFrameworks([...mods.values()].flatMap((m) => m.requires)),
  };
};

/** `go run ./dir` for a directory of package main with a `func main()`, with the flags its files declare. */
function programExperiment(dir: string, files: GoFileFacts[], mods: Map<string, GoMod>, workspace: boolean): Experiment | null {
  const mains = files.filter((f) => f.packageName === "main");
  if (!mains.some((f) => f.hasMain) || /\s/.test(dir)) return null;
  const command = runCommand(dir, mods, workspace);
  const seen = new Set<string>();
  const parameters = mains.flatMap((f) => f.parameters).filter((p) => (seen.has(p.name) ? false : (seen.add(p.name), true)));
  const rootModule = mods.get("")?.module;
  const title = dir === "" ? (rootModule ? moduleName(rootModule) : "main") : posix.basename(dir);
  const id = dir === "" ? "go:." : `go:./${dir}`;
  if (id.length > 512) return null;
  return {
    id,
    title: title.slice(0, 512),
    description: mains.find((f) => f.doc)?.doc ?? null,
    entry_point: command.join(" "),
    command,
    language: "go",
    kind: "go-main",
    path: dir === "" ? "." : dir,
    inputs: [...new Set(mains.flatMap((f) => f.files.inputs))].sort().slice(0, 256),
    outputs: [...new Set(mains.flatMap((f) => f.files.outputs))].sort().slice(0, 256),
    parameters: parameters.slice(0, 256),
  };
}

/**
 * `go run ./dir` from the root; a package inside a nested module (one with
 * its own go.mod) is not part of the root module, so it is run from its
 * module's folder with `go -C`, unless a go.work ties the modules together.
 */
function runCommand(dir: string, mods: ReadonlyMap<string, GoMod>, workspace: boolean): string[] {
  const target = (rel: string) => (rel === "" ? "." : `./${rel}`);
  if (!workspace) {
    for (let m = dir; m !== ""; m = posix.dirname(m) === "." ? "" : posix.dirname(m)) {
      if (mods.has(m)) return ["go", "-C", m, "run", target(dir === m ? "" : dir.slice(m.length + 1))];
    }
  }
  return ["go", "run", target(dir)];
}

// Cheap text gates before a parse: a file that is not `package main` and never
// names Getenv/LookupEnv has nothing for this detector.
const MAYBE_MAIN = /\bpackage\s+main\b/;

function fileFacts(ctx: AnalyzerContext, path: string): GoFileFacts | null {
  const text = ctx.readText(path);
  if (text === null) return null;
  if (!MAYBE_MAIN.test(text) && !text.includes("Getenv") && !text.includes("LookupEnv")) return null;
  try {
    return ctx.syntax.parse("go", text, (root) => factsOfTree(root, path))?.value ?? null;
  } catch {
    // Whatever a hostile file does to the reading of it, the analysis carries on without it.
    return null;
  }
}

function factsOfTree(root: Node, path: string): GoFileFacts | null {
  const clause = children(root).find((c) => c.type === "package_clause");
  if (!clause || excludedByBuildTag(root, clause)) return null;
  const packageName = children(clause)[0]?.text ?? "";
  const imports = goImports(root);
  const isMain = packageName === "main";
  const flagAlias = imports.get("flag");
  const osAlias = imports.get("os");
  return {
    packageName,
    hasMain: isMain && children(root).some(isMainFunc),
    doc: isMain ? docComment(clause) : null,
    parameters: isMain && flagAlias ? [...goFlagParameters(root, flagAlias, imports.get("time") ?? null), ...goPositionalParameters(root, flagAlias)] : [],
    envVars: osAlias ? goEnvUses(root, path, osAlias, imports.get("cmp") ?? null) : [],
    files: isMain && (osAlias || imports.has("io/ioutil")) ? goFiles(root, imports) : { inputs: [], outputs: [] },
  };
}

function isMainFunc(n: Node): boolean {
  if (n.type !== "function_declaration" || n.childForFieldName("name")?.text !== "main") return false;
  if (n.childForFieldName("type_parameters")) return false;
  return children(n.childForFieldName("parameters") ?? n).length === 0 && !n.childForFieldName("result");
}

// `//go:build ignore` (and the old `// +build ignore`) keeps a file out of every build: generators, examples.
function excludedByBuildTag(root: Node, clause: Node): boolean {
  for (const c of children(root)) {
    if (c.startIndex >= clause.startIndex) break;
    if (c.type !== "comment") continue;
    const m = /^\/\/\s*(?:go:build|\+build)\s+(.*)$/.exec(c.text.trim());
    if (m?.[1] && /(^|[^!\w])ignore\b/.test(m[1])) return true;
  }
  return false;
}

/** The comment directly above `package main` (no blank line between), as text. */
function docComment(clause: Node): string | null {
  const lines: string[][] = [];
  let expectRow = clause.startPosition.row;
  for (let c = clause.previousSibling; c?.type === "comment"; c = c.previousSibling) {
    if (c.endPosition.row !== expectRow - 1 && !(c.endPosition.row === expectRow && c.text.startsWith("/*"))) break;
    // Directives (`//go:generate ...`) are for the tool, not the reader.
    if (!/^\/\/(?:[a-z0-9]+:[a-z0-9]|line |export |extern )/.test(c.text)) lines.unshift(commentText(c.text));
    expectRow = c.startPosition.row;
  }
  const text = lines
    .flat()
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  return text ? text.slice(0, 4096) : null;
}

function commentText(raw: string): string[] {
  if (raw.startsWith("//")) return [raw.slice(2).replace(/^ /, "").trimEnd()];
  return raw
    .slice(2, -2)
    .split(/\r?\n/)
    .map((l) => l.replace(/^\s*\*? ?/, "").trimEnd());
}
