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
