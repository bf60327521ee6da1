import type { Parameter } from "../model.ts";
import type { Node } from "../syntax.ts";
import { callArguments, literal, literalList, stringLiteral, type CallArguments } from "./python-literals.ts";
import { lastSegment, qualifiedName, type PythonImports } from "./python-names.ts";
import { defaultValue, foldWhitespace, literalCategory, preferredOption, typeInfo, type Declared, type FileRole } from "./python-params.ts";

// argparse parameters: the parsers a file builds (`p = argparse.ArgumentParser()`)
// and the arguments added to them or to their groups, by the variable they
// are held in. Subparsers are left out: their arguments only apply after a
// sub-command word, which a run's parameters cannot express.

export interface ArgparseFacts {
  parameters: Parameter[];
  /** Parameters whose type says whether the file is read or written (`argparse.FileType("w")`). */
  roles: Map<string, FileRole>;
  /** The first parser's literal `description=`. */
  description: string | null;
}

const GROUP_METHODS = new Set(["add_argument_group", "add_mutually_exclusive_group"]);

export function argparseFacts(calls: readonly Node[], imports: PythonImports): ArgparseFacts {
  const receivers = new Set<string>();
  let description: string | null = null;
  for (const call of calls) {
    const fn = qualifiedName(call.childForFieldName("function"), imports);
    if (!fn || lastSegment(fn) !== "ArgumentParser") continue;
    const target = assignedTo(call);
    if (target) receivers.add(target);
    if (description === null) {
      const text = stringLiteral(callArguments(call).keywords.get("description"));
      if (text?.trim()) description = text.trim();
    }
  }
  if (receivers.size === 0) return { parameters: [], roles: new Map(), description: null };

  // Groups are usually made right after their parser; a second pass catches the rest.
  for (let pass = 0; pass < 2; pass++) {
    for (const call of calls) {
      if (isMethodOn(call, GROUP_METHODS, receivers)) {
        const target = assignedTo(call);
        if (target) receivers.add(target);
      }
    }
  }

  const parameters: Parameter[] = [];
  const roles = new Map<string, FileRole>();
  for (const call of calls) {
    const fn = call.childForFieldName("function");
    if (fn?.type !== "attribute" || fn.childForFieldName("attribute")?.text !== "add_argument") continue;
    const object = fn.childForFieldName("object");
    const onParser = object && (receivers.has(object.text) || (object.type === "call" && isMethodOn(object, GROUP_METHODS, receivers)));
    if (!onParser) continue;
    const declared = argumentParameter(callArguments(call), imports);
    if (!declared) continue;
    parameters.push(declared.parameter);
    if (declared.role && !roles.has(declared.parameter.name)) roles.set(declared.parameter.name, declared.role);
  }
  return { parameters, roles, description };
}

/** The variable (or attribute, `self.parser`) a call's result is assigned to. */
function assignedTo(call: Node): string | null {
  const parent = call.parent;
  if (parent?.type !== "assignment" || !parent.childForFieldName("right")?.equals(call)) return null;
  const left = parent.childForFieldName("left");
  return left && (left.type === "identifier" || left.type === "attribute") ? left.text : null;
}

function isMethodOn(call: Node, methods: Set<string>, receivers: Set<string>): boolean {
  const fn = call.childForFieldName("function");
  if (fn?.type !== "attribute") return false;
  const method = fn.childForFieldName("attribute")?.text;
  const object = fn.childForFieldName("object");
  return !!method && methods.has(method) && !!object && receivers.has(object.text);
}

// Actions whose switch takes no value: passing it is all there is to say.
const SWITCH_ACTIONS = new Set(["store_true", "store_false", "store_const", "append_const", "count"]);
const SKIPPED_ACTIONS = new Set(["help", "version"]);

function argumentParameter(args: CallArguments, imports: PythonImports): Declared | null {
  const flags: string[] = [];
  for (const node of args.positional) {
    const s = stringLiteral(node);
    if (s === null || s === "") return null; // an option name we cannot read: nothing reliable to report
    flags.push(s);
  }
  if (flags.length === 0) return null;
  const kw = args.keywords;
  const positional = !flags[0]!.startsWith("-");
  if (!positional && flags.some((f) => f === "-h" || f === "--help")) return null;

  const actionNode = kw.get("action");
  const actionName = stringLiteral(actionNode) ?? qualifiedName(actionNode, imports);
  const action = actionName === null ? null : lastSegment(actionName);
  if (action && SKIPPED_ACTIONS.has(action)) return null;

  const explicitDest = stringLiteral(kw.get("dest"));
  const long = flags.find((f) => f.startsWith("--"));
  const name = explicitDest ?? (positional ? flags[0]! : (long ?? flags[0]!).replace(/^-+/, "").replace(/-/g, "_"));
  if (!name) return null;

  const defaultLit = literal(kw.get("default"));
  const help = stringLiteral(kw.get("help"));
  const description = help === null || help === "==SUPPRESS==" ? null : foldWhitespace(expandHelp(help, defaultLit?.value)) || null;
  const nargs = stringLiteral(kw.get("nargs"));
  const required = positional ? nargs !== "?" && nargs !== "*" : literal(kw.get("required"))?.value === true;
  const cli_option = positional ? null : preferredOption(flags);

  // A switch is a flag: present when the value is true. For store_false that
  // means passing it turns the program's own variable off; for count, passing
  // it once. BooleanOptionalAction also adds --no-x; the flag is --x.
  if (action === "BooleanOptionalAction" && defaultLit?.value === true && long) {
    // On unless told: the switch a run can pass is --no-x, so that is the parameter (no_x, off by default).
    return { parameter: negated(name, long, description) };
  }
  if ((action && SWITCH_ACTIONS.has(action)) || action === "BooleanOptionalAction") {
    return { parameter: { name, value: false, category: "flag", cli_option, choices: null, description, required: false } };
  }

  const type = typeInfo(kw.get("type"), imports);
  let choices = literalList(kw.get("choices"));
  const category = type?.category ?? (choices?.length && choices.every((c) => typeof c === "number") ? (choices.every(Number.isInteger) ? "integer" : "number") : literalCategory(defaultLit));
  if (choices && category === "string") choices = choices.map(String);
  const parameter: Parameter = { name, value: defaultValue(defaultLit, category, ["True", "False"]), category, cli_option, choices, description, required };
  return { parameter, ...(type?.role && { role: type.role }) };
}

/** The `--no-x` half of an on-by-default switch, as its own flag parameter `no_x`. */
export function negated(name: string, long: string, description: string | null, off?: string): Parameter {
  const option = off ?? `--no-${long.replace(/^-+/, "")}`;
  return { name: off ? option.replace(/^-+/, "").replace(/-/g, "_") : `no_${name}`, value: false, category: "flag", cli_option: option, choices: null, description, required: false };
}

/** argparse's own substitutions in help strings, for the one that reads a literal. */
function expandHelp(help: string, value: unknown): string {
  return help.replace(/%\(default\)[sdrf]/g, value === undefined ? "%(default)s" : value === null ? "None" : typeof value === "boolean" ? (value ? "True" : "False") : String(value)).replace(/%%/g, "%");
}
