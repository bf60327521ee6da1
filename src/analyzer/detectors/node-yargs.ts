import type { Parameter, ParameterCategory } from "../model.ts";
import { descendants, type Node } from "../syntax.ts";
import { callArguments, calleeName, calleeObject, callPosition, clip, literal, literalArray, objectOrConst, objectProperties, stringValue, unwrap } from "./node-literals.ts";

// Options a yargs program declares: `.option(name, {...})`, `.options({...})`,
// the default command `$0 <file>` with its `.positional()`s, and
// `.demandOption()`. Options inside a named subcommand's builder belong to
// that subcommand, which the entry point alone does not run, so they are left out.

export function yargsParameters(root: Node): Parameter[] {
  const found: { at: number; param: Parameter }[] = [];
  const positionals = new Map<string, { at: number; required: boolean }>();
  const positionalSpecs = new Map<string, Map<string, Node>>();
  const demanded = new Set<string>();

  for (const call of descendants(root, "call_expression")) {
    const name = calleeName(call);
    if (!name || !calleeObject(call) || inNamedCommand(call)) continue;
    const args = callArguments(call);
    const at = callPosition(call);
    if (name === "option" || name === "options") {
      const key = stringValue(args[0]);
      if (key !== null) {
        const spec = objectOrConst(root, args[1]) ?? new Map<string, Node>();
        found.push({ at, param: optionParameter(key, spec) });
      } else {
        const all = objectOrConst(root, args[0]);
        let i = 0;
        for (const [key, value] of all ?? []) found.push({ at: at + i++ / 1000, param: optionParameter(key, objectOrConst(root, value) ?? new Map()) });
      }
    } else if (name === "positional") {
      const key = stringValue(args[0]);
      if (key !== null && !positionalSpecs.has(key)) positionalSpecs.set(key, objectOrConst(root, args[1]) ?? new Map());
    } else if (name === "command" && isDefaultCommand(args[0])) {
      const words = defaultCommandWords(args[0]);
      words.forEach((w, i) => {
        if (!positionals.has(w.name)) positionals.set(w.name, { at: at + i / 1000, required: w.required });
      });
      const builder = objectProperties(args[2]);
      for (const [key, value] of builder ?? []) found.push({ at: at + 0.5, param: optionParameter(key, objectOrConst(root, value) ?? new Map()) });
    } else if (name === "demandOption") {
      const one = stringValue(args[0]);
      if (one !== null) demanded.add(one);
      for (const v of literalArray(args[0]) ?? []) if (typeof v === "string") demanded.add(v);
    }
  }

  for (const [key, pos] of positionals) {
    const p = optionParameter(key, positionalSpecs.get(key) ?? new Map());
    found.push({ at: pos.at, param: { ...p, cli_option: null, required: pos.required || p.required } });
  }
  return found
    .sort((a, b) => a.at - b.at)
    .map(({ param }) => (demanded.has(param.name) ? { ...param, required: true } : param));
}

function optionParameter(name: string, spec: Map<string, Node>): Parameter {
  const def = literal(spec.get("default"));
  const type = stringValue(spec.get("type")) ?? shorthandType(spec);
  let category: ParameterCategory;
  let cli = `--${name}`;
  let value = def && typeof def.value === "string" ? clip(def.value, 4096) : (def?.value ?? null);
  const kind = type ?? (def?.kind === "boolean" ? "boolean" : def?.kind === "integer" || def?.kind === "number" ? "number" : "string");
  if (kind === "boolean" || kind === "count") {
    // A switch that defaults to on can only be turned off by writing its value.
    if (kind === "boolean" && def?.value === true) {
      category = "boolean";
      cli = `--${name}=`;
    } else {
      category = "flag";
      value = typeof def?.value === "boolean" ? def.value : false;
    }
  } else if (kind === "number") {
    category = def?.kind === "integer" ? "integer" : "number";
  } else {
    category = "string";
  }
  const choices = literalArray(spec.get("choices"));
  const description = stringValue(spec.get("describe") ?? spec.get("description") ?? spec.get("desc"));
  // `demandOption: true` or a message string; a name or call is not known to be truthy.
  const demand = ["demandOption", "demand", "required", "require"].some((k) => {
    const lit = literal(spec.get(k));
    return lit !== null && lit.value !== false && lit.value !== null && lit.value !== "";
  });
  return {
    name: clip(name, 256),
    value,
    category,
    cli_option: clip(cli, 256),
    choices: choices ? choices.slice(0, 256).map((c) => (typeof c === "string" ? clip(c, 1024) : c)) : null,
    description: description ? clip(description, 4096) : null,
    required: demand,
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
