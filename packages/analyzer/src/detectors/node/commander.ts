import type { Parameter, ParameterCategory } from "../../model.ts";
import { descendants, type Node } from "../../syntax.ts";
import { callArguments, calleeName, calleeObject, callPosition, clip, literal, literalArray, stringValue, unwrap, type Literal } from "./literals.ts";

// Options a commander program declares: `.option()`, `.requiredOption()`,
// `.argument()`, `.addOption(new Option(...)...)`, read the way commander
// reads its flags string. Options of a subcommand (`.command("train <data>")`
// and what is chained on it, or called on the variable holding it) belong to
// that subcommand: they are returned as its own, with the `<data>` words of
// its command string as positional arguments.

interface OptionSpec {
  flags: string;
  description: Node | undefined;
  defaultValue: Node | undefined;
  parser: Node | undefined;
  choices: Node | undefined;
  mandatory: boolean;
}

export interface CommanderFacts {
  parameters: Parameter[];
  /** The program does something itself (a top-level `.action()` or `.argument()`), not only through its sub-commands. */
  runsAlone: boolean;
  subcommands: { name: string; parameters: Parameter[]; description: string | null }[];
}

export function commanderParameters(root: Node): Parameter[] {
  return commanderFacts(root).parameters;
}

type Found = { at: number; params: Parameter[] }[];

export function commanderFacts(root: Node): CommanderFacts {
  const { top, byCommand, commands, runsAlone } = readCalls(root, heldCommands(root));
  const subcommands: CommanderFacts["subcommands"] = [];
  for (const cmd of commands) {
    const args = callArguments(cmd);
    const spec = stringValue(args[0]);
    const name = spec?.trim().split(/\s+/)[0] ?? "";
    if (!/^[\w][\w:.-]*$/.test(name) || subcommands.some((c) => c.name === name)) continue;
    const described = [...chainAbove(cmd)].find((c) => calleeName(c) === "description");
    const description = stringValue(described ? callArguments(described)[0] : args[1]);
    const own = ordered(byCommand.get(cmd.startIndex) ?? []);
    subcommands.push({
      name,
      parameters: [...argumentParameters(spec!.trim().split(/\s+/).slice(1).join(" "), undefined, undefined), ...own],
      description: description ? clip(description, 4096) : null,
    });
  }
  return { parameters: ordered(top), subcommands, runsAlone: runsAlone || subcommands.length === 0 };
}

const ordered = (found: Found) => found.sort((a, b) => a.at - b.at).flatMap((f) => f.params);

/** Variables that hold a subcommand: `const train = program.command("train")...`. */
function heldCommands(root: Node): Map<string, Node> {
  const held = new Map<string, Node>();
  for (const decl of descendants(root, "variable_declarator")) {
    const id = decl.childForFieldName("name");
    const cmd = commandIn(decl.childForFieldName("value"));
    if (id?.type === "identifier" && cmd) held.set(id.text, cmd);
  }
  return held;
}

/**
 * The program's own declarations, those of each sub-command (by the command
 * call's start offset: a tree's node objects are not the same object twice),
 * the sub-commands' `.command()` calls, and whether the program acts itself.
 */
function readCalls(root: Node, held: Map<string, Node>): { top: Found; byCommand: Map<number, Found>; commands: Node[]; runsAlone: boolean } {
  const top: Found = [];
  const byCommand = new Map<number, Found>();
  const commands: Node[] = [];
  let runsAlone = false;
  for (const call of descendants(root, "call_expression")) {
    const name = calleeName(call);
    if (!name || !calleeObject(call)) continue;
    if (name === "command") {
      if (!commandIn(calleeObject(call)) && !heldBy(calleeObject(call), held)) commands.push(call);
      continue;
    }
    const owner = commandIn(calleeObject(call)) ?? heldBy(calleeObject(call), held);
    if (!owner && (name === "action" || name === "argument" || name === "arguments")) runsAlone = true;
    const params = declared(name, callArguments(call));
    if (!params.length) continue;
    const into = owner ? (byCommand.get(owner.startIndex) ?? (byCommand.set(owner.startIndex, []), byCommand.get(owner.startIndex)!)) : top;
    into.push({ at: callPosition(call), params });
  }
  return { top, byCommand, commands, runsAlone };
}

function declared(name: string, args: Node[]): Parameter[] {
  if (name === "option" || name === "requiredOption") {
    const withParser = args.length >= 4 || isParser(args[2]);
    return optionParameter({
      flags: stringValue(args[0]) ?? "",
      description: args[1],
      parser: withParser ? args[2] : undefined,
      defaultValue: withParser ? args[3] : args[2],
      choices: undefined,
      mandatory: name === "requiredOption",
    });
  }
  if (name === "addOption") {
    const spec = optionChain(args[0]);
    return spec ? optionParameter(spec) : [];
  }
  if (name === "argument") return argumentParameters(stringValue(args[0]), args[1], args[2]);
  if (name === "arguments") return argumentParameters(stringValue(args[0]), undefined, undefined);
  if (name === "addArgument") {
    const ctor = unwrap(args[0]);
    if (ctor?.type === "new_expression" && constructorName(ctor) === "Argument") {
      const cargs = callArguments(ctor);
      return argumentParameters(stringValue(cargs[0]), cargs[1], undefined);
    }
  }
  return [];
}

/** The `.command(...)` call in an object chain (`x.command("a").option(...)`), nearest first. */
function commandIn(node: Node | null | undefined): Node | null {
  for (let obj = unwrap(node); obj; obj = obj.type === "call_expression" ? calleeObject(obj) : null) {
    if (obj.type === "call_expression" && calleeName(obj) === "command") return obj;
  }
  return null;
}

/** The subcommand a chain starting from a variable (`train.option(...)`) belongs to. */
function heldBy(node: Node | null | undefined, held: ReadonlyMap<string, Node>): Node | null {
  let obj = unwrap(node);
  while (obj?.type === "call_expression") obj = calleeObject(obj);
  return obj?.type === "identifier" ? (held.get(obj.text) ?? null) : null;
}

/** The calls chained after this one: `cmd.description(...).option(...)` from cmd. */
function* chainAbove(call: Node): Generator<Node> {
  let n: Node | null = call;
  while (n) {
    const member: Node | null = n.parent;
    const outer: Node | null = member?.type === "member_expression" ? member.parent : null;
    if (outer?.type !== "call_expression") return;
    yield outer;
    n = outer;
  }
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
