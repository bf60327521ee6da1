import type { AnalyzerContext, Detector } from "../../detector.ts";
import type { EnvVarUse, Experiment, Parameter } from "../../model.ts";
import { children, descendants, lineOf, type Node } from "../../syntax.ts";

// Shell scripts (by extension, or executable with a shell shebang) as
// experiments: their positional arguments and getopts options become
// parameters, and `${VAR:?}` / `${VAR:-default}` are the environment variables
// they read. Parsed with the tree-sitter bash grammar.

const SHELLS = new Set(["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh"]);
const MAX_DESCRIPTION = 1000;
const MAX_POSITION = 20;
// Licence notices and init-system headers open many scripts without saying what they do.
const NOT_A_DESCRIPTION =
  /\b(copyright|spdx-license-identifier|licensed under|free software|redistribute it|general public license|all rights reserved|BEGIN INIT INFO)\b/i;

export const detectShell: Detector = (ctx) => {
  const experiments: Experiment[] = [];
  const envVars: EnvVarUse[] = [];
  // Files meant to be sourced: what other scripts (and the README) source, and scripts that only define things.
  const sourced = new Set<string>(readmeSourced(ctx));
  const libraries = new Map<Experiment, { functions: boolean }>();
  for (const file of ctx.files) {
    if (ctx.outOfTime()) break;
    const { path } = file;
    const byExtension = /\.(sh|bash)$/i.test(path);
    if (!mayBeScript(path, byExtension, file.executable)) continue;
    const text = ctx.readText(path);
    if (text === null) continue;
    const shell = shebangInterpreter(text);
    if (byExtension ? shell !== null && !SHELLS.has(shell) : shell === null || !SHELLS.has(shell)) continue;
    const found = readScript(ctx, text);
    const command = [interpreterOf(shell, path, found?.bashOnly ?? false), path];
    experiments.push({
      id: `shell:${path}`,
      title: path.slice(path.lastIndexOf("/") + 1),
      description: found?.description ?? null,
      entry_point: command.join(" "),
      command,
      language: "shell",
      kind: "shell-script",
      path,
      inputs: [],
      outputs: [],
      parameters: found?.parameters ?? [],
    });
    for (const use of found?.envVars ?? []) envVars.push({ ...use, path });
    for (const name of found?.sources ?? []) sourced.add(name);
    if (found?.library) libraries.set(experiments.at(-1)!, { functions: found.functions });
  }
  return { experiments: withoutLibraries(experiments, libraries, sourced), envVars };
};

/** What runs the script: the shebang's zsh or bash, bash for a .bash file or bash syntax, else sh. */
function interpreterOf(shell: string | null, path: string, bashOnly: boolean): string {
  if (shell === "zsh") return "zsh";
  return shell === "bash" || /\.bash$/i.test(path) || bashOnly ? "bash" : "sh";
}

/** A file with no top-level action is a library when it defines functions or another script (or the README) sources it. */
function withoutLibraries(experiments: Experiment[], libraries: ReadonlyMap<Experiment, { functions: boolean }>, sourced: ReadonlySet<string>): Experiment[] {
  return experiments.filter((e) => {
    const lib = libraries.get(e);
    return !lib || !(lib.functions || sourced.has(e.path.slice(e.path.lastIndexOf("/") + 1)));
  });
}

/** A path a script could be run from: unquoted on a command line, not CI's nor a test's, a shell extension or executable. */
function mayBeScript(path: string, byExtension: boolean, executable: boolean): boolean {
  if (/\s/.test(path) || path.startsWith(".github/")) return false;
  if (
    path
      .split("/")
      .slice(0, -1)
      .some((d) => d === "test" || d === "tests")
  )
    return false;
  return byExtension || executable;
}

/** Commands that set the shell up rather than do work: a file of only these (and definitions) does nothing when run. */
const SETUP_COMMANDS = new Set([
  "set",
  "shopt",
  "source",
  ".",
  "unset",
  "alias",
  "unalias",
  "umask",
  "trap",
  "true",
  ":",
  "export",
  "readonly",
  "declare",
  "typeset",
  "local",
  "return",
]);

/** Whether a top-level statement does something when the script runs (a definition, an assignment or a setup command does not). */
function isAction(node: Node): boolean {
  switch (node.type) {
    case "comment":
    case "function_definition":
    case "variable_assignment":
    case "variable_assignments":
    case "declaration_command":
    case "unset_command":
    case "test_command":
      return false;
    case "command":
      return !SETUP_COMMANDS.has(node.childForFieldName("name")?.text ?? "");
    case "if_statement":
    case "elif_clause":
    case "else_clause":
    case "list":
    case "compound_statement":
    case "negated_command":
      return children(node).some(isAction);
    default:
      return true;
  }
}

/** The file names a script sources (`source "$(dirname "$0")/common.sh"`, `. ./env.sh` → common.sh, env.sh). */
function sourcedNames(root: Node): string[] {
  const out: string[] = [];
  for (const cmd of descendants(root, "command")) {
    const name = cmd.childForFieldName("name")?.text;
    if (name !== "source" && name !== ".") continue;
    const arg = cmd.childrenForFieldName("argument").find((c) => c !== null);
    const base = arg?.text.replace(/["']/g, "").split("/").pop();
    if (base && /^[\w.-]+$/.test(base)) out.push(base);
  }
  return out;
}

/** What the README tells users to source (`source scripts/env.sh`). */
function readmeSourced(ctx: AnalyzerContext): string[] {
  const readme = ["README.md", "README.rst", "README.txt", "README", "readme.md"].find((p) => ctx.byPath.has(p));
  const text = readme ? ctx.readText(readme) : null;
  if (!text) return [];
  return [...text.slice(0, 100_000).matchAll(/(?:^|[\s;&|(`])(?:source|\.)\s+["']?[\w./$-]{0,200}?([\w.-]+\.(?:sh|bash|env))\b/gm)].map((m) => m[1]!);
}

/** The interpreter a `#!` line names, through `env` (`#!/usr/bin/env -S bash -e` → "bash"); null without one. */
export function shebangInterpreter(text: string): string | null {
  if (!text.startsWith("#!")) return null;
  const end = text.indexOf("\n");
  const words = text
    .slice(2, Math.min(end < 0 ? text.length : end, 256))
    .trim()
    .split(/\s+/);
  let i = 0;
  const base = (w: string | undefined) => (w ?? "").slice((w ?? "").lastIndexOf("/") + 1);
  if (base(words[0]) === "env") {
    i = 1;
    while (i < words.length && (words[i]!.startsWith("-") || words[i]!.includes("="))) i++;
  }
  return base(words[i]) || null;
}

interface ScriptFacts {
  /** No top-level statement does anything: only definitions, assignments and setup. */
  library: boolean;
  /** It defines functions. */
  functions: boolean;
  /** File names it sources. */
  sources: string[];
  description: string | null;
  parameters: Parameter[];
  envVars: Omit<EnvVarUse, "path">[];
  bashOnly: boolean;
}

function readScript(ctx: AnalyzerContext, text: string): ScriptFacts | null {
  const outcome = ctx.syntax.parse("bash", text, (root) => {
    const assigned = assignedNames(root);
    const forwarded = functionsGivenAllArguments(root);
    return {
      library: !children(root).some(isAction),
      functions: children(root).some((c) => c.type === "function_definition"),
      sources: sourcedNames(root),
      description: headerComment(root),
      parameters: [...getoptsOptions(root), ...positionalParameters(root, forwarded)],
      envVars: environmentReads(root, assigned),
      bashOnly: usesBashSyntax(root),
    };
  });
  return outcome?.value ?? null;
}

/** The first block of comment lines at the top of the script (after the shebang), skipping licence headers and linter directives. */
function headerComment(root: Node): string | null {
  const blocks: string[][] = [];
  let lastRow = -2;
  for (const node of children(root)) {
    if (node.type !== "comment") break;
    const row = node.startPosition.row;
    if (row === 0 && node.text.startsWith("#!")) continue;
    if (row !== lastRow + 1 || blocks.length === 0) blocks.push([]);
    lastRow = row;
    const line = node.text.replace(/^#+/, "").trim();
    if (/^(shellcheck\s|-\*-|vim?:)/.test(line) || !/[\p{L}\p{N}]/u.test(line)) continue;
    blocks.at(-1)!.push(line);
  }
  const block = blocks.find((b) => b.length > 0 && !NOT_A_DESCRIPTION.test(b.join(" ")));
  if (!block) return null;
  const text = block.join(" ").replace(/\s+/g, " ");
  return text.length > MAX_DESCRIPTION ? `${text.slice(0, MAX_DESCRIPTION - 1).trimEnd()}…` : text;
}

interface Expansion {
  name: string;
  /** ":-", "-", ":?", ":=", ... or null for a plain `${X}` / `$X`. */
  operator: string | null;
  /** The nodes after the operator (the default, the message). */
  operand: Node[];
  node: Node;
}

function expansions(root: Node): Expansion[] {
  const out: Expansion[] = [];
  for (const node of descendants(root, ["expansion", "simple_expansion"])) {
    const parts = node.children.filter((c): c is Node => c !== null);
    const nameIndex = parts.findIndex((c) => c.isNamed);
    const nameNode = parts[nameIndex];
    // `${#X}` (length) and `${!X}` (indirection) have a token before the name; `${A[0]}` is a subscript.
    if (!nameNode || nameNode.type !== "variable_name" || nameIndex !== 1) continue;
    const op = parts[nameIndex + 1];
    const operator = op && !op.isNamed && op.type !== "}" ? op.type : null;
    const operand = operator ? parts.slice(nameIndex + 2).filter((c) => c.isNamed) : [];
    out.push({ name: nameNode.text, operator, operand, node: nameNode });
  }
  return out;
}

/** The literal text of a default, or null when it is computed (`$(pwd)`, `$HOME/x`). */
function literal(nodes: Node[]): string | null {
  let text = "";
  for (const node of nodes) {
    if (node.type === "word" || node.type === "number") text += node.text;
    else if (node.type === "raw_string") text += node.text.slice(1, -1);
    else if (node.type === "string") {
      const parts = children(node);
      if (parts.some((p) => p.type !== "string_content")) return null;
      text += node.text.slice(1, -1);
    } else if (node.type === "concatenation") {
      const inner = literal(children(node));
      if (inner === null) return null;
      text += inner;
    } else return null;
  }
  return text;
}

function insideFunction(node: Node): Node | null {
  for (let p = node.parent; p; p = p.parent) if (p.type === "function_definition") return p;
  return null;
}

/** Functions the script calls with all of its own arguments (`main "$@"`), whose `$1` is the script's `$1`. */
function functionsGivenAllArguments(root: Node): Set<string> {
  const out = new Set<string>();
  for (const cmd of descendants(root, "command")) {
    const name = cmd.childForFieldName("name")?.text;
    if (!name) continue;
    const args = cmd.childrenForFieldName("argument").filter((c): c is Node => c !== null);
    if (args.some((a) => /^"?\$\{?[@*]\}?"?$/.test(a.text.trim()))) out.add(name);
  }
  return out;
}

function positionalParameters(root: Node, forwarded: Set<string>): Parameter[] {
  const positions = new Map<number, { required: boolean; value: string | null; hasDefault: boolean }>();
  for (const e of expansions(root)) {
    if (!/^[0-9]+$/.test(e.name)) continue;
    const n = Number(e.name);
    if (n < 1 || n > MAX_POSITION) continue;
    const fn = insideFunction(e.node);
    if (fn && !forwarded.has(fn.childForFieldName("name")?.text ?? "")) continue;
    const seen = positions.get(n) ?? { required: true, value: null, hasDefault: false };
    if (e.operator === ":-" || e.operator === "-") {
      if (!seen.hasDefault) seen.value = literal(e.operand);
      seen.hasDefault = true;
      seen.required = false;
    } else if (e.operator === ":+" || e.operator === "+") seen.required = false;
    positions.set(n, seen);
  }
  const max = Math.max(0, ...positions.keys());
  const out: Parameter[] = [];
  for (let n = 1; n <= max; n++) {
    // A script that reads $2 but never $1 still needs something in first place.
    const { required, value } = positions.get(n) ?? { required: true, value: null };
    out.push({ name: `arg${n}`, cli_option: null, choices: null, description: null, required, ...typed(value) });
  }
  return out;
}

function typed(value: string | null): Pick<Parameter, "value" | "category"> {
  if (value !== null && /^-?(0|[1-9][0-9]*)$/.test(value) && Number.isSafeInteger(Number(value))) return { value: Number(value), category: "integer" };
  if (value !== null && /^-?(0|[1-9][0-9]*)?\.[0-9]+$/.test(value)) return { value: Number(value), category: "number" };
  return { value, category: "string" };
}

/** `getopts "ab:c" opt`: `-a` and `-c` are switches, `-b` takes a value. */
function getoptsOptions(root: Node): Parameter[] {
  const out: Parameter[] = [];
  const seen = new Set<string>();
  const defaults = optionDefaults(root);
  for (const cmd of descendants(root, "command")) {
    if (cmd.childForFieldName("name")?.text !== "getopts") continue;
    const spec = cmd.childrenForFieldName("argument").find((c): c is Node => c !== null);
    const optstring = spec ? literal([spec]) : null;
    if (optstring === null) continue;
    const chars = optstring.replace(/^:/, "");
    for (let i = 0; i < chars.length; i++) {
      const letter = chars[i]!;
      if (!/[A-Za-z0-9]/.test(letter) || seen.has(letter)) continue;
      seen.add(letter);
      const takesValue = chars[i + 1] === ":";
      out.push({
        name: letter,
        cli_option: `-${letter}`,
        choices: null,
        description: null,
        required: false,
        ...(takesValue ? typed(defaults.get(letter) ?? null) : { value: false, category: "flag" as const }),
      });
    }
  }
  return out;
}

/**
 * What each getopts option defaults to: the branch `m) MODEL=$OPTARG ;;` sets
 * MODEL, and the script's first literal assignment of MODEL (`MODEL=base`,
 * before the loop) is the value it has without -m.
 */
function optionDefaults(root: Node): Map<string, string> {
  const firstLiteral = new Map<string, string | null>();
  for (const a of descendants(root, "variable_assignment")) {
    const name = a.childForFieldName("name")?.text;
    const value = a.childForFieldName("value");
    if (!name || firstLiteral.has(name) || (value && /OPTARG/.test(value.text))) continue;
    firstLiteral.set(name, value ? literal([value]) : "");
  }
  const out = new Map<string, string>();
  for (const item of descendants(root, "case_item")) {
    const letters = item
      .childrenForFieldName("value")
      .filter((v): v is Node => v !== null)
      .map((v) => v.text.replace(/\)$/, ""));
    for (const a of children(item)) {
      if (a.type !== "variable_assignment" || !/^"?\$\{?OPTARG\}?"?$/.test(a.childForFieldName("value")?.text ?? "")) continue;
      const initial = firstLiteral.get(a.childForFieldName("name")?.text ?? "");
      for (const letter of letters) if (/^[A-Za-z0-9]$/.test(letter) && initial) out.set(letter, initial);
    }
  }
  return out;
}

/** Names the script sets itself; `X="${X:-default}"` still reads X from the environment, so it does not count. */
function assignedNames(root: Node): Set<string> {
  const out = new Set<string>();
  for (const a of descendants(root, "variable_assignment")) {
    const name = a.childForFieldName("name")?.text;
    const value = a.childForFieldName("value");
    if (!name) continue;
    const selfDefault = value ? expansions(value).some((e) => e.name === name) : false;
    if (!selfDefault) out.add(name);
  }
  for (const f of descendants(root, "for_statement")) {
    const v = f.childForFieldName("variable")?.text;
    if (v) out.add(v);
  }
  for (const cmd of descendants(root, "command")) {
    const name = cmd.childForFieldName("name")?.text;
    if (name !== "read" && name !== "getopts") continue;
    const args = cmd.childrenForFieldName("argument").filter((c): c is Node => c !== null && c.type === "word");
    for (const arg of name === "getopts" ? args.slice(1, 2) : args) if (!arg.text.startsWith("-")) out.add(arg.text);
  }
  for (const decl of descendants(root, "declaration_command")) {
    for (const v of children(decl)) if (v.type === "variable_name" && !decl.text.startsWith("export")) out.add(v.text);
  }
  return out;
}

function environmentReads(root: Node, assigned: Set<string>): Omit<EnvVarUse, "path">[] {
  const byName = new Map<string, Omit<EnvVarUse, "path">>();
  for (const e of expansions(root)) {
    if (/^[0-9]/.test(e.name) || assigned.has(e.name) || e.operator === null) continue;
    let required: boolean;
    if (e.operator === ":?" || e.operator === "?") required = true;
    else if ([":-", "-", ":=", "="].includes(e.operator) && /^[A-Z][A-Z0-9_]*$/.test(e.name)) required = false;
    else continue;
    const seen = byName.get(e.name);
    if (!seen || (required && !seen.required)) byName.set(e.name, { name: e.name, line: lineOf(e.node), required });
  }
  return [...byName.values()].sort((a, b) => a.line - b.line || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Syntax dash would reject, so the script needs bash whatever its shebang says. */
function usesBashSyntax(root: Node): boolean {
  for (const node of descendants(root, [
    "test_command",
    "array",
    "process_substitution",
    "herestring_redirect",
    "function_definition",
    "declaration_command",
  ])) {
    const first = node.child(0)?.type;
    if (
      node.type === "test_command"
        ? first === "[["
        : node.type === "function_definition"
          ? first === "function"
          : node.type === "declaration_command"
            ? first === "declare" || first === "typeset"
            : true
    ) {
      return true;
    }
  }
  return false;
}
