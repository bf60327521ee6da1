import type { Parameter, ParameterCategory } from "../../model.ts";
import { descendants, type Node } from "../../syntax.ts";
import {
  callArguments,
  calleeName,
  calleeObject,
  callPosition,
  clip,
  literal,
  literalArray,
  objectOrConst,
  objectProperties,
  stringValue,
  unwrap,
} from "./literals.ts";

// Options a yargs program declares: `.option(name, {...})`, `.options({...})`,
// the default command `$0 <file>` with its `.positional()`s, and the chained
// declarations (`.boolean("x")`, `.number()`, `.string()`, `.count()`,
// `.choices("x", [...])`, `.default("x", v)`, `.describe()`, `.alias()`,
// `.demandOption()`, `.require()` / `.demand()`). An option is named by its
// long name: `.option("e", { alias: "epochs" })` is epochs. Options inside a
// named command's builder (`.command("train <data>", "...", (y) => y.option(...))`)
// belong to that command: they are returned as its sub-command.

export interface YargsFacts {
  parameters: Parameter[];
  /** The program runs without a command word (a `$0` default command, or no named command at all). */
  runsAlone: boolean;
  subcommands: { name: string; parameters: Parameter[]; description: string | null }[];
}

const TYPE_METHODS = new Set(["boolean", "number", "string", "count", "array"]);
const DEMAND_METHODS = new Set(["demandOption", "require", "required", "demand"]);

export function yargsFacts(root: Node): YargsFacts {
  const calls = descendants(root, "call_expression").filter((c) => calleeName(c) && calleeObject(c));
  const parameters = scopeParameters(
    root,
    calls.filter((c) => !inNamedCommand(c)),
    [],
  );
  const subcommands: YargsFacts["subcommands"] = [];
  for (const call of calls) {
    if (calleeName(call) !== "command" || inNamedCommand(call)) continue;
    const args = callArguments(call);
    const spec = stringValue(args[0]) ?? (literalArray(args[0]) ?? []).find((v): v is string => typeof v === "string") ?? null;
    if (spec === null || isDefaultCommand(args[0])) continue;
    const name = spec.trim().split(/\s+/)[0] ?? "";
    if (!/^[\w][\w:.-]*$/.test(name) || subcommands.some((c) => c.name === name)) continue;
    const builder = unwrap(args[2]);
    const inBuilder = builder ? calls.filter((c) => within(c, builder)) : [];
    const params = scopeParameters(root, inBuilder, commandWords(spec));
    for (const [key, value] of objectProperties(builder) ?? []) params.push(optionParameter(key, objectOrConst(root, value) ?? new Map<string, Node>()));
    const description = stringValue(args[1]);
    subcommands.push({ name, parameters: dedupe(params), description: description ? clip(description, 4096) : null });
  }
  const runsAlone = subcommands.length === 0 || calls.some((c) => calleeName(c) === "command" && isDefaultCommand(callArguments(c)[0]));
  return { parameters, subcommands, runsAlone };
}

/** @deprecated name kept for callers that only want the top level. */
export function yargsParameters(root: Node): Parameter[] {
  return yargsFacts(root).parameters;
}

function within(node: Node, scope: Node): boolean {
  for (let n: Node | null = node; n; n = n.parent) if (n.equals(scope)) return true;
  return false;
}

function dedupe(params: Parameter[]): Parameter[] {
  const seen = new Set<string>();
  return params.filter((p) => (seen.has(p.name) ? false : (seen.add(p.name), true)));
}

type Spec = Map<string, Node>;
type Word = { name: string; required: boolean };
/** What chained calls say about an option, by the key they name. */
type Chained = { at: number; type?: string; choices?: Node; default?: Node; describe?: Node };
type Merged = { at: number; spec: Spec; type?: string };

const keysOf = (node: Node | undefined): string[] => {
  const one = stringValue(node);
  if (one !== null) return [one];
  return (literalArray(node) ?? []).filter((v): v is string => typeof v === "string");
};

/** What a scope's calls declare, gathered call by call. */
class ScopeDeclarations {
  readonly found: { at: number; key: string; spec: Spec }[] = [];
  readonly positionals: Map<string, { at: number; required: boolean }>;
  readonly positionalSpecs = new Map<string, Spec>();
  readonly demanded = new Set<string>();
  readonly chained = new Map<string, Chained>();
  readonly aliases = new Map<string, string[]>();
  private readonly root: Node;

  constructor(root: Node, words: Word[]) {
    this.root = root;
    this.positionals = new Map(words.map((w, i) => [w.name, { at: -1 + i / 1000, required: w.required }]));
  }

  read(call: Node): void {
    const name = calleeName(call)!;
    const args = callArguments(call);
    const at = callPosition(call);
    if (name === "option" || name === "options") this.options(args, at);
    else if (name === "positional") this.positional(args);
    else if (name === "command" && isDefaultCommand(args[0])) this.defaultCommand(args, at);
    else if (DEMAND_METHODS.has(name)) {
      // `.require(n)` with a number is a count of positionals, not an option.
      for (const k of keysOf(args[0])) this.demanded.add(k);
    } else if (TYPE_METHODS.has(name)) {
      for (const k of keysOf(args[0])) this.chain(k, at).type = name;
    } else if (name === "choices" || name === "default" || name === "describe") this.chainedField(name, args, at);
    else if (name === "alias") this.alias(args);
  }

  private spec(node: Node | undefined): Spec {
    return objectOrConst(this.root, node) ?? new Map<string, Node>();
  }

  private options(args: Node[], at: number): void {
    const key = stringValue(args[0]);
    if (key !== null) {
      this.found.push({ at, key, spec: this.spec(args[1]) });
      return;
    }
    let i = 0;
    for (const [k, value] of objectOrConst(this.root, args[0]) ?? []) this.found.push({ at: at + i++ / 1000, key: k, spec: this.spec(value) });
  }

  private positional(args: Node[]): void {
    const key = stringValue(args[0]);
    if (key !== null && !this.positionalSpecs.has(key)) this.positionalSpecs.set(key, this.spec(args[1]));
  }

  private defaultCommand(args: Node[], at: number): void {
    defaultCommandWords(args[0]).forEach((w, i) => {
      if (!this.positionals.has(w.name)) this.positionals.set(w.name, { at: at + i / 1000, required: w.required });
    });
    for (const [key, value] of objectProperties(args[2]) ?? []) this.found.push({ at: at + 0.5, key, spec: this.spec(value) });
  }

  private chain(key: string, at: number): Chained {
    let c = this.chained.get(key);
    if (!c) this.chained.set(key, (c = { at }));
    return c;
  }

  private chainedField(field: "choices" | "default" | "describe", args: Node[], at: number): void {
    const key = stringValue(args[0]);
    if (key !== null && args[1]) this.chain(key, at)[field] = args[1];
    else for (const [k, v] of objectProperties(args[0]) ?? []) this.chain(k, at)[field] = v;
  }

  private addAlias(key: string, names: string[]): void {
    this.aliases.set(key, [...(this.aliases.get(key) ?? []), ...names]);
  }

  private alias(args: Node[]): void {
    const key = stringValue(args[0]);
    if (key !== null) this.addAlias(key, keysOf(args[1]));
    else for (const [k, v] of objectProperties(args[0]) ?? []) this.addAlias(k, keysOf(v));
  }
}

/** The options by canonical (long) name, and every key an option is known by to that name. */
function mergeOptions(d: ScopeDeclarations): { merged: Map<string, Merged>; canonical: Map<string, string> } {
  const canonical = new Map<string, string>();
  const group = (key: string, spec?: Spec) => {
    const names = [key, ...keysOf(spec?.get("alias")), ...(d.aliases.get(key) ?? [])];
    for (const [k, list] of d.aliases) if (list.includes(key)) names.push(k, ...list);
    const long = names.filter((n) => n.length > 1).sort((a, b) => b.length - a.length)[0] ?? key;
    for (const n of names) if (!canonical.has(n)) canonical.set(n, long);
    return long;
  };
  const merged = new Map<string, Merged>();
  for (const f of d.found) {
    const name = group(f.key, f.spec);
    const seen = merged.get(name);
    if (!seen) merged.set(name, { at: f.at, spec: new Map(f.spec) });
  }
  for (const [key, c] of d.chained) {
    const name = canonical.get(key) ?? group(key);
    let entry = merged.get(name);
    if (!entry) merged.set(name, (entry = { at: c.at, spec: new Map() }));
    applyChained(entry, c);
  }
  return { merged, canonical };
}

/** Chained calls fill in what an option's own spec leaves out. */
function applyChained(entry: Merged, c: Chained): void {
  if (c.type) entry.type ??= c.type;
  for (const field of ["choices", "default", "describe"] as const) {
    const node = c[field];
    if (node && !entry.spec.has(field)) entry.spec.set(field, node);
  }
}

/** The parameters that these calls declare; `words` are a command string's positionals. */
function scopeParameters(root: Node, calls: readonly Node[], words: Word[]): Parameter[] {
  const d = new ScopeDeclarations(root, words);
  for (const call of calls) d.read(call);
  const { merged, canonical } = mergeOptions(d);

  const out: { at: number; param: Parameter }[] = [];
  for (const [name, { at, spec, type }] of merged) {
    if (d.positionals.has(name)) {
      d.positionalSpecs.set(name, new Map([...spec, ...(d.positionalSpecs.get(name) ?? [])]));
      continue;
    }
    out.push({ at, param: optionParameter(name, spec, type) });
  }
  for (const [key, pos] of d.positionals) {
    const p = optionParameter(key, d.positionalSpecs.get(key) ?? new Map<string, Node>());
    out.push({ at: pos.at, param: { ...p, cli_option: null, required: pos.required || p.required } });
  }
  const isDemanded = (name: string) => d.demanded.has(name) || [...d.demanded].some((k) => canonical.get(k) === name);
  return out.sort((a, b) => a.at - b.at).map(({ param }) => (isDemanded(param.name) ? { ...param, required: true } : param));
}

/** The `<name>` / `[name]` words after a command's name. */
function commandWords(spec: string): { name: string; required: boolean }[] {
  const out: { name: string; required: boolean }[] = [];
  for (const word of spec.trim().split(/\s+/).slice(1)) {
    const m = /^(<|\[)([^>\]|.]+?)(?:\|[^>\]]*)?(?:\.\.\.)?(>|\])$/.exec(word);
    if (m?.[2]) out.push({ name: m[2], required: m[1] === "<" });
  }
  return out;
}

type Literal = ReturnType<typeof literal>;

/** The kind of value an option takes: its declared type, else its default's. */
function valueKind(type: string | null, def: Literal): string {
  if (type) return type;
  if (def?.kind === "boolean") return "boolean";
  return def?.kind === "integer" || def?.kind === "number" ? "number" : "string";
}

/** The category, the way to write the option and the value it has unless written. */
function optionShape(name: string, type: string | null, def: Literal): { category: ParameterCategory; cli: string; value: Parameter["value"] } {
  const value = def && typeof def.value === "string" ? clip(def.value, 4096) : (def?.value ?? null);
  const kind = valueKind(type, def);
  if (kind === "boolean" && def?.value === true) {
    // A switch that defaults to on can only be turned off by writing its value.
    return { category: "boolean", cli: `--${name}=`, value };
  }
  if (kind === "boolean" || kind === "count") return { category: "flag", cli: `--${name}`, value: typeof def?.value === "boolean" ? def.value : false };
  if (kind === "number") return { category: def?.kind === "integer" ? "integer" : "number", cli: `--${name}`, value };
  return { category: "string", cli: `--${name}`, value };
}

// `demandOption: true` or a message string; a name or call is not known to be truthy.
const demands = (spec: Spec): boolean =>
  ["demandOption", "demand", "required", "require"].some((k) => {
    const lit = literal(spec.get(k));
    return lit !== null && lit.value !== false && lit.value !== null && lit.value !== "";
  });

function optionParameter(name: string, spec: Spec, chainedType?: string): Parameter {
  const def = literal(spec.get("default"));
  const type = stringValue(spec.get("type")) ?? shorthandType(spec) ?? chainedType ?? null;
  const { category, cli, value } = optionShape(name, type, def);
  const choices = literalArray(spec.get("choices"));
  const description = stringValue(spec.get("describe") ?? spec.get("description") ?? spec.get("desc"));
  return {
    name: clip(name, 256),
    value,
    category,
    cli_option: clip(cli, 256),
    choices: choices ? choices.slice(0, 256).map((c) => (typeof c === "string" ? clip(c, 1024) : c)) : null,
    description: description ? clip(description, 4096) : null,
    required: demands(spec),
  };
}

// `{ boolean: true }`, `{ number: true }`, ... are yargs' shorthand for `type`.
function shorthandType(spec: Map<string, Node>): string | null {
  for (const t of ["boolean", "number", "string", "count", "array"]) {
    if (literal(spec.get(t))?.value === true) return t;
  }
  return null;
}

function isDefaultCommand(node: Node | undefined): boolean {
  const s = stringValue(node);
  if (s !== null) return /^\$0(\s|$)/.test(s.trim());
  return (literalArray(node) ?? []).some((v) => typeof v === "string" && /^\$0(\s|$)/.test(v.trim()));
}

function defaultCommandWords(node: Node | undefined): { name: string; required: boolean }[] {
  const s = stringValue(node) ?? (literalArray(node) ?? []).find((v): v is string => typeof v === "string" && /^\$0(\s|$)/.test(v.trim())) ?? "";
  const out: { name: string; required: boolean }[] = [];
  for (const word of s.trim().split(/\s+/).slice(1)) {
    const m = /^(<|\[)([^>\]|.]+?)(?:\|[^>\]]*)?(?:\.\.\.)?(>|\])$/.exec(word);
    if (m?.[2]) out.push({ name: m[2], required: m[1] === "<" });
  }
  return out;
}

/** True inside the arguments of `.command("name ...", ...)` for a command other than `$0`. */
function inNamedCommand(call: Node): boolean {
  for (let n = call.parent; n; n = n.parent) {
    if (n.type !== "arguments") continue;
    const owner = n.parent;
    if (owner?.type !== "call_expression" || calleeName(owner) !== "command") continue;
    if (!isDefaultCommand(callArguments(owner)[0])) return true;
  }
  return false;
}
