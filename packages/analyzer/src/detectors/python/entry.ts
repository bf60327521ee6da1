import type { EnvVarUse, Parameter } from "../../model.ts";
import { children, descendants, type Node } from "../../syntax.ts";
import { argparseFacts } from "./argparse.ts";
import { clickFacts } from "./click.ts";
import { addParameterPaths, fileAccesses } from "./io.ts";
import type { FileRole } from "./params.ts";
import { docstring, stringLiteral, trailingComment } from "./literals.ts";
import { qualifiedName, type PythonImports } from "./names.ts";
import { uniqueParameters, withNote } from "./params.ts";
import { fireCommands, typerCommands } from "./typer.ts";
import { literal } from "./literals.ts";

// What a runnable Python file tells about itself: its docstring, its
// command-line parameters (argparse or click), and the files it reads and writes.

export interface EntryFacts {
  /** The module docstring, cleaned; null when there is none. */
  docstring: string | null;
  parameters: Parameter[];
  /** The parser's description or the command's help, when the code gives one. */
  cliDescription: string | null;
  inputs: string[];
  outputs: string[];
  /** click options that fall back to an environment variable. */
  envVars: EnvVarUse[];
  /** The file runs a nanoGPT-style configurator, which also takes config files as positional arguments. */
  configurator?: boolean;
  /** Sub-commands (argparse sub-parsers, click group commands, a Typer app's commands), each run as `<command> <name>`. */
  subcommands: { name: string; parameters: Parameter[]; description: string | null }[];
}

/** The top-level `if __name__ == "__main__":` block, either way round, either quote. */
export function mainBlock(root: Node): Node | null {
  for (const stmt of children(root)) {
    if (stmt.type !== "if_statement") continue;
    let cond = stmt.childForFieldName("condition");
    while (cond?.type === "parenthesized_expression") cond = cond.firstNamedChild;
    if (cond?.type !== "comparison_operator") continue;
    const operands = children(cond);
    const ops = cond.childrenForFieldName("operators");
    if (operands.length !== 2 || ops.length !== 1 || ops[0]?.type !== "==") continue;
    const [a, b] = operands as [Node, Node];
    const isName = (n: Node) => n.type === "identifier" && n.text === "__name__";
    if ((isName(a) && stringLiteral(b) === "__main__") || (isName(b) && stringLiteral(a) === "__main__")) {
      return stmt.childForFieldName("consequence");
    }
  }
  return null;
}

/** Names of the functions the code run on start calls: in the main block, or in top-level statements. */
function startupCalls(root: Node, main: Node | null): Set<string> {
  const names = new Set<string>();
  const scopes = main ? [main] : children(root).filter((c) => c.type === "expression_statement");
  for (const scope of scopes) {
    for (const call of descendants(scope, "call")) {
      const fn = call.childForFieldName("function");
      if (fn?.type === "identifier") names.add(fn.text);
    }
  }
  return names;
}

export function entryFacts(root: Node, imports: PythonImports, path: string, extraCommandNames: ReadonlySet<string> = new Set()): EntryFacts {
  const calls = descendants(root, "call");
  const argparse = argparseFacts(calls, imports);
  const preferred = new Set([...startupCalls(root, mainBlock(root)), ...extraCommandNames]);
  const click = clickFacts(root, imports, preferred, path);
  const typer = [...typerCommands(root, imports), ...fireCommands(root, imports)];
  const direct = typer.find((t) => t.name === null);
  const globals = configuratorGlobals(root);
  const parameters = uniqueParameters([...argparse.parameters, ...(click?.parameters ?? []), ...(direct?.parameters ?? []), ...globals]);
  const files = fileAccesses(calls, imports, pathValues(root, parameters));
  addParameterPaths(parameters, files, new Map([...(click?.roles ?? []), ...argparse.roles]));
  const subcommands: EntryFacts["subcommands"] = [];
  for (const sub of [...argparse.subcommands, ...(click?.subcommands ?? []), ...typer.filter((t) => t.name !== null)]) {
    if (subcommands.some((s) => s.name === sub.name)) continue;
    const own = uniqueParameters(sub.parameters);
    addParameterPaths(own, files, "roles" in sub ? (sub.roles as Map<string, FileRole>) : new Map<string, FileRole>());
    subcommands.push({ name: sub.name!, parameters: own, description: sub.description });
  }
  return {
    docstring: docstring(root),
    parameters,
    cliDescription: argparse.description ?? click?.description ?? direct?.description ?? null,
    inputs: [...files.inputs].sort(),
    outputs: [...files.outputs].sort(),
    envVars: click?.envVars ?? [],
    subcommands,
    ...(globals.length > 0 && { configurator: true }),
  };
}

/** The string values paths may be built from: module-level string constants, then the parameters' defaults (which win). */
export function pathValues(root: Node, parameters: readonly Parameter[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const stmt of children(root)) {
    const a = stmt.type === "expression_statement" ? stmt.firstNamedChild : null;
    if (a?.type !== "assignment" || a.childForFieldName("left")?.type !== "identifier") continue;
    const value = stringLiteral(a.childForFieldName("right"));
    if (value !== null && value.length <= 4096) out.set(a.childForFieldName("left")!.text, value);
  }
  for (const p of parameters) if (typeof p.value === "string" && p.value) out.set(p.name, p.value);
  return out;
}

/**
 * nanoGPT's configurator: `exec(open("configurator.py").read())` lets
 * `--key=value` (and config files) override the module's globals, so the
 * literal globals assigned above that line are the parameters.
 */
export function configuratorGlobals(root: Node): Parameter[] {
  const statements = children(root);
  const at = statements.findIndex((stmt) => stmt.type === "expression_statement" && /^exec\(\s*open\(.*config.*\)\.read\(\)\s*\)$/is.test(stmt.text));
  if (at < 0) return [];
  const out: Parameter[] = [];
  for (const stmt of statements.slice(0, at)) {
    const a = stmt.type === "expression_statement" ? stmt.firstNamedChild : null;
    if (a?.type !== "assignment") continue;
    const left = a.childForFieldName("left");
    const lit = literal(a.childForFieldName("right"));
    if (left?.type !== "identifier" || !lit || left.text.startsWith("_")) continue;
    const category = lit.kind === "bool" ? "boolean" : lit.kind === "int" ? "integer" : lit.kind === "float" ? "number" : "string";
    out.push({
      name: left.text,
      value: lit.value,
      category,
      cli_option: `--${left.text}=`,
      choices: null,
      description: withNote(trailingComment(stmt), lit),
      required: false,
    });
  }
  return out;
}

const PARSE_METHODS = new Set(["parse_args", "parse_known_args", "parse_intermixed_args"]);
const RUNNERS = new Set(["fire.Fire", "typer.run"]);

/**
 * Whether importing the file runs a command line, with no main block: a
 * top-level statement parses the arguments (`args = parser.parse_args()`),
 * hands over to fire or typer, starts a Typer app or a click command, or calls
 * a function of the file that does (`main()` at the bottom of a script).
 */
export function runsOnImport(root: Node, imports: PythonImports): boolean {
  const functions = new Map<string, Node>();
  const commands = new Set<string>();
  for (const stmt of children(root)) {
    const def = stmt.type === "decorated_definition" ? stmt.childForFieldName("definition") : stmt;
    if (def?.type !== "function_definition") continue;
    const name = def.childForFieldName("name")?.text;
    if (!name) continue;
    functions.set(name, def);
    if (stmt.type === "decorated_definition" && children(stmt).some((d) => d.type === "decorator" && /(command|group)/.test(d.text))) commands.add(name);
  }
  const apps = new Set<string>();
  // Most files import no Typer: spare them a walk over every call.
  const typer = [...imports.bindings.values()].some((m) => m === "typer" || m.startsWith("typer."));
  for (const call of typer ? descendants(root, "call") : []) {
    if (qualifiedName(call.childForFieldName("function"), imports) !== "typer.Typer") continue;
    const left = call.parent?.type === "assignment" ? call.parent.childForFieldName("left") : null;
    if (left?.type === "identifier") apps.add(left.text);
  }
  const seen = new Set<string>();
  const runs = (scope: Node, depth: number): boolean => {
    for (const call of descendants(scope, "call")) {
      if (insideDefinition(call, scope)) continue;
      const fn = call.childForFieldName("function");
      if (fn?.type === "attribute" && PARSE_METHODS.has(fn.childForFieldName("attribute")?.text ?? "")) return true;
      const qualified = qualifiedName(fn, imports);
      if (qualified && RUNNERS.has(qualified)) return true;
      if (fn?.type !== "identifier") continue;
      if (apps.has(fn.text) || commands.has(fn.text)) return true;
      const body = functions.get(fn.text);
      if (body && depth < 3 && !seen.has(fn.text)) {
        seen.add(fn.text);
        if (runs(body.childForFieldName("body") ?? body, depth + 1)) return true;
      }
    }
    return false;
  };
  // Top-level statements only: what a def or class holds runs when called, not on import.
  for (const stmt of children(root)) {
    if (stmt.type === "function_definition" || stmt.type === "class_definition" || stmt.type === "decorated_definition") continue;
    if (runs(stmt, 0)) return true;
  }
  return configuratorGlobals(root).length > 0;
}

/** Whether node sits in a def, lambda or class nested inside scope (so it does not run when scope does). */
function insideDefinition(node: Node, scope: Node): boolean {
  for (let p = node.parent; p && !p.equals(scope); p = p.parent) {
    if (p.type === "function_definition" || p.type === "lambda" || p.type === "class_definition") return true;
  }
  return false;
}
