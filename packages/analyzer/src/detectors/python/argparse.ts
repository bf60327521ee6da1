import type { Parameter } from "../../model.ts";
import type { Node } from "../../syntax.ts";
import { callArguments, literal, literalList, stringLiteral, trailingComment, type CallArguments } from "./literals.ts";
import { lastSegment, qualifiedName, type PythonImports } from "./names.ts";
import { defaultValue, foldWhitespace, literalCategory, preferredOption, typeInfo, withNote, type Declared, type FileRole } from "./params.ts";

// argparse parameters: the parsers a file builds (`p = argparse.ArgumentParser()`)
// and the arguments added to them or to their groups, by the variable they
// are held in. Sub-commands (`sub = p.add_subparsers()`, `t = sub.add_parser("train")`)
// each get their own arguments (and those of the parsers named in `parents=`),
// since they only apply after the sub-command's word.

export interface Subcommand {
  name: string;
  parameters: Parameter[];
  roles: Map<string, FileRole>;
  /** The sub-command's literal `help=` or `description=`. */
  description: string | null;
}

export interface ArgparseFacts {
  parameters: Parameter[];
  /** Parameters whose type says whether the file is read or written (`argparse.FileType("w")`). */
  roles: Map<string, FileRole>;
  /** The first parser's literal `description=`. */
  description: string | null;
  /** The first level of sub-commands, in the order they are added. */
  subcommands: Subcommand[];
}

const GROUP_METHODS = new Set(["add_argument_group", "add_mutually_exclusive_group"]);

type Owned = { parameters: Parameter[]; roles: Map<string, FileRole> };
type SubcommandSpec = { description: string | null; parents: string[] };

export function argparseFacts(calls: readonly Node[], imports: PythonImports): ArgparseFacts {
  const { owner, description } = topParsers(calls, imports);
  if (owner.size === 0) return { parameters: [], roles: new Map(), description: null, subcommands: [] };
  const subcommands = subParsers(calls, owner);
  const { byOwner, declaredBy } = declaredArguments(calls, owner, imports);
  const top = byOwner.get("") ?? { parameters: [], roles: new Map<string, FileRole>() };
  return {
    parameters: top.parameters,
    roles: top.roles,
    description,
    subcommands: [...subcommands].map(([name, sub]) => {
      const own = byOwner.get(name) ?? { parameters: [], roles: new Map<string, FileRole>() };
      // A parent parser's arguments come first, as argparse adds them.
      const inherited = sub.parents.flatMap((p) => declaredBy.get(p) ?? []);
      return { name, parameters: [...inherited, ...own.parameters], roles: own.roles, description: sub.description };
    }),
  };
}

/**
 * Which parser each variable holds ("" for a top-level parser, a sub-command's
 * name for its parser), here the `ArgumentParser()`s; and the first one's description.
 */
function topParsers(calls: readonly Node[], imports: PythonImports): { owner: Map<string, string>; description: string | null } {
  const owner = new Map<string, string>();
  let description: string | null = null;
  // A parser a helper made (`parser = get_parser()`, from this file or another): a variable
  // assigned a call's result that arguments are added to, unless it is a group or a sub-parser.
  const extended = new Set<string>();
  for (const call of calls) {
    const on = methodCall(call);
    if (on?.method === "add_argument") extended.add(on.object);
  }
  for (const call of calls) {
    const target = extended.size ? assignedTo(call) : null;
    const on = target && methodCall(call);
    if (target && extended.has(target) && !(on && (GROUP_METHODS.has(on.method) || on.method === "add_parser" || on.method === "add_subparsers"))) {
      owner.set(target, "");
    }
  }
  for (const call of calls) {
    const fn = qualifiedName(call.childForFieldName("function"), imports);
    if (!fn || lastSegment(fn) !== "ArgumentParser") continue;
    const target = assignedTo(call);
    if (target) owner.set(target, "");
    if (description === null) {
      const text = stringLiteral(callArguments(call).keywords.get("description"));
      if (text?.trim()) description = text.trim();
    }
  }
  return { owner, description };
}

/** The groups and sub-command parsers made from the known parsers, added to owner; the sub-commands by name. */
function subParsers(calls: readonly Node[], owner: Map<string, string>): Map<string, SubcommandSpec> {
  const holders = new Set<string>();
  const subcommands = new Map<string, SubcommandSpec>();
  // Groups and sub-parsers are usually made right after their parser; a second pass catches the rest.
  for (let pass = 0; pass < 2; pass++) {
    for (const call of calls) {
      const on = methodCall(call);
      if (!on) continue;
      const target = assignedTo(call);
      if (GROUP_METHODS.has(on.method) && owner.has(on.object)) {
        if (target && !owner.has(target)) owner.set(target, owner.get(on.object)!);
      } else if (on.method === "add_subparsers" && owner.get(on.object) === "") {
        if (target) holders.add(target);
      } else if (on.method === "add_parser" && holders.has(on.object)) {
        const name = addParser(call, subcommands);
        if (name && target) owner.set(target, name);
      }
    }
  }
  return subcommands;
}

/** Records `sub.add_parser("name", ...)` in subcommands; its name, or null when it is not a new, readable one. */
function addParser(call: Node, subcommands: Map<string, SubcommandSpec>): string | null {
  const args = callArguments(call);
  const name = stringLiteral(args.positional[0] ?? args.keywords.get("name"));
  if (!name || !/^[\w][\w.:-]*$/.test(name) || subcommands.has(name)) return null;
  const help = stringLiteral(args.keywords.get("help")) ?? stringLiteral(args.keywords.get("description"));
  const parents = args.keywords.get("parents");
  subcommands.set(name, {
    description: help?.trim() ? foldWhitespace(help) : null,
    parents: parents?.type === "list" ? parents.namedChildren.filter((c): c is Node => c !== null).map((c) => c.text) : [],
  });
  return name;
}

/** The parser an `x.add_argument(...)` adds to: x's, or that of the group made inline (`p.add_argument_group().add_argument`). */
function argumentOwner(object: Node, owner: Map<string, string>): string | undefined {
  const who = owner.get(object.text);
  if (who !== undefined || object.type !== "call") return who;
  const inner = methodCall(object);
  return inner && GROUP_METHODS.has(inner.method) ? owner.get(inner.object) : undefined;
}

/** The arguments added, by the parser they belong to and by the variable they were added on. */
function declaredArguments(
  calls: readonly Node[],
  owner: Map<string, string>,
  imports: PythonImports,
): { byOwner: Map<string, Owned>; declaredBy: Map<string, Parameter[]> } {
  const byOwner = new Map<string, Owned>();
  const declaredBy = new Map<string, Parameter[]>();
  for (const call of calls) {
    const fn = call.childForFieldName("function");
    if (fn?.type !== "attribute" || fn.childForFieldName("attribute")?.text !== "add_argument") continue;
    const object = fn.childForFieldName("object");
    if (!object) continue;
    const who = argumentOwner(object, owner);
    if (who === undefined) continue;
    const declared = argumentParameter(call, callArguments(call), imports);
    if (!declared) continue;
    const into = byOwner.get(who) ?? { parameters: [], roles: new Map<string, FileRole>() };
    byOwner.set(who, into);
    into.parameters.push(declared.parameter);
    if (declared.role && !into.roles.has(declared.parameter.name)) into.roles.set(declared.parameter.name, declared.role);
    const list = declaredBy.get(object.text) ?? [];
    list.push(declared.parameter);
    declaredBy.set(object.text, list);
  }
  return { byOwner, declaredBy };
}

/** `obj.method(...)`: the method and the text of obj. */
function methodCall(call: Node): { method: string; object: string } | null {
  const fn = call.childForFieldName("function");
  if (fn?.type !== "attribute") return null;
  const method = fn.childForFieldName("attribute")?.text;
  const object = fn.childForFieldName("object");
  return method && object ? { method, object: object.text } : null;
}

/** The variable (or attribute, `self.parser`) a call's result is assigned to. */
function assignedTo(call: Node): string | null {
  const parent = call.parent;
  if (parent?.type !== "assignment" || !parent.childForFieldName("right")?.equals(call)) return null;
  const left = parent.childForFieldName("left");
  return left && (left.type === "identifier" || left.type === "attribute") ? left.text : null;
}

// Actions whose switch takes no value: passing it is all there is to say.
const SWITCH_ACTIONS = new Set(["store_true", "store_false", "store_const", "append_const", "count"]);
const SKIPPED_ACTIONS = new Set(["help", "version"]);

/** The option strings (or the positional's name); null when one cannot be read or there are none. */
function argumentFlags(args: CallArguments): string[] | null {
  const flags: string[] = [];
  for (const node of args.positional) {
    const s = stringLiteral(node);
    if (s === null || s === "") return null; // an option name we cannot read: nothing reliable to report
    flags.push(s);
  }
  return flags.length === 0 ? null : flags;
}

/** The `action=`'s last segment: "store_true" or argparse.BooleanOptionalAction alike. */
function argumentAction(kw: CallArguments["keywords"], imports: PythonImports): string | null {
  const actionNode = kw.get("action");
  const actionName = stringLiteral(actionNode) ?? qualifiedName(actionNode, imports);
  return actionName === null ? null : lastSegment(actionName);
}

function argumentParameter(call: Node, args: CallArguments, imports: PythonImports): Declared | null {
  const flags = argumentFlags(args);
  if (!flags) return null;
  const kw = args.keywords;
  const positional = !flags[0]!.startsWith("-");
  if (!positional && flags.some((f) => f === "-h" || f === "--help")) return null;

  const action = argumentAction(kw, imports);
  if (action && SKIPPED_ACTIONS.has(action)) return null;

  const explicitDest = stringLiteral(kw.get("dest"));
  const long = flags.find((f) => f.startsWith("--"));
  const name = explicitDest ?? (positional ? flags[0]! : (long ?? flags[0]!).replace(/^-+/, "").replace(/-/g, "_"));
  if (!name) return null;

  const defaultLit = literal(kw.get("default"));
  const help = stringLiteral(kw.get("help"));
  // Without help text, the comment the author wrote after the line says what it is.
  const description = withNote(
    help === "==SUPPRESS==" ? null : help === null ? trailingComment(call) : foldWhitespace(expandHelp(help, defaultLit?.value)) || null,
    defaultLit,
  );
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
  return valueArgument(kw, imports, { name, cli_option, description, required }, defaultLit);
}

/** An argument that takes a value: its category from `type=`, else its choices, else its default. */
function valueArgument(
  kw: CallArguments["keywords"],
  imports: PythonImports,
  base: Pick<Parameter, "name" | "cli_option" | "description" | "required">,
  defaultLit: ReturnType<typeof literal>,
): Declared {
  const type = typeInfo(kw.get("type"), imports);
  let choices = literalList(kw.get("choices"));
  const category =
    type?.category ??
    (choices?.length && choices.every((c) => typeof c === "number") ? (choices.every(Number.isInteger) ? "integer" : "number") : literalCategory(defaultLit));
  if (choices && category === "string") choices = choices.map(String);
  const { name, cli_option, description, required } = base;
  const parameter: Parameter = { name, value: defaultValue(defaultLit, category, ["True", "False"]), category, cli_option, choices, description, required };
  return { parameter, ...(type?.role && { role: type.role }) };
}

/** The `--no-x` half of an on-by-default switch, as its own flag parameter `no_x`. */
export function negated(name: string, long: string, description: string | null, off?: string): Parameter {
  const option = off ?? `--no-${long.replace(/^-+/, "")}`;
  return {
    name: off ? option.replace(/^-+/, "").replace(/-/g, "_") : `no_${name}`,
    value: false,
    category: "flag",
    cli_option: option,
    choices: null,
    description,
    required: false,
  };
}

/** argparse's own substitutions in help strings, for the one that reads a literal. */
function expandHelp(help: string, value: unknown): string {
  return help.replace(/%\(default\)[sdrf]/g, shownDefault(value)).replace(/%%/g, "%");
}

/** How %(default)s shows a default read as a literal (undefined: none could be read, so the placeholder stays). */
function shownDefault(value: unknown): string {
  if (value === undefined) return "%(default)s";
  if (value === null) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  // A parsed Python literal (a string, number or list): its String() is what argparse would show.
  // eslint-disable-next-line @typescript-eslint/no-base-to-string
  return String(value);
}
