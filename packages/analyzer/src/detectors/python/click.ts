import type { EnvVarUse, Parameter } from "../../model.ts";
import { children, descendants, lineOf, type Node } from "../../syntax.ts";
import { callArguments, docstring, literal, stringLiteral, type CallArguments } from "./literals.ts";
import { qualifiedName, type PythonImports } from "./names.ts";
import { negated } from "./argparse.ts";
import { defaultValue, foldWhitespace, literalCategory, preferredOption, typeInfo, withNote, type Declared, type FileRole } from "./params.ts";

// click parameters: the options and arguments stacked on a function decorated
// with @click.command() or @click.group(). A group's sub-commands
// (`@cli.command()`, `cli.add_command(fn)`) each get their own parameters,
// since they only apply after the sub-command's word; the group's own options
// go before that word, so they are left out.

export interface ClickSubcommand {
  name: string;
  parameters: Parameter[];
  roles: Map<string, FileRole>;
  description: string | null;
}

export interface ClickFacts {
  /** Sub-commands of a group, in the order they are declared. */
  subcommands: ClickSubcommand[];
  parameters: Parameter[];
  /** Parameters whose type says whether the file is read or written (`click.File("w")`). */
  roles: Map<string, FileRole>;
  /** The command's `help=`, else its docstring up to click's \f cut. */
  description: string | null;
  /** Options that fall back to an environment variable (`envvar=`). */
  envVars: EnvVarUse[];
}

const CLICK_MODULES = new Set(["click", "rich_click"]);

function clickName(node: Node | null, imports: PythonImports): string | null {
  const name = qualifiedName(node, imports);
  if (!name) return null;
  const dot = name.lastIndexOf(".");
  return dot > 0 && CLICK_MODULES.has(name.slice(0, dot)) ? name.slice(dot + 1) : null;
}

interface Decorator {
  /** "command", "option", ... for click's own decorators. */
  kind: string;
  call: Node | null;
  node: Node;
}

function clickDecorators(definition: Node, imports: PythonImports): Decorator[] {
  const out: Decorator[] = [];
  for (const dec of children(definition)) {
    if (dec.type !== "decorator") continue;
    const expr = dec.firstNamedChild;
    if (!expr) continue;
    const call = expr.type === "call" ? expr : null;
    const kind = clickName(call ? call.childForFieldName("function") : expr, imports);
    if (kind) out.push({ kind, call, node: dec });
  }
  return out;
}

/**
 * The command a file runs: the decorated function named in `preferred` (the
 * names its main block calls), else the first one in the file.
 */
export function clickFacts(root: Node, imports: PythonImports, preferred: ReadonlySet<string>, path: string): ClickFacts | null {
  let chosen: { fn: Node; decorators: Decorator[] } | null = null;
  for (const def of descendants(root, "decorated_definition")) {
    const fn = def.childForFieldName("definition");
    if (fn?.type !== "function_definition") continue;
    const decorators = clickDecorators(def, imports);
    if (!decorators.some((d) => d.kind === "command" || d.kind === "group")) continue;
    const name = fn.childForFieldName("name")?.text ?? "";
    if (preferred.has(name)) {
      chosen = { fn, decorators };
      break;
    }
    chosen ??= { fn, decorators };
  }
  if (!chosen) return null;

  const command = chosen.decorators.find((d) => d.kind === "command" || d.kind === "group")!;
  const own = commandFacts(chosen.fn, chosen.decorators, command, imports, path);
  const subcommands = command.kind === "group" ? groupCommands(root, chosen.fn.childForFieldName("name")?.text ?? "", imports, path) : [];
  return { ...own, subcommands };
}

function commandFacts(fn: Node, decorators: Decorator[], command: Decorator, imports: PythonImports, path: string): Omit<ClickFacts, "subcommands"> {
  const help = command.call ? stringLiteral(callArguments(command.call).keywords.get("help")) : null;
  const doc = help ?? docstring(fn.childForFieldName("body"));
  const description = doc === null ? null : doc.split("\f")[0]!.trim() || null;

  const parameters: Parameter[] = [];
  const roles = new Map<string, FileRole>();
  const envVars: EnvVarUse[] = [];
  for (const d of decorators) {
    if (!d.call || (d.kind !== "option" && d.kind !== "argument")) continue;
    const args = callArguments(d.call);
    const declared = d.kind === "option" ? optionParameter(args, imports) : argumentParameter(args, imports);
    if (declared) {
      parameters.push(declared.parameter);
      if (declared.role && !roles.has(declared.parameter.name)) roles.set(declared.parameter.name, declared.role);
    }
    for (const name of envvarNames(args.keywords.get("envvar"))) envVars.push({ name, path, line: lineOf(d.node), required: false });
  }
  return { parameters, roles, description, envVars };
}

/** click's name for a command from its function: lower case, `_` → `-`, without a _command/_cmd/_group/_grp suffix (click 8.2). */
export function commandName(fn: string): string {
  const base = fn.replace(/_(command|cmd|group|grp)$/, "") || fn;
  return base.toLowerCase().replace(/_/g, "-");
}

interface Registered {
  fn: Node;
  decorators: Decorator[];
  command: Decorator;
}

/** The commands registered on a group: `@group.command(...)`, `@group.group(...)` and `group.add_command(fn, name)`. */
function groupCommands(root: Node, group: string, imports: PythonImports, path: string): ClickSubcommand[] {
  if (!group) return [];
  const out: ClickSubcommand[] = [];
  const add = (name: string | null, { fn, decorators, command }: Registered) => {
    const n = name ?? commandName(fn.childForFieldName("name")?.text ?? "");
    if (!n || out.some((c) => c.name === n)) return;
    const facts = commandFacts(fn, decorators, command, imports, path);
    out.push({ name: n, parameters: facts.parameters, roles: facts.roles, description: facts.description });
  };
  const byFunction = new Map<string, Registered>();
  for (const def of descendants(root, "decorated_definition")) {
    const fn = def.childForFieldName("definition");
    if (fn?.type !== "function_definition") continue;
    const decorators = clickDecorators(def, imports);
    const own = decorators.find((d) => d.kind === "command" || d.kind === "group");
    if (own) byFunction.set(fn.childForFieldName("name")?.text ?? "", { fn, decorators, command: own });
    const registered = groupDecorator(def, group);
    if (!registered) continue;
    const args = registered.call ? callArguments(registered.call) : null;
    const name = args ? (stringLiteral(args.positional[0]) ?? stringLiteral(args.keywords.get("name"))) : null;
    add(name, { fn, decorators, command: registered });
  }
  for (const { name, target } of addedCommands(root, group, byFunction)) add(name, target);
  return out;
}

/** The last `@group.command(...)` / `@group.group(...)` decorator of a definition, as a command decorator. */
function groupDecorator(def: Node, group: string): Decorator | null {
  let registered: Decorator | null = null;
  for (const dec of children(def)) {
    if (dec.type !== "decorator") continue;
    const expr = dec.firstNamedChild;
    const callee = expr?.type === "call" ? expr.childForFieldName("function") : expr;
    if (
      callee?.type === "attribute" &&
      callee.childForFieldName("object")?.text === group &&
      /^(command|group)$/.test(callee.childForFieldName("attribute")?.text ?? "")
    ) {
      registered = { kind: "command", call: expr?.type === "call" ? expr : null, node: dec };
    }
  }
  return registered;
}

/** `group.add_command(fn, name)` calls for decorated commands, with the name each is registered under. */
function addedCommands(root: Node, group: string, byFunction: Map<string, Registered>): { name: string | null; target: Registered }[] {
  const out: { name: string | null; target: Registered }[] = [];
  for (const call of descendants(root, "call")) {
    const callee = call.childForFieldName("function");
    if (callee?.type !== "attribute" || callee.childForFieldName("object")?.text !== group || callee.childForFieldName("attribute")?.text !== "add_command")
      continue;
    const args = callArguments(call);
    const target = byFunction.get(args.positional[0]?.text ?? "");
    if (!target) continue;
    const name =
      stringLiteral(args.positional[1]) ??
      stringLiteral(args.keywords.get("name")) ??
      (target.command.call ? stringLiteral(callArguments(target.command.call).positional[0]) : null);
    out.push({ name, target });
  }
  return out;
}

function declarations(args: CallArguments): string[] | null {
  const decls: string[] = [];
  for (const node of args.positional) {
    const s = stringLiteral(node);
    if (s === null) return null;
    decls.push(s);
  }
  return decls.length ? decls : null;
}

const IDENTIFIER = /^[\p{L}_][\p{L}\p{N}_]*$/u;

interface OptionDecls {
  /** A declaration without dashes names the parameter. */
  explicitName: string | null;
  /** The switches that turn it on (or take its value). */
  switches: string[];
  /** Declared as "--on/--off". */
  secondary: boolean;
  offSwitch: string | null;
}

function optionDecls(decls: string[]): OptionDecls {
  const out: OptionDecls = { explicitName: null, switches: [], secondary: false, offSwitch: null };
  for (const decl of decls) {
    if (!decl.startsWith("-") && IDENTIFIER.test(decl)) {
      out.explicitName = decl;
      continue;
    }
    // "--shout/--no-shout": the first half turns it on, the second off.
    const on = decl.includes("/") ? decl.slice(0, decl.indexOf("/")).trim() : decl;
    if (decl.includes("/")) {
      out.secondary = true;
      const off = decl.slice(decl.indexOf("/") + 1).trim();
      if (off.startsWith("-") && (!out.offSwitch || off.startsWith("--"))) out.offSwitch = off;
    }
    if (on.startsWith("-")) out.switches.push(on);
  }
  return out;
}

function optionParameter(args: CallArguments, imports: PythonImports): Declared | null {
  const decls = declarations(args);
  if (!decls) return null;
  const kw = args.keywords;
  const { explicitName, switches, secondary, offSwitch } = optionDecls(decls);
  if (switches.length === 0) return null;
  // click names the parameter after its first --option (else its first -o).
  const source = switches.find((s) => s.startsWith("--")) ?? switches[0]!;
  const name = explicitName ?? source.replace(/^-+/, "").replace(/-/g, "_").toLowerCase();
  const cli_option = preferredOption(switches);
  const defaultLit = literal(kw.get("default"));
  const help = stringLiteral(kw.get("help"));
  const description = help === null ? null : foldWhitespace(help) || null;
  const isTrue = (key: string) => literal(kw.get(key))?.value === true;

  if (secondary || isTrue("is_flag") || isTrue("count") || kw.has("flag_value")) {
    if (secondary && defaultLit?.kind === "none") {
      // `--x/--no-x` with default=None is a tri-state: unset lets the program decide, so the flag has no default.
      const tri = `${description ? `${description} ` : ""}(unset by default${offSwitch ? `; ${offSwitch} turns it off` : ""})`;
      return { parameter: { name, value: null, category: "flag", cli_option, choices: null, description: tri, required: false } };
    }
    const value = typeof defaultLit?.value === "boolean" ? defaultLit.value : false;
    // On unless told: what a run can pass is the off switch, so that is the parameter.
    if (value && offSwitch) return { parameter: negated(name, cli_option ?? "", description, offSwitch) };
    return { parameter: { name, value: value && !secondary ? value : false, category: "flag", cli_option, choices: null, description, required: false } };
  }
  return valueOption(kw, imports, { name, cli_option, description }, defaultLit);
}

/** An option that takes a value; required when click must have it or would prompt for it. */
function valueOption(
  kw: CallArguments["keywords"],
  imports: PythonImports,
  { name, cli_option, description }: Pick<Parameter, "name" | "cli_option" | "description">,
  defaultLit: ReturnType<typeof literal>,
): Declared {
  const type = typeInfo(kw.get("type"), imports);
  const category = type?.category ?? literalCategory(defaultLit);
  // A prompt with nothing to fall back on waits for a terminal a run does not have.
  const prompts = kw.has("prompt") && literal(kw.get("prompt"))?.value !== false;
  const required = literal(kw.get("required"))?.value === true || (prompts && (!defaultLit || defaultLit.value === null));
  const parameter: Parameter = {
    name,
    value: defaultValue(defaultLit, category, ["true", "false"]),
    category,
    cli_option,
    choices: type?.choices ?? null,
    description: withNote(description, defaultLit),
    required,
  };
  return { parameter, ...(type?.role && { role: type.role }) };
}

function argumentParameter(args: CallArguments, imports: PythonImports): Declared | null {
  const decls = declarations(args);
  if (!decls) return null;
  const name = decls[0]!.replace(/-/g, "_").toLowerCase();
  const kw = args.keywords;
  const defaultLit = literal(kw.get("default"));
  const type = typeInfo(kw.get("type"), imports);
  const category = type?.category ?? literalCategory(defaultLit);
  const requiredLit = literal(kw.get("required"));
  const variadic = literal(kw.get("nargs"))?.value === -1;
  const required = requiredLit ? requiredLit.value === true : !kw.has("default") && !variadic;
  const parameter: Parameter = {
    name,
    value: defaultValue(defaultLit, category, ["true", "false"]),
    category,
    cli_option: null,
    choices: type?.choices ?? null,
    description: null,
    required,
  };
  return { parameter, ...(type?.role && { role: type.role }) };
}

function envvarNames(node: Node | undefined): string[] {
  if (!node) return [];
  const single = stringLiteral(node);
  if (single !== null) return single && single.length <= 256 ? [single] : [];
  if (node.type !== "list" && node.type !== "tuple") return [];
  return children(node)
    .map((c) => stringLiteral(c))
    .filter((s): s is string => !!s && s.length <= 256);
}
