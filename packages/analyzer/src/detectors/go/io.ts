import { posix } from "node:path";
import { descendants, type Node } from "../../syntax.ts";
import { goString } from "./literals.ts";

// Files a Go program reads and writes, where the source spells the path out:
// the path handed to os.Open / os.ReadFile / os.ReadDir (read), os.Create /
// os.WriteFile / os.MkdirAll (written), os.OpenFile (by its flags), and the
// same functions of io/ioutil, and the templates html/template and
// text/template parse (ParseFiles), written as a literal, a constant, a flag's
// default (`out := flag.String("out", "report.json", ...)` then
// `os.Create(*out)`, or flag.StringVar), or filepath.Join / path.Join / `+`
// of those. Anything else (a computed name, an argument) is not a file the
// source names.

export interface GoFiles {
  inputs: string[];
  outputs: string[];
}

type Role = "input" | "output" | "flags";

const OS_FUNCTIONS: Record<string, Role> = {
  Open: "input",
  ReadFile: "input",
  ReadDir: "input",
  Create: "output",
  WriteFile: "output",
  MkdirAll: "output",
  Mkdir: "output",
  OpenFile: "flags",
};
const IOUTIL_FUNCTIONS: Record<string, Role> = { ReadFile: "input", ReadDir: "input", WriteFile: "output" };
const MAX_DEPTH = 8;

interface Names {
  /** Variables holding a flag's value (`out := flag.String(...)`, `flag.StringVar(&out, ...)`) → its default. */
  flags: Map<string, string | null>;
  /** Constants and variables given a string once. */
  strings: Map<string, string | null>;
}

interface Scope {
  os: string | null;
  ioutil: string | null;
  templates: ReadonlySet<string>;
  joins: ReadonlySet<string>;
}

export function goFiles(root: Node, imports: ReadonlyMap<string, string>): GoFiles {
  const scope: Scope = {
    os: imports.get("os") ?? null,
    ioutil: imports.get("io/ioutil") ?? null,
    templates: new Set([imports.get("html/template"), imports.get("text/template")].filter((x): x is string => !!x)),
    joins: new Set([imports.get("path/filepath"), imports.get("path")].filter((x): x is string => !!x)),
  };
  const inputs = new Set<string>();
  const outputs = new Set<string>();
  let names: Names | null = null;
  for (const call of descendants(root, "call_expression")) {
    const role = roleOf(call, scope);
    if (!role) continue;
    const args = argumentsOf(call);
    names ??= readNames(root, imports.get("flag") ?? null);
    // template.ParseFiles(a, b): every argument is read.
    const named = role === "templates" ? args : args.slice(0, 1);
    const writes = role === "output" || (role === "flags" && /O_(WRONLY|RDWR|CREATE|APPEND|TRUNC)/.test(args[1]?.text ?? ""));
    for (const a of named) {
      const path = pathOf(a, names, scope.joins, 0);
      if (path) (writes ? outputs : inputs).add(path);
    }
  }
  const sorted = (s: Set<string>) => [...s].sort().slice(0, 256);
  return { inputs: sorted(inputs), outputs: sorted(outputs) };
}

/** What a call does with the path it is given, if it is one of the functions above. */
function roleOf(call: Node, scope: Scope): Role | "templates" | null {
  const fn = call.childForFieldName("function");
  if (fn?.type !== "selector_expression") return null;
  const operand = fn.childForFieldName("operand");
  const field = fn.childForFieldName("field")?.text ?? "";
  const pkg = operand?.text ?? "";
  if (pkg === scope.os) return OS_FUNCTIONS[field] ?? null;
  if (pkg === scope.ioutil) return IOUTIL_FUNCTIONS[field] ?? null;
  // A template package's ParseFiles, or a template's own (`template.New("x").ParseFiles(...)`).
  return field === "ParseFiles" && (scope.templates.has(pkg) || operand?.type === "call_expression") ? "templates" : null;
}

function argumentsOf(call: Node): Node[] {
  return call.childForFieldName("arguments")?.namedChildren.filter((a): a is Node => a !== null && a.type !== "comment") ?? [];
}

/** A path the expression spells out; null for one it does not (or stdin's "-"). */
function pathOf(node: Node | null, names: Names, joins: ReadonlySet<string>, depth: number): string | null {
  if (!node || depth > MAX_DEPTH) return null;
  const lit = goString(node);
  if (lit !== null) return lit && lit !== "-" && !lit.includes("%") ? lit : null;
  switch (node.type) {
    case "parenthesized_expression":
      return pathOf(node.namedChildren[0] ?? null, names, joins, depth + 1);
    // `*out`, where out := flag.String("out", "report.json", ...)
    case "unary_expression": {
      const operand = node.childForFieldName("operand");
      return node.childForFieldName("operator")?.text === "*" && operand?.type === "identifier" ? (names.flags.get(operand.text) ?? null) : null;
    }
    case "identifier":
      return names.flags.get(node.text) ?? names.strings.get(node.text) ?? null;
    case "binary_expression":
      return concatenated(node, names, joins, depth);
    case "call_expression":
      return joined(node, names, joins, depth);
    default:
      return null;
  }
}

function concatenated(node: Node, names: Names, joins: ReadonlySet<string>, depth: number): string | null {
  if (node.childForFieldName("operator")?.text !== "+") return null;
  const a = pathOf(node.childForFieldName("left"), names, joins, depth + 1);
  const b = a === null ? null : pathOf(node.childForFieldName("right"), names, joins, depth + 1);
  return a !== null && b !== null ? a + b : null;
}

/** filepath.Join / path.Join of parts that are all known. */
function joined(node: Node, names: Names, joins: ReadonlySet<string>, depth: number): string | null {
  const fn = node.childForFieldName("function");
  if (fn?.type !== "selector_expression" || !joins.has(fn.childForFieldName("operand")?.text ?? "") || fn.childForFieldName("field")?.text !== "Join")
    return null;
  const parts: string[] = [];
  for (const a of argumentsOf(node)) {
    const p = pathOf(a, names, joins, depth + 1);
    if (p === null) return null;
    parts.push(p);
  }
  return parts.length ? posix.join(...parts) : null;
}

const FLAG_STRING = new Set(["String", "StringVar"]);

/** The file's flag variables with their string defaults, and its names given one string literal. */
function readNames(root: Node, flag: string | null): Names {
  return { flags: flag ? flagVariables(root, flag) : new Map<string, string | null>(), strings: stringNames(root) };
}

const once = (map: Map<string, string | null>, name: string, value: string | null) => map.set(name, map.has(name) ? null : value);

/** The first name a declaration binds (`out := ...`, `var out = ...`, `const out = ...`). */
function declaredName(holder: Node | null): Node | null {
  if (!holder) return null;
  const left =
    holder.type === "short_var_declaration"
      ? holder.childForFieldName("left")
      : ["var_spec", "const_spec"].includes(holder.type)
        ? holder.childForFieldName("name")
        : null;
  const name = left?.type === "expression_list" ? left.namedChildren[0] : left;
  return name?.type === "identifier" ? name : null;
}

function flagVariables(root: Node, flag: string): Map<string, string | null> {
  const flags = new Map<string, string | null>();
  for (const call of descendants(root, "call_expression")) {
    const fn = call.childForFieldName("function");
    const field = fn?.type === "selector_expression" && fn.childForFieldName("operand")?.text === flag ? fn.childForFieldName("field")?.text : null;
    if (!field || !FLAG_STRING.has(field)) continue;
    const args = argumentsOf(call);
    if (field === "StringVar") {
      const target = args[0]?.type === "unary_expression" ? args[0].childForFieldName("operand") : null;
      if (target?.type === "identifier") once(flags, target.text, goString(args[2]));
      continue;
    }
    // out := flag.String(...), var out = flag.String(...)
    const name = declaredName(call.parent?.type === "expression_list" ? call.parent.parent : call.parent);
    if (name) once(flags, name.text, goString(args[1]));
  }
  return flags;
}

function stringNames(root: Node): Map<string, string | null> {
  const strings = new Map<string, string | null>();
  for (const spec of descendants(root, ["const_spec", "var_spec", "short_var_declaration"])) {
    const right = spec.childForFieldName(spec.type === "short_var_declaration" ? "right" : "value");
    const value = right?.type === "expression_list" ? right.namedChildren : [right];
    const name = declaredName(spec);
    if (!name || value.length !== 1) continue;
    const s = goString(value[0]);
    if (s !== null) once(strings, name.text, s);
  }
  // A name assigned again later holds more than one value.
  for (const a of descendants(root, "assignment_statement")) {
    const left = a.childForFieldName("left");
    for (const n of left?.type === "expression_list" ? left.namedChildren : [left]) if (n?.type === "identifier") strings.set(n.text, null);
  }
  return strings;
}
