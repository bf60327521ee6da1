import type { Parameter, ParameterCategory } from "../../model.ts";
import { descendants, type Node } from "../../syntax.ts";
import { goDuration, goLiteral, goString } from "./literals.ts";

// Flags a Go program declares with the standard flag package:
// flag.String("name", default, "usage"), flag.IntVar(&v, "name", default,
// "usage"), flag.Func("name", "usage", fn) and the like. Go's flag package
// takes `-name value`, except for booleans, which must be written `-name=false`.

type ValueKind = "string" | "integer" | "number" | "bool" | "duration" | "func" | "boolfunc" | "custom";

interface FlagFunction {
  kind: ValueKind;
  /** Argument positions: the name, the default (null when there is none), the usage. */
  name: number;
  value: number | null;
  usage: number;
}

const BASE: Record<string, ValueKind> = {
  String: "string",
  Int: "integer",
  Int64: "integer",
  Uint: "integer",
  Uint64: "integer",
  Float64: "number",
  Bool: "bool",
  Duration: "duration",
};

const FUNCTIONS = new Map<string, FlagFunction>([
  ...Object.entries(BASE).map(([fn, kind]): [string, FlagFunction] => [fn, { kind, name: 0, value: 1, usage: 2 }]),
  ...Object.entries(BASE).map(([fn, kind]): [string, FlagFunction] => [`${fn}Var`, { kind, name: 1, value: 2, usage: 3 }]),
  ["Func", { kind: "func", name: 0, value: null, usage: 1 }],
  ["BoolFunc", { kind: "boolfunc", name: 0, value: null, usage: 1 }],
  ["Var", { kind: "custom", name: 1, value: null, usage: 2 }],
  ["TextVar", { kind: "custom", name: 1, value: null, usage: 3 }],
]);

/** The flags declared through the package the file imports "flag" as; `time` is the file's name for package time. */
export function goFlagParameters(root: Node, flagAlias: string, timeAlias: string | null): Parameter[] {
  const out: Parameter[] = [];
  for (const call of descendants(root, "call_expression")) {
    const fn = call.childForFieldName("function");
    if (fn?.type !== "selector_expression" || fn.childForFieldName("operand")?.text !== flagAlias) continue;
    const spec = FUNCTIONS.get(fn.childForFieldName("field")?.text ?? "");
    if (!spec) continue;
    const args = call.childForFieldName("arguments")?.namedChildren.filter((a): a is Node => a !== null && a.type !== "comment") ?? [];
    const name = goString(args[spec.name]);
    if (!name || name.length > 256) continue;
    const usage = goString(args[spec.usage]);
    const valueNode = spec.value === null ? null : args[spec.value];
    const { category, value } = categoryAndValue(spec.kind, valueNode ?? null, timeAlias);
    out.push({
      name,
      value,
      category,
      cli_option: category === "boolean" ? `-${name}=` : `-${name}`,
      choices: null,
      description: usage ? unquoteUsage(usage).slice(0, 4096) : null,
      required: false,
    });
  }
  return out;
}

function categoryAndValue(kind: ValueKind, node: Node | null, timeAlias: string | null): { category: ParameterCategory; value: Parameter["value"] } {
  const lit = goLiteral(node);
  switch (kind) {
    case "string":
      return { category: "string", value: lit?.kind === "string" ? lit.value.slice(0, 4096) : null };
    case "integer":
      return { category: "integer", value: lit?.kind === "integer" ? lit.value : null };
    case "number":
      return { category: "number", value: lit?.kind === "integer" || lit?.kind === "float" ? lit.value : null };
    case "bool":
      return { category: "boolean", value: lit?.kind === "bool" ? lit.value : null };
    case "duration":
      return { category: "string", value: goDuration(node, timeAlias) };
    case "boolfunc":
      return { category: "flag", value: false };
    default:
      return { category: "string", value: null };
  }
}

/** flag's own rule: the first `back-quoted` word names the value in help and is shown without its quotes. */
function unquoteUsage(usage: string): string {
  return usage.replace(/`([^`]*)`/, "$1");
}

/**
 * Positional arguments read through the flag package: `flag.Arg(i)` and
 * `flag.Args()` (also sliced, `flag.Args()[1:]`, or indexed). Each is named
 * by the program's usage line (`usage: tool [flags] pattern file...`), else
 * by the variable it is assigned to, else `arg<i>`; the rest of the arguments
 * are one parameter. Those an `flag.NArg() < n` (or `!= n`, `len(flag.Args())`)
 * check demands are required.
 */
export function goPositionalParameters(root: Node, flagAlias: string): Parameter[] {
  const uses: PositionalUses = { variables: new Map(), rest: null, required: 0 };
  for (const call of descendants(root, "call_expression")) {
    const fn = call.childForFieldName("function");
    if (fn?.type !== "selector_expression" || fn.childForFieldName("operand")?.text !== flagAlias) continue;
    const field = fn.childForFieldName("field")?.text;
    if (field === "Arg")
      noteIndex(
        uses,
        call.childForFieldName("arguments")?.namedChildren.find((a) => a?.type !== "comment"),
        call,
      );
    else if (field === "Args") noteArgs(uses, call);
    if (field === "NArg" || field === "Args") uses.required = Math.max(uses.required, demanded(call, field));
  }
  const { variables, rest, required } = uses;
  const count = variables.size ? Math.max(...variables.keys()) + 1 : 0;
  const usage = usageWords(root);
  const positional = (name: string, i: number): Parameter => ({
    name,
    value: null,
    category: "string",
    cli_option: null,
    choices: null,
    description: null,
    required: i < required,
  });
  const out: Parameter[] = [];
  for (let i = 0; i < count; i++) out.push(positional(usage[i] ?? variables.get(i) ?? `arg${i}`, i));
  if (rest?.from === count) out.push(positional(usage[count] ?? rest.variable ?? "args", count));
  return out;
}

interface PositionalUses {
  /** Index → the variable it is assigned to. */
  variables: Map<number, string | null>;
  /** `flag.Args()[from:]`: the rest of the arguments from there. */
  rest: { from: number; variable: string | null } | null;
  /** How many arguments a check demands. */
  required: number;
}

function noteIndex(uses: PositionalUses, indexNode: Node | null | undefined, valueNode: Node): void {
  const lit = goLiteral(indexNode);
  if (lit?.kind === "integer" && lit.value >= 0 && lit.value < 64 && !uses.variables.get(lit.value)) uses.variables.set(lit.value, assignedName(valueNode));
}

/** `flag.Args()` indexed, sliced from a constant, or whole (but not only measured by len). */
function noteArgs(uses: PositionalUses, call: Node): void {
  const parent = call.parent;
  const operand = parent?.childForFieldName("operand")?.equals(call) ?? false;
  if (parent?.type === "index_expression" && operand) return noteIndex(uses, parent.childForFieldName("index"), parent);
  if (parent?.type === "slice_expression" && operand) {
    const start = parent.childForFieldName("start");
    const lit = start ? goLiteral(start) : { kind: "integer" as const, value: 0 };
    if (lit?.kind === "integer" && lit.value >= 0 && lit.value < 64 && !parent.childForFieldName("end"))
      uses.rest = { from: lit.value, variable: assignedName(parent) };
    return;
  }
  if (parent?.type === "argument_list" && parent.parent?.childForFieldName("function")?.text === "len") return;
  uses.rest ??= { from: 0, variable: assignedName(call) };
}

/** How many arguments a check demands: `flag.NArg() < n` (or `!=`, `<=`, `== 0`), or the same of `len(flag.Args())`; 0 when call is in none. */
function demanded(call: Node, field: "NArg" | "Args"): number {
  const len = call.parent?.type === "argument_list" ? call.parent.parent : null;
  const subject = field === "NArg" ? call : len?.type === "call_expression" && len.childForFieldName("function")?.text === "len" ? len : null;
  const cmp = subject?.parent;
  if (!subject || cmp?.type !== "binary_expression" || !cmp.childForFieldName("left")?.equals(subject)) return 0;
  const lit = goLiteral(cmp.childForFieldName("right"));
  if (lit?.kind !== "integer" || lit.value < 0 || lit.value > 64) return 0;
  switch (cmp.childForFieldName("operator")?.text) {
    case "<":
    case "!=":
      return lit.value;
    case "<=":
      return lit.value + 1;
    case "==":
      return lit.value === 0 ? 1 : 0;
    default:
      return 0;
  }
}

/** The variable a value is assigned to (`src := flag.Arg(0)`, `a, b := flag.Arg(0), flag.Arg(1)`, `var src = ...`, `for _, src := range ...`). */
function assignedName(value: Node): string | null {
  const range = value.parent;
  if (range?.type === "range_clause" && range.childForFieldName("right")?.equals(value)) {
    // `for _, path := range flag.Args()`: each argument is a path.
    const item = range.childForFieldName("left")?.namedChildren[1];
    return item?.type === "identifier" && item.text !== "_" ? item.text : null;
  }
  const list = value.parent;
  if (list?.type !== "expression_list") return null;
  const at = list.namedChildren.findIndex((c) => c?.equals(value));
  const stmt = list.parent;
  if (!stmt || !["short_var_declaration", "assignment_statement", "var_spec"].includes(stmt.type)) return null;
  const names =
    stmt.type === "var_spec" ? stmt.childrenForFieldName("name") : (stmt.childForFieldName("left")?.namedChildren.filter((c): c is Node => c !== null) ?? []);
  const name = names[at];
  return name?.type === "identifier" && name.text !== "_" ? name.text : null;
}

/** The positional words of the first `usage: tool [flags] pattern file...` string in the file. */
function usageWords(root: Node): string[] {
  for (const s of descendants(root, ["interpreted_string_literal", "raw_string_literal"])) {
    const text = goString(s);
    const m = text && /usage:\s*\S+\s+([^\n\\]*)/i.exec(text);
    if (!m) continue;
    let line = m[1]!;
    for (let prev = ""; prev !== line;) [prev, line] = [line, line.replace(/\[[^[\]]*\]/g, " ")];
    return line
      .split(/\s+/)
      .filter((w) => w && !w.startsWith("-") && !/^(flags|options)$/i.test(w))
      .map((w) => w.replace(/^<|\.{3}$|>$/g, "").replace(/\.{3}$|>$/g, ""))
      .filter((w) => /^[A-Za-z_][\w-]*$/.test(w));
  }
  return [];
}
