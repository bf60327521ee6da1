import type { AnalyzerContext } from "../../detector.ts";
import type { Parameter } from "../../model.ts";
import { descendants, type Grammar, type Node } from "../../syntax.ts";
import { commanderFacts } from "./commander.ts";
import { callArguments, calleeName, clip, importedModules, stringValue, topLevelValue, unwrap } from "./literals.ts";
import { parseArgsParameters } from "./parseargs.ts";
import { listenPort, portParameter, type PortSource } from "./web.ts";
import { yargsFacts } from "./yargs.ts";
import { posix } from "node:path";

// What one entry file (a bin, or the file an npm script runs) tells about a
// run: the options it parses and the files it names for reading or writing.

export const NODE_SOURCE_EXTENSIONS = [".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx"];
const TYPESCRIPT_EXTENSIONS = [".ts", ".mts", ".cts", ".tsx"];

export interface EntryFacts {
  parameters: Parameter[];
  /** Sub-commands (commander `.command()`, yargs named commands), each run as `<bin> <name>`. */
  subcommands: { name: string; parameters: Parameter[]; description: string | null }[];
  /** With sub-commands: whether the program also runs without one. */
  runsAlone: boolean;
  inputs: string[];
  outputs: string[];
}

const EMPTY: EntryFacts = { parameters: [], subcommands: [], runsAlone: true, inputs: [], outputs: [] };

export function grammarFor(path: string): Grammar | null {
  const ext = extension(path);
  if (ext === ".tsx") return "tsx";
  if (ext === ".ts" || ext === ".mts" || ext === ".cts") return "typescript";
  return NODE_SOURCE_EXTENSIONS.includes(ext) ? "javascript" : null;
}

export const isTypeScript = (path: string): boolean => TYPESCRIPT_EXTENSIONS.includes(extension(path));

function extension(path: string): string {
  const base = path.slice(path.lastIndexOf("/") + 1);
  const dot = base.lastIndexOf(".");
  return dot > 0 ? base.slice(dot).toLowerCase() : "";
}

export function entryFacts(ctx: AnalyzerContext, path: string): EntryFacts {
  const text = ctx.readText(path);
  if (text === null) return EMPTY;
  // A bin without an extension is JavaScript with a shebang.
  const grammar = grammarFor(path) ?? (extension(path) === "" ? "javascript" : null);
  if (!grammar) return EMPTY;
  try {
    const parsed = ctx.syntax.parse(grammar, text, (root) => ({
      ...optionParameters(root),
      ...fileNames(root, path),
      port: text.includes(".listen(") ? listenPort(root) : null,
      imports: [...importedModules(root)].filter((m) => m.startsWith("./") || m.startsWith("../")),
    }));
    if (!parsed) return EMPTY;
    const { port, imports, ...facts } = parsed.value;
    // A server started in a module the entry imports (`import "./server.js"`, `require("./app")`).
    const found = port ?? importedListenPort(ctx, path, imports);
    const param = facts.parameters.some((p) => p.name === "port") ? null : portParameter(found);
    return param ? { ...facts, parameters: [...facts.parameters, param].slice(0, 256) } : facts;
  } catch {
    // Whatever a hostile file does to the reading of it, the analysis carries on without it.
    return EMPTY;
  }
}

/** The port a module the entry imports directly listens on (the first that tells one). */
function importedListenPort(ctx: AnalyzerContext, from: string, specifiers: readonly string[]): PortSource | null {
  for (const spec of specifiers.slice(0, 32)) {
    const joined = posix.normalize(posix.join(posix.dirname(from), spec));
    // TypeScript sources import their siblings by the built name (`./app.js` for app.ts).
    const stem = joined.replace(/\.(m|c)?js$/, "");
    const path = [joined, ...NODE_SOURCE_EXTENSIONS.map((e) => stem + e), ...NODE_SOURCE_EXTENSIONS.map((e) => `${joined}/index${e}`)].find((p) =>
      ctx.byPath.has(p),
    );
    const grammar = path ? grammarFor(path) : null;
    const text = path && grammar ? ctx.readText(path) : null;
    if (!text?.includes(".listen(")) continue;
    const port = ctx.syntax.parse(grammar!, text, (root) => listenPort(root))?.value;
    if (port) return port;
  }
  return null;
}

const COMMANDER = new Set(["commander", "@commander-js/extra-typings"]);
const YARGS = new Set(["yargs", "yargs/yargs"]);
const UTIL = new Set(["util", "node:util"]);

function optionParameters(root: Node): Pick<EntryFacts, "parameters" | "subcommands" | "runsAlone"> {
  const modules = importedModules(root);
  const params: Parameter[] = [];
  const subcommands: EntryFacts["subcommands"] = [];
  let runsAlone = true;
  const add = (subs: EntryFacts["subcommands"]) => {
    for (const sub of subs) if (!subcommands.some((s) => s.name === sub.name)) subcommands.push({ ...sub, parameters: unique(sub.parameters) });
  };
  if ([...modules].some((m) => COMMANDER.has(m))) {
    const facts = commanderFacts(root);
    params.push(...facts.parameters);
    add(facts.subcommands);
    runsAlone &&= facts.runsAlone;
  }
  if ([...modules].some((m) => YARGS.has(m))) {
    const facts = yargsFacts(root);
    params.push(...facts.parameters);
    add(facts.subcommands);
    runsAlone &&= facts.runsAlone;
  }
  if ([...modules].some((m) => UTIL.has(m))) params.push(...parseArgsParameters(root));
  return { parameters: unique(params), subcommands: subcommands.slice(0, 64), runsAlone };
}

function unique(params: Parameter[]): Parameter[] {
  const seen = new Set<string>();
  return params.filter((p) => (seen.has(p.name) ? false : (seen.add(p.name), true))).slice(0, 256);
}

const READS = new Set(["readFileSync", "readFile", "createReadStream"]);
const WRITES = new Set(["writeFileSync", "writeFile", "createWriteStream", "appendFileSync", "appendFile"]);

function fileNames(root: Node, path: string): { inputs: string[]; outputs: string[] } {
  const inputs = new Set<string>();
  const outputs = new Set<string>();
  const dir = posix.dirname(path);
  for (const call of descendants(root, "call_expression")) {
    const name = calleeName(call);
    const into = name && READS.has(name) ? inputs : name && WRITES.has(name) ? outputs : null;
    if (!into) continue;
    const file = fileArgument(callArguments(call)[0], root, dir, 0);
    if (file && file !== "." && !file.startsWith("../")) into.add(clip(file, 4096));
  }
  const sorted = (s: Set<string>) => [...s].sort().slice(0, 256);
  return { inputs: sorted(inputs), outputs: sorted(outputs) };
}

const PATH_JOINS = new Set(["join", "resolve"]);

/** A top-level `const name = value`'s value (a `let` or `var` may be assigned again). */
function topLevelConst(root: Node, name: string): Node | null {
  const value = topLevelValue(root, name);
  let decl = value?.parent ?? null;
  while (decl && decl.type !== "lexical_declaration" && decl.type !== "variable_declaration") decl = decl.parent;
  return decl?.firstChild?.text === "const" ? value : null;
}

/**
 * The path a call is given, as the repository's root sees it: a literal; the
 * literal fallback of `path ?? "out/report.md"` or `process.env.X ||
 * "data/x.json"` (what is used when nothing else is given); a top-level
 * constant holding one of those; `path.join(__dirname, "data", "x.json")`
 * (from the file's own folder) or a join of literals. Null otherwise.
 */
function fileArgument(node: Node | null | undefined, root: Node, dir: string, depth: number): string | null {
  const n = unwrap(node);
  if (!n || depth > 8) return null;
  if (n.type === "binary_expression" && ["??", "||"].includes(n.childForFieldName("operator")?.text ?? "")) {
    return fileArgument(n.childForFieldName("right"), root, dir, depth + 1);
  }
  if (n.type === "identifier") return n.text === "__dirname" ? dir : fileArgument(topLevelConst(root, n.text), root, dir, depth + 1);
  if (
    n.type === "call_expression" &&
    PATH_JOINS.has(calleeName(n) ?? "") &&
    /^(path|posix)\.(join|resolve)$/.test(n.childForFieldName("function")?.text ?? "")
  ) {
    const parts = callArguments(n).map((a) => fileArgument(a, root, dir, depth + 1));
    return parts.length && parts.every((p) => p !== null) ? posix.normalize(posix.join(...parts)) : null;
  }
  return stringValue(n);
}
