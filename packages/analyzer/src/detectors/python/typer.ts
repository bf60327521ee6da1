import type { Parameter, ParameterCategory } from "../../model.ts";
import { children, descendants, type Node } from "../../syntax.ts";
import { negated } from "./argparse.ts";
import { commandName } from "./click.ts";
import { callArguments, docstring, literal, stringLiteral } from "./literals.ts";
import { lastSegment, qualifiedName, type PythonImports } from "./names.ts";
import { defaultValue, foldWhitespace, withNote } from "./params.ts";

// Typer: the command line is the signature of the function it runs.
// `typer.run(main)` runs one function; an app (`app = typer.Typer()`) runs its
// `@app.command()` functions, by name when it has more than one (or a
// callback), and its only one directly otherwise. A parameter without a
// default is a positional argument; with one it is an option `--name`
// (underscores become dashes); a bool is a `--x/--no-x` switch. Options and
// arguments may be spelled with typer.Option / typer.Argument, as the default
// (`x: int = typer.Option(3, "--x")`) or inside Annotated.

export interface TyperCommand {
  /** null when the app runs it without a sub-command word. */
  name: string | null;
  parameters: Parameter[];
  description: string | null;
}

const imported = (imports: PythonImports, module: string): boolean => [...imports.bindings.values()].some((m) => m === module || m.startsWith(`${module}.`));

/** Each function definition by its name, the first one where a name repeats. */
function functionsByName(root: Node): Map<string, Node> {
  const functions = new Map<string, Node>();
  for (const def of descendants(root, "function_definition")) {
    const name = def.childForFieldName("name")?.text;
    if (name && !functions.has(name)) functions.set(name, def);
  }
  return functions;
}

/** The names bound to `typer.Typer()`, and the function the first `typer.run(f)` runs. */
function typerApps(root: Node, imports: PythonImports, functions: Map<string, Node>): { apps: Set<string>; run: Node | null } {
  const apps = new Set<string>();
  let run: Node | null = null;
  for (const call of descendants(root, "call")) {
    const fn = qualifiedName(call.childForFieldName("function"), imports);
    if (fn === "typer.Typer") {
      const parent = call.parent;
      const left = parent?.type === "assignment" ? parent.childForFieldName("left") : null;
      if (left?.type === "identifier") apps.add(left.text);
    } else if (fn === "typer.run" && !run) {
      run = functions.get(callArguments(call).positional[0]?.text ?? "") ?? null;
    }
  }
  return { apps, run };
}

interface AppCommand {
  fn: Node;
  explicit: string | null;
  help: string | null;
}

/** The `@app.<method>(...)` decorators of a definition, as the method and the call's arguments. */
function appDecorators(def: Node, apps: Set<string>): { method: string | undefined; args: ReturnType<typeof callArguments> | null }[] {
  const out: { method: string | undefined; args: ReturnType<typeof callArguments> | null }[] = [];
  for (const dec of children(def)) {
    if (dec.type !== "decorator") continue;
    const expr = dec.firstNamedChild;
    const callee = expr?.type === "call" ? expr.childForFieldName("function") : expr;
    if (callee?.type !== "attribute" || !apps.has(callee.childForFieldName("object")?.text ?? "")) continue;
    out.push({ method: callee.childForFieldName("attribute")?.text, args: expr?.type === "call" ? callArguments(expr) : null });
  }
  return out;
}

/** The `@app.command()` functions, and whether an app has a `@app.callback()`. */
function appCommands(root: Node, apps: Set<string>): { commands: AppCommand[]; callback: boolean } {
  const commands: AppCommand[] = [];
  let callback = false;
  for (const def of descendants(root, "decorated_definition")) {
    const fn = def.childForFieldName("definition");
    if (fn?.type !== "function_definition") continue;
    for (const { method, args } of appDecorators(def, apps)) {
      if (method === "callback") callback = true;
      if (method !== "command") continue;
      commands.push({
        fn,
        explicit: args ? (stringLiteral(args.positional[0]) ?? stringLiteral(args.keywords.get("name"))) : null,
        help: args ? stringLiteral(args.keywords.get("help")) : null,
      });
    }
  }
  return { commands, callback };
}

export function typerCommands(root: Node, imports: PythonImports): TyperCommand[] {
  if (!imported(imports, "typer")) return [];
  const { apps, run } = typerApps(root, imports, functionsByName(root));
  if (run) return [command(run, null, null, imports)];
  if (apps.size === 0) return [];
  const { commands, callback } = appCommands(root, apps);
  const single = commands.length === 1 && !callback;
  return commands.map((c) => command(c.fn, single ? null : (c.explicit ?? commandName(c.fn.childForFieldName("name")?.text ?? "")), c.help, imports));
}

function command(fn: Node, name: string | null, help: string | null, imports: PythonImports): TyperCommand {
  const parameters: Parameter[] = [];
  for (const p of children(fn.childForFieldName("parameters") ?? fn)) {
    const param = parameter(p, imports);
    if (param) parameters.push(param);
  }
  const doc = help ?? docstring(fn.childForFieldName("body"));
  return { name, parameters, description: doc ? foldWhitespace(doc.split("\f")[0]!) || null : null };
}

interface ParameterParts {
  nameNode: Node | null;
  type: Node | null;
  value: Node | null;
}

/** A signature entry's name, annotation and default, by the kind of parameter it is. */
function parameterParts(p: Node): ParameterParts | null {
  if (p.type === "identifier") return { nameNode: p, type: null, value: null };
  if (p.type === "typed_parameter")
    return { nameNode: children(p).find((c) => c.type === "identifier") ?? null, type: p.childForFieldName("type"), value: null };
  if (p.type === "default_parameter" || p.type === "typed_default_parameter")
    return { nameNode: p.childForFieldName("name"), type: p.childForFieldName("type"), value: p.childForFieldName("value") };
  return null;
}

interface TyperSpelling {
  /** The annotation without Annotated[...]. */
  annotation: Node | null;
  /** The typer.Option / typer.Argument call, if any. */
  info: Node | null;
  defaultNode: Node | null;
}

/** What typer.Option / typer.Argument say, from Annotated[...] or the default. */
function typerSpelling(type: Node | null, value: Node | null, imports: PythonImports): TyperSpelling {
  let info: Node | null = null;
  let annotation = type;
  if (annotation?.type === "type") annotation = annotation.firstNamedChild;
  if (annotation?.type === "generic_type" && lastSegment(qualifiedName(annotation.firstNamedChild, imports) ?? "") === "Annotated") {
    const args = children(children(annotation).find((c) => c.type === "type_parameter") ?? annotation).filter((c) => c.type === "type");
    annotation = args[0]?.firstNamedChild ?? null;
    info =
      args
        .slice(1)
        .map((a) => a.firstNamedChild)
        .find((a): a is Node => a?.type === "call" && isTyper(a, imports)) ?? null;
  }
  let defaultNode = value;
  if (value?.type === "call" && isTyper(value, imports)) {
    info = value;
    defaultNode = callArguments(value).positional[0] ?? callArguments(value).keywords.get("default") ?? null;
  }
  return { annotation, info, defaultNode };
}

/** Without an annotation, the default's own type (as Typer and Fire take it). */
function literalCategory(lit: ReturnType<typeof literal> | null): ParameterCategory | "flag" {
  switch (lit?.kind) {
    case "int":
      return "integer";
    case "float":
      return "number";
    case "bool":
      return "flag";
    default:
      return "string";
  }
}

/** typer.Option / typer.Argument's kind, its option spellings and its help. */
function typerInfo(info: Node | null, imports: PythonImports): { kind: string | null; decls: string[]; description: string | null } {
  if (!info) return { kind: null, decls: [], description: null };
  const infoArgs = callArguments(info);
  const kind = lastSegment(qualifiedName(info.childForFieldName("function"), imports) ?? "");
  // In the old spelling typer.Option(default, "--name"); in Annotated, typer.Option("--name").
  const decls = infoArgs.positional.map((a) => stringLiteral(a)).filter((s): s is string => !!s && s.startsWith("-"));
  const help = stringLiteral(infoArgs.keywords.get("help"));
  return { kind, decls, description: help ? foldWhitespace(help) || null : null };
}

function parameter(p: Node, imports: PythonImports): Parameter | null {
  const parts = parameterParts(p);
  if (!parts) return null;
  const name = parts.nameNode?.type === "identifier" ? parts.nameNode.text : null;
  if (!name || name === "self" || name === "ctx") return null;

  const { annotation, info, defaultNode } = typerSpelling(parts.type, parts.value, imports);
  const typeName = baseType(annotation, imports);
  if (typeName === "typer.Context" || typeName === "Context") return null;
  const { kind, decls, description } = typerInfo(info, imports);
  const required = defaultNode === null || defaultNode.type === "ellipsis";
  const positional = kind === "Argument" || (kind === null && defaultNode === null);
  const long = decls.find((d) => d.startsWith("--"))?.split("/")[0] ?? `--${name.replace(/_/g, "-")}`;
  const lit = required ? null : literal(defaultNode);
  const category = annotation ? categoryOf(typeName) : literalCategory(lit);

  if (category === "flag" && !positional) {
    if (lit?.value === true) return negated(name, long, description, decls.find((d) => d.includes("/"))?.split("/")[1]);
    return { name, value: false, category: "flag", cli_option: long, choices: null, description, required: false };
  }
  const cat: ParameterCategory = category === "flag" ? "boolean" : category;
  return {
    name,
    value: defaultValue(lit, cat, ["true", "false"]),
    category: cat,
    cli_option: positional ? null : long,
    choices: null,
    description: withNote(description, lit),
    required: required && (positional || kind === "Option"),
  };
}

const isTyper = (call: Node, imports: PythonImports): boolean =>
  /^typer\.(Option|Argument)$/.test(qualifiedName(call.childForFieldName("function"), imports) ?? "");

/** The annotation's type without Optional / `| None`. */
function baseType(node: Node | null, imports: PythonImports): string | null {
  if (!node) return null;
  if (node.type === "binary_operator") {
    const parts = [node.childForFieldName("left"), node.childForFieldName("right")].filter((n): n is Node => !!n && n.text !== "None");
    return parts.length === 1 ? baseType(parts[0]!, imports) : null;
  }
  if (node.type === "generic_type") {
    const outer = lastSegment(qualifiedName(node.firstNamedChild, imports) ?? node.firstNamedChild?.text ?? "");
    const inner = children(children(node).find((c) => c.type === "type_parameter") ?? node)
      .filter((c) => c.type === "type" && c.text !== "None")
      .map((c) => c.firstNamedChild);
    if ((outer === "Optional" || outer === "Union") && inner.length === 1) return baseType(inner[0] ?? null, imports);
    return outer === "List" || outer === "list" ? "list" : null;
  }
  if (node.type === "identifier" || node.type === "attribute") return qualifiedName(node, imports) ?? node.text;
  return null;
}

function categoryOf(type: string | null): ParameterCategory | "flag" {
  switch (type) {
    case "int":
      return "integer";
    case "float":
      return "number";
    case "bool":
      return "flag";
    case "pathlib.Path":
    case "Path":
      return "path";
    default:
      return "string";
  }
}

/**
 * Python Fire: `fire.Fire(main)` runs one function, every parameter an option
 * (`--batch_size=32`; without a default it must be given); `fire.Fire({"train":
 * train, ...})` runs the named one. A bool is a switch: `--x`, or `--nox` to
 * turn off one that defaults to on.
 */
export function fireCommands(root: Node, imports: PythonImports): TyperCommand[] {
  if (!imported(imports, "fire")) return [];
  const functions = functionsByName(root);
  for (const call of descendants(root, "call")) {
    if (qualifiedName(call.childForFieldName("function"), imports) !== "fire.Fire") continue;
    const target = callArguments(call).positional[0];
    if (target?.type === "identifier" && functions.has(target.text)) return [fireCommand(functions.get(target.text)!, null, imports)];
    if (target?.type === "dictionary") {
      const out: TyperCommand[] = [];
      for (const pair of children(target)) {
        const key = stringLiteral(pair.childForFieldName("key"));
        const fn = functions.get(pair.childForFieldName("value")?.text ?? "");
        if (key && fn && /^[\w][\w-]*$/.test(key)) out.push(fireCommand(fn, key, imports));
      }
      return out;
    }
    return [];
  }
  return [];
}

function fireCommand(fn: Node, name: string | null, imports: PythonImports): TyperCommand {
  const typed = command(fn, name, null, imports);
  const parameters = typed.parameters.map((p): Parameter => {
    if (p.category === "flag")
      return p.name.startsWith("no_") && p.cli_option?.startsWith("--no-")
        ? { ...p, name: `no${p.name.slice(3)}`, cli_option: `--no${p.name.slice(3)}` }
        : { ...p, cli_option: `--${p.name}` };
    return { ...p, cli_option: `--${p.name}`, required: p.cli_option === null && p.value === null ? p.required : false };
  });
  return { ...typed, parameters };
}
