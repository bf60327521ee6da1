import type { Parameter, ParameterCategory } from "../../model.ts";
import type { Node } from "../../syntax.ts";
import { callArguments, literalList, stringLiteral, type Literal } from "./literals.ts";
import { lastSegment, qualifiedName, type PythonImports } from "./names.ts";

// What argparse and click parameters have in common: the category a `type=`
// names, the value a literal default gives, and the bounds the result model
// sets (a hostile file must not make the analysis fail validation).

export type FileRole = "input" | "output";

/** A parameter as declared, with what its type says about the file it names. */
export interface Declared {
  parameter: Parameter;
  role?: FileRole;
}

export interface TypeInfo {
  category: ParameterCategory;
  choices: (string | number | boolean)[] | null;
  /** For a file type with a literal mode (`argparse.FileType("w")`, `click.File("rb")`): whether it is read or written. */
  role?: FileRole;
}

const FILE_TYPES = new Set(["argparse.FileType", "click.File"]);

const BUILTIN_TYPES: Record<string, ParameterCategory> = {
  int: "integer",
  float: "number",
  str: "string",
  bool: "boolean",
  "click.BOOL": "boolean",
  "distutils.util.strtobool": "boolean",
  "pathlib.Path": "path",
  "pathlib.PurePath": "path",
  "argparse.FileType": "path",
  "click.INT": "integer",
  "click.FLOAT": "number",
  "click.STRING": "string",
  "click.Path": "path",
  "click.File": "path",
  "click.IntRange": "integer",
  "click.FloatRange": "number",
};

/** The category a `type=` argument names; null when there is none. Unknown callables are strings. */
export function typeInfo(node: Node | undefined, imports: PythonImports): TypeInfo | null {
  if (!node) return null;
  const callee = node.type === "call" ? node.childForFieldName("function") : node;
  const name = qualifiedName(callee, imports);
  if (name === "click.Choice" && node.type === "call") {
    const args = callArguments(node);
    const choices = literalList(args.positional[0] ?? args.keywords.get("choices"));
    const numeric = choices?.length && choices.every((c) => typeof c === "number");
    return { category: numeric ? (choices.every(Number.isInteger) ? "integer" : "number") : "string", choices };
  }
  if (!name) return { category: "string", choices: null };
  if (node.type === "call" && (FILE_TYPES.has(name) || lastSegment(name) === "FileType")) {
    const args = callArguments(node);
    const modeNode = args.positional[0] ?? args.keywords.get("mode");
    const mode = modeNode ? stringLiteral(modeNode) : "r";
    return { category: "path", choices: null, ...(mode !== null && { role: /[wax+]/.test(mode) ? "output" : "input" }) };
  }
  const known =
    BUILTIN_TYPES[name] ??
    (lastSegment(name) === "Path" || lastSegment(name) === "FileType" ? "path" : BOOL_PARSER.test(lastSegment(name)) ? "boolean" : undefined);
  return { category: known ?? "string", choices: null };
}

/** The helpers projects write to read "yes"/"false" from the command line: str2bool, strtobool, str_to_bool, parse_bool, boolean_string, t_or_f... */
const BOOL_PARSER = /^(str_?2_?bool|str_?to_?bool|strtobool|to_?bool|parse_?bool(ean)?|bool(ean)?_?(string|str|arg|flag|type)|as_?bool|t_or_f|_?bool)$/i;

/** A default's own type, for options declared without `type=`. */
export function literalCategory(lit: Literal | null): ParameterCategory {
  if (lit?.kind === "int") return "integer";
  if (lit?.kind === "float") return "number";
  return "string";
}

/**
 * The default as the parameter's value: null when it is not a literal or does
 * not fit the category. A bool default on an option that takes a value (the
 * `type=str2bool` pattern) becomes the word the program parses.
 */
export function defaultValue(lit: Literal | null, category: ParameterCategory, boolWords: [string, string]): Parameter["value"] {
  if (!lit || lit.value === null) return null;
  if (category === "flag") return typeof lit.value === "boolean" ? lit.value : null;
  if (category === "boolean") {
    if (typeof lit.value === "boolean") return lit.value;
    // str2bool-style options often default to the word: "True", "no", "1".
    if (typeof lit.value === "string" && /^(true|yes|y|on|1|t)$/i.test(lit.value.trim())) return true;
    if (typeof lit.value === "string" && /^(false|no|n|off|0|f)$/i.test(lit.value.trim())) return false;
    if (typeof lit.value === "number" && (lit.value === 0 || lit.value === 1)) return lit.value === 1;
    return null;
  }
  if (typeof lit.value === "boolean") return category === "string" ? (lit.value ? boolWords[0] : boolWords[1]) : null;
  if (category === "integer" || category === "number") {
    // argparse and click convert string defaults with the type, so "5" means 5.
    const n = typeof lit.value === "number" ? lit.value : lit.value.trim() === "" ? NaN : Number(lit.value);
    if (!Number.isFinite(n) || (category === "integer" && !Number.isInteger(n))) return null;
    return n;
  }
  return String(lit.value);
}

/** A description with what a conditional default depends on, when the default was one of two branches. */
export function withNote(description: string | null, lit: Literal | null): string | null {
  if (!lit?.note) return description;
  const note = `(default: ${lit.note})`;
  return description ? `${description} ${note}` : note;
}

/** Help text as argparse and click print it: whitespace runs folded into one space. */
export const foldWhitespace = (text: string): string => text.replace(/\s+/g, " ").trim();

/** The parameter within the result model's limits, or null when it cannot be represented. */
export function bounded(p: Parameter): Parameter | null {
  if (!p.name || p.name.length > 256 || (p.cli_option !== null && p.cli_option.length > 256)) return null;
  const value = typeof p.value === "string" && p.value.length > 4096 ? null : p.value;
  const choices = p.choices && p.choices.length <= 256 && p.choices.every((c) => typeof c !== "string" || c.length <= 1024) ? p.choices : null;
  const description = p.description === null ? null : p.description.slice(0, 4096) || null;
  return { ...p, value, choices, description };
}

/** Parameters by name, first declaration first, as many as the model allows. */
export function uniqueParameters(params: Parameter[]): Parameter[] {
  const seen = new Set<string>();
  const out: Parameter[] = [];
  for (const p of params) {
    const b = bounded(p);
    if (!b || seen.has(b.name)) continue;
    seen.add(b.name);
    out.push(b);
    if (out.length === 256) break;
  }
  return out;
}

/** The longest of the `--long` options, else the first short one. */
export function preferredOption(options: string[]): string | null {
  let best: string | null = null;
  for (const o of options) if (o.startsWith("--") && (!best || o.length > best.length)) best = o;
  return best ?? options[0] ?? null;
}
