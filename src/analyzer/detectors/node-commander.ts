import type { Parameter, ParameterCategory } from "../model.ts";
import { descendants, type Node } from "../syntax.ts";
import { callArguments, calleeName, calleeObject, callPosition, clip, literal, literalArray, stringValue, unwrap, type Literal } from "./node-literals.ts";

// Options a commander program declares: `.option()`, `.requiredOption()`,
// `.argument()`, `.addOption(new Option(...)...)`, read the way commander
// reads its flags string. Options of a subcommand (`.command("x").option()`)
// are left out: appended to the entry point without the subcommand's name
// they would not be accepted.

interface OptionSpec {
  flags: string;
  description: Node | undefined;
  defaultValue: Node | undefined;
  parser: Node | undefined;
  choices: Node | undefined;
  mandatory: boolean;
}

export function commanderParameters(root: Node): Parameter[] {
  const found: { at: number; params: Parameter[] }[] = [];
  for (const call of descendants(root, "call_expression")) {
    const name = calleeName(call);
    if (!name || !calleeObject(call) || onSubcommand(call)) continue;
    const args = callArguments(call);
    let params: Parameter[] = [];
    if (name === "option" || name === "requiredOption") {
      const withParser = args.length >= 4 || isParser(args[2]);
      const spec = {
        flags: stringValue(args[0]) ?? "",
        description: args[1],
        parser: withParser ? args[2] : undefined,
        defaultValue: withParser ? args[3] : args[2],
        choices: undefined,
        mandatory: name === "requiredOption",
      };
      params = optionParameter(spec);
    } else if (name === "addOption") {
      const spec = optionChain(args[0]);
      if (spec) params = optionParameter(spec);
    } else if (name === "argument") {
      params = argumentParameters(stringValue(args[0]), args[1], args[2]);
    } else if (name === "arguments") {
      params = argumentParameters(stringValue(args[0]), undefined, undefined);
    } else if (name === "addArgument") {
      const ctor = unwrap(args[0]);
      if (ctor?.type === "new_expression" && constructorName(ctor) === "Argument") {
        const cargs = callArguments(ctor);
        params = argumentParameters(stringValue(cargs[0]), cargs[1], undefined);
      }
    }
    if (params.length) found.push({ at: callPosition(call), params });
  }
  return found.sort((a, b) => a.at - b.at).flatMap((f) => f.params);
}

function onSubcommand(call: Node): boolean {
  for (let obj = calleeObject(call); obj; obj = obj.type === "call_expression" ? calleeObject(obj) : null) {
    if (obj.type === "call_expression" && calleeName(obj) === "command") return true;
  }
  return false;
}

/** `new Option("--mode <m>", "desc").choices([...]).default(x).makeOptionMandatory()`. */
function optionChain(node: Node | undefined): OptionSpec | null {
  const methods = new Map<string, Node[]>();
  let n = unwrap(node);
  while (n?.type === "call_expression") {
    const name = calleeName(n);
    if (name && !methods.has(name)) methods.set(name, callArguments(n));
    n = calleeObject(n);
  }
  if (n?.type !== "new_expression" || constructorName(n) !== "Option") return null;
  const args = callArguments(n);
  const mandatory = methods.get("makeOptionMandatory");
  return {
    flags: stringValue(args[0]) ?? "",
    description: args[1],
    defaultValue: methods.get("default")?.[0],
    parser: methods.get("argParser")?.[0],
    choices: methods.get("choices")?.[0],
    mandatory: mandatory !== undefined && literal(mandatory[0])?.value !== false,
  };
}

function constructorName(newExpr: Node): string | null {
  const c = unwrap(newExpr.childForFieldName("constructor"));
  if (c?.type === "identifier") return c.text;
  if (c?.type === "member_expression") return c.childForFieldName("property")?.text ?? null;
  return null;
}

function optionParameter(spec: OptionSpec): Parameter[] {
  const words = spec.flags.split(/[ |,]+/).filter(Boolean);
  const long = words.find((w) => /^--[^-]/.test(w));
  const short = words.find((w) => /^-[^-]/.test(w));
  const placeholder = words.find((w) => w.startsWith("<") || w.startsWith("["));
  const option = long ?? short;
  if (!option) return [];
  const name = long ? camelCase(long.slice(2)) : option.slice(1);
  if (!name) return [];
  const def = literal(spec.defaultValue);
  const choices = spec.choices ? literalArray(spec.choices) : null;
  const description = stringValue(spec.description);
  const common = {
    name: clip(name, 256),
    cli_option: option,
    choices: choices ? choices.slice(0, 256).map((c) => (typeof c === "string" ? clip(c, 1024) : c)) : null,
    description: description ? clip(description, 4096) : null,
  };
  if (!placeholder) {
    return [{ ...common, value: typeof def?.value === "boolean" ? def.value : false, category: "flag", required: false }];
  }
  return [
    {
      ...common,
      value: scalar(def),
      category: valueCategory(def, parserKind(spec.parser)),
      required: spec.mandatory && (def === null || def.value === null),
    },
  ];
}

/** `<file>` is required, `[file]` optional, `<files...>` collects the rest. */
function argumentParameters(spec: string | null, description: Node | undefined, defaultValue: Node | undefined): Parameter[] {
  if (!spec) return [];
  const desc = stringValue(description);
  const def = literal(defaultValue);
  const out: Parameter[] = [];
  for (const word of spec.split(/\s+/)) {
    const m = /^(<|\[)([^>\]]+?)(?:\.\.\.)?(>|\])$/.exec(word);
    if (!m?.[2]) continue;
    out.push({
      name: clip(camelCase(m[2]), 256),
      value: scalar(def),
      category: valueCategory(def, null),
      cli_option: null,
      choices: null,
      description: desc ? clip(desc, 4096) : null,
      required: m[1] === "<",
    });
  }
  return out;
}

/** Commander's own rule: `dry-run` → `dryRun`. */
function camelCase(s: string): string {
  return s.split("-").reduce((acc, word, i) => (i === 0 || !word ? acc + word : acc + word[0]!.toUpperCase() + word.slice(1)), "");
}

function scalar(lit: Literal | null): string | number | boolean | null {
  if (!lit) return null;
  return typeof lit.value === "string" ? clip(lit.value, 4096) : lit.value;
}

function valueCategory(def: Literal | null, parsed: "integer" | "number" | null): ParameterCategory {
  if (parsed === "number" || def?.kind === "number") return "number";
  if (parsed === "integer" || def?.kind === "integer") return "integer";
  return "string";
}

// A custom parser as third argument is how commander < 7 (and many programs since) convert values.
function isParser(node: Node | undefined): boolean {
  const n = unwrap(node);
  return !!n && ["identifier", "member_expression", "arrow_function", "function_expression", "function"].includes(n.type) && n.text !== "undefined";
}

function parserKind(node: Node | undefined): "integer" | "number" | null {
  let n = unwrap(node);
  if (n && (n.type === "arrow_function" || n.type === "function_expression" || n.type === "function")) {
    const body = unwrap(n.childForFieldName("body"));
    const ret = body?.type === "statement_block" ? null : body;
    n = ret?.type === "call_expression" ? unwrap(ret.childForFieldName("function")) : null;
  }
  if (!n) return null;
  const name = n.type === "member_expression" ? n.childForFieldName("property")?.text : n.type === "identifier" ? n.text : null;
  if (name === "parseInt") return "integer";
  if (name === "parseFloat" || name === "Number") return "number";
  return null;
}
