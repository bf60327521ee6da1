import type { AnalyzerContext } from "../../detector.ts";
import { children, descendants, type Node } from "../../syntax.ts";
import { argparseFacts, type ArgparseFacts } from "./argparse.ts";
import { readImports, type PythonImports } from "./names.ts";

// Options parsed in a helper of another module: `args = get_args()` with
// `from utils.options import get_args`, or `options.get_test_args()` with
// `from utils import options`. The helper's own body (and the functions of its
// module it calls, `get_args` → `get_parser`) declares the arguments, so only
// that parser counts, not every parser of the module.

/** A call to a function of another module: the files it may be in, most likely first, and the function's name. */
export interface HelperCall {
  candidates: string[];
  name: string;
  /** Made by a top-level statement whose result becomes the options (`args = get_args()`), so it parses when the file is run. */
  topLevel: boolean;
}

/** What programs call the parsed options. */
const OPTIONS_NAME = /^(args|opts?|options|config|cfg|hparams|hps|flags|params|arguments)$/i;

/** Calls to functions imported from other modules (`f()` for `from m import f`, `m.f()` for `import m` or `from p import m`). */
export function helperCalls(root: Node, imports: PythonImports, path: string): HelperCall[] {
  const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "";
  const out: HelperCall[] = [];
  const seen = new Set<string>();
  for (const call of descendants(root, "call")) {
    const fn = call.childForFieldName("function");
    let module: string | null = null;
    let name: string | null = null;
    if (fn?.type === "identifier") {
      const bound = imports.bindings.get(fn.text);
      if (bound?.includes(".")) [module, name] = [bound.slice(0, bound.lastIndexOf(".")), bound.slice(bound.lastIndexOf(".") + 1)];
    } else if (fn?.type === "attribute" && fn.childForFieldName("object")?.type === "identifier") {
      module = imports.bindings.get(fn.childForFieldName("object")!.text) ?? null;
      name = fn.childForFieldName("attribute")?.text ?? null;
    }
    if (!module || !name || seen.has(`${module}:${name}`)) continue;
    seen.add(`${module}:${name}`);
    out.push({ candidates: moduleFiles(module, dir), name, topLevel: atTopLevel(call) && OPTIONS_NAME.test(assignedName(call) ?? "") });
    if (out.length >= 32) break;
  }
  return out;
}

/** Files a dotted module may be: from the root, from `src/`, and from the script's folder (on sys.path when it runs); relative imports from its folder. */
function moduleFiles(module: string, dir: string): string[] {
  const dots = /^\.*/.exec(module)![0].length;
  const rest = module.slice(dots).split(".").filter(Boolean).join("/");
  const bases: string[] = [];
  if (dots > 0) {
    const parts = dir ? dir.split("/") : [];
    if (dots - 1 > parts.length) return [];
    bases.push([...parts.slice(0, parts.length - (dots - 1)), rest].filter(Boolean).join("/"));
  } else {
    bases.push(rest, `src/${rest}`);
    if (dir) bases.push(`${dir}/${rest}`);
  }
  return bases.filter(Boolean).flatMap((b) => [`${b}.py`, `${b}/__init__.py`]);
}

/** `x = call` (also `x, rest = call`): the first name. */
function assignedName(call: Node): string | null {
  const a = call.parent;
  if (a?.type !== "assignment" || !a.childForFieldName("right")?.equals(call)) return null;
  const left = a.childForFieldName("left");
  const first = left?.type === "pattern_list" || left?.type === "tuple_pattern" ? left.firstNamedChild : left;
  return first?.type === "identifier" ? first.text : null;
}

function atTopLevel(node: Node): boolean {
  for (let p = node.parent; p; p = p.parent) {
    if (p.type === "function_definition" || p.type === "class_definition" || p.type === "lambda") return false;
  }
  return true;
}

/** What a helper declares, and whether it parses (rather than only build a parser). */
export interface HelperOptions {
  facts: ArgparseFacts;
  parses: boolean;
}

const PARSE_METHODS = new Set(["parse_args", "parse_known_args", "parse_intermixed_args"]);

/**
 * The argparse options the first of the calls that reaches a helper declaring
 * any gives; null when none does. Each module file is parsed at most once per
 * analysis (`cache`).
 */
export function helperOptions(ctx: AnalyzerContext, calls: readonly HelperCall[], cache: Map<string, HelperOptions | null>): HelperOptions | null {
  for (const call of calls) {
    const path = call.candidates.find((p) => ctx.byPath.has(p));
    if (!path) continue;
    const key = `${path}#${call.name}`;
    if (!cache.has(key)) {
      const source = ctx.readText(path);
      const found =
        source === null || !source.includes("add_argument") ? null : (ctx.syntax.parse("python", source, (root) => optionsOf(root, call.name))?.value ?? null);
      cache.set(key, found);
    }
    const found = cache.get(key);
    if (found) return found;
  }
  return null;
}

/** The options the module-level function `name` declares, following the module's own functions it calls (three deep). */
function optionsOf(root: Node, name: string): HelperOptions | null {
  const functions = new Map<string, Node>();
  for (const stmt of children(root)) {
    const def = stmt.type === "decorated_definition" ? stmt.childForFieldName("definition") : stmt;
    const fname = def?.type === "function_definition" ? def.childForFieldName("name")?.text : undefined;
    if (def && fname && !functions.has(fname)) functions.set(fname, def);
  }
  if (!functions.has(name)) return null;
  const calls: Node[] = [];
  const visited = new Set<string>();
  const visit = (fname: string, depth: number) => {
    const def = functions.get(fname);
    if (!def || visited.has(fname) || depth > 3) return;
    visited.add(fname);
    for (const call of descendants(def, "call")) {
      calls.push(call);
      const fn = call.childForFieldName("function");
      if (fn?.type === "identifier") visit(fn.text, depth + 1);
    }
  };
  visit(name, 0);
  const facts = argparseFacts(calls, readImports(root));
  if (!facts.parameters.length && !facts.subcommands.length) return null;
  const parses = calls.some((c) => {
    const fn = c.childForFieldName("function");
    return fn?.type === "attribute" && PARSE_METHODS.has(fn.childForFieldName("attribute")?.text ?? "");
  });
  return { facts, parses };
}
