import type { EnvVarUse } from "../../model.ts";
import { children, descendants, lineOf, type Node } from "../../syntax.ts";
import { callArguments, calleeName, calleeObject, objectProperties, propertyKey, stringValue, topLevelValue, unwrap } from "./literals.ts";

// Environment variables JavaScript/TypeScript code reads: `process.env.X`,
// `process.env["X"]`, `import.meta.env.X`, destructuring from them and
// `"X" in process.env`. A read is required unless the code visibly copes with
// the variable being unset: a `??`/`||` fallback, a test, a destructuring
// default. A test whose branch throws or exits is a guard, not a way of coping.

export function envUses(root: Node, path: string, text?: string): EnvVarUse[] {
  const out: EnvVarUse[] = [];
  const add = (name: string | null, node: Node, required: boolean) => {
    if (name && validName(name)) out.push({ name, path, line: lineOf(node), required });
  };
  // One walk for every kind of node a read can be.
  for (const n of descendants(root, ["member_expression", "subscript_expression", "variable_declarator", "binary_expression"])) {
    if (n.type === "variable_declarator") destructured(n, add);
    else if (n.type === "binary_expression") {
      if (n.childForFieldName("operator")?.text === "in" && isEnvObject(n.childForFieldName("right"))) {
        add(stringValue(n.childForFieldName("left")), n, !copesWithUnset(n));
      }
    } else if (isEnvObject(n.childForFieldName("object"))) {
      const name = n.type === "member_expression" ? memberName(n) : stringValue(n.childForFieldName("index"));
      if (name !== null && !isWriteOrCall(n)) add(name, n, !copesWithUnset(n) && !storedThenTested(n) && !cannotStop(n));
    }
  }
  // Only a file that calls a validator can hold a schema for the environment.
  if (text === undefined || /cleanEnv|[pP]arse(Async)?\(|validate(Async)?\(|attempt\(/.test(text)) out.push(...schemaUses(root, path));
  return out.sort((a, b) => a.line - b.line || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Variables a schema validates the environment against: envalid's
 * `cleanEnv(process.env, { A: str(), B: port({ default: 3000 }) })`, zod's
 * `z.object({ A: z.string(), B: z.coerce.number().default(3) }).parse(process.env)`
 * and Joi's `Joi.object({ A: Joi.string().required() }).validate(process.env)`
 * (the schema inline or in a const). Required as the library decides: envalid
 * without a default, zod unless optional or defaulted, Joi only when .required().
 */
function schemaUses(root: Node, path: string): EnvVarUse[] {
  const out: EnvVarUse[] = [];
  for (const call of descendants(root, "call_expression")) {
    const name = calleeName(call);
    const args = callArguments(call);
    if (name === "cleanEnv" && isEnvObject(args[0])) cleanEnvUses(out, root, args[1], path);
    else if (name !== null && VALIDATORS.has(name) && args.some((a) => isEnvObject(a))) validatorUses(out, root, call, name, path);
  }
  return out;
}

const VALIDATORS = new Set(["parse", "safeParse", "parseAsync", "safeParseAsync", "validate", "validateAsync", "attempt"]);

/** envalid: required unless the validator is given a default. */
function cleanEnvUses(out: EnvVarUse[], root: Node, schema: Node | undefined, path: string): void {
  for (const [key, value] of schemaKeys(root, schema).keys) {
    const spec = unwrap(value);
    const options = spec?.type === "call_expression" ? objectProperties(callArguments(spec)[0]) : null;
    add(out, key, value, path, !(options?.has("default") || options?.has("devDefault")));
  }
}

/**
 * zod's `schema.parse(process.env)` and Joi's `schema.validate(process.env)` /
 * `Joi.attempt(process.env, schema)`, the schema inline or built through
 * variables and further calls (`base.extend({...})`, `s.prefs({...}).validate(...)`).
 */
function validatorUses(out: EnvVarUse[], root: Node, call: Node, name: string, path: string): void {
  const args = callArguments(call);
  const { keys, joi } = schemaKeys(root, name === "attempt" ? args[1] : calleeObject(call));
  for (const [key, value] of keys) {
    const chain = unwrap(value)?.text ?? "";
    add(out, key, value, path, joi ? /\.required\(\)/.test(chain) : !/\.(optional|default|nullish|catch)\(/.test(chain));
  }
}

function add(out: EnvVarUse[], name: string, node: Node, path: string, required: boolean): void {
  if (validName(name) && /^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) out.push({ name, path, line: lineOf(node), required });
}

// Calls of a schema's chain that add keys: z.object, .extend, .merge (of another object schema), Joi.object, .keys, .append.
const KEYED = new Set(["object", "keys", "strictObject", "looseObject", "extend", "append", "merge"]);

/**
 * The keys a schema expression declares, following its chain of calls and the
 * variables it is built from (`const base = z.object({...}); const s =
 * base.extend({...})`), and whether it is a Joi schema (whose keys are
 * optional unless .required()).
 */
function schemaKeys(root: Node, node: Node | null | undefined): { keys: Map<string, Node>; joi: boolean } {
  const keys = new Map<string, Node>();
  let joi = false;
  const pending: Node[] = [];
  const first = unwrap(node);
  if (first) pending.push(first);
  const seen = new Set<string>();
  for (let steps = 0; pending.length && steps < 64; steps++) {
    let n: Node | null = pending.pop()!;
    while (n) {
      if (n.type === "identifier") {
        if (seen.has(n.text)) break;
        seen.add(n.text);
        if (/^joi$/i.test(n.text)) joi = true;
        n = unwrap(bindingValue(root, n.text));
        continue;
      }
      if (n.type === "object") {
        for (const [k, v] of objectProperties(n) ?? []) if (!keys.has(k)) keys.set(k, v);
        break;
      }
      if (n.type !== "call_expression") break;
      const name = calleeName(n);
      if (name !== null && KEYED.has(name)) {
        const arg = unwrap(callArguments(n)[0]);
        if (arg) pending.push(arg);
      }
      n = unwrap(calleeObject(n));
      if (n?.type === "member_expression") n = unwrap(n.childForFieldName("object"));
    }
  }
  return { keys, joi };
}

/** The value a name is bound to: its top-level const, else the first declarator of that name anywhere in the file. */
function bindingValue(root: Node, name: string): Node | null {
  const top = topLevelValue(root, name);
  if (top) return top;
  for (const d of descendants(root, "variable_declarator")) {
    if (d.childForFieldName("name")?.text === name) return d.childForFieldName("value");
  }
  return null;
}

/** `const { A = "d", B, C: c } = process.env`: a default copes with A being unset. */
function destructured(d: Node, add: (name: string | null, node: Node, required: boolean) => void): void {
  const pattern = d.childForFieldName("name");
  if (pattern?.type !== "object_pattern" || !isEnvObject(d.childForFieldName("value"))) return;
  for (const p of children(pattern)) {
    if (p.type === "shorthand_property_identifier_pattern") add(p.text, p, !bindingTested(d, p));
    else if (p.type === "object_assignment_pattern") add(p.childForFieldName("left")?.text ?? null, p, false);
    else if (p.type === "pair_pattern") add(propertyKey(p), p, p.childForFieldName("value")?.type !== "assignment_pattern");
  }
}

const validName = (name: string) => name.length > 0 && name.length <= 256 && !/\s/.test(name);

/** `process.env` or `import.meta.env`. */
function isEnvObject(node: Node | null | undefined): boolean {
  const n = unwrap(node);
  if (n?.type !== "member_expression" || memberName(n) !== "env") return false;
  const obj = unwrap(n.childForFieldName("object"));
  return (obj?.type === "identifier" && obj.text === "process") || (obj?.type === "meta_property" && obj.text === "import.meta");
}

function memberName(m: Node): string | null {
  const p = m.childForFieldName("property");
  return p?.type === "property_identifier" ? p.text : null;
}

/** `process.env.X = ...`, `delete process.env.X` and `process.env.hasOwnProperty(...)` are not reads of X. */
function isWriteOrCall(m: Node): boolean {
  const p = m.parent;
  if (!p) return false;
  if (["assignment_expression", "augmented_assignment_expression"].includes(p.type)) return p.childForFieldName("left")?.equals(m) ?? false;
  if (p.type === "update_expression") return true;
  if (p.type === "unary_expression" && p.childForFieldName("operator")?.text === "delete") return true;
  if (p.type === "call_expression") return p.childForFieldName("function")?.equals(m) ?? false;
  return false;
}

const TRANSPARENT = new Set(["parenthesized_expression", "as_expression", "satisfies_expression", "non_null_expression"]);
// Conversions that keep "unset" visible to a fallback after them: `Number(process.env.X) || 3`.
const CONVERSIONS = new Set(["Number", "parseInt", "parseFloat", "String", "Boolean"]);
const CONDITION_OWNERS = new Set(["if_statement", "while_statement", "do_statement", "for_statement", "switch_statement"]);

/** One step up from a use: the node it climbs to, or the verdict where it stops. */
type Climb = { next: Node; optionalChain: boolean } | { verdict: boolean };

function hasFallback(use: Node): boolean {
  let cur = use;
  // Inside `process.env.X?.trim()` the whole chain is undefined when X is unset.
  let optionalChain = false;
  for (;;) {
    const p = cur.parent;
    if (!p) return false;
    const step = climb(p, cur, optionalChain);
    if ("verdict" in step) return step.verdict;
    cur = step.next;
    optionalChain = step.optionalChain;
  }
}

/** Through parentheses, type assertions, an optional chain and conversions, which keep "unset" visible; else whether p tests the value. */
function climb(p: Node, cur: Node, optionalChain: boolean): Climb {
  if (TRANSPARENT.has(p.type)) return { next: p, optionalChain };
  if (p.type === "member_expression" && p.childForFieldName("object")?.equals(cur)) {
    const chained = optionalChain || p.childForFieldName("optional_chain") !== null;
    return chained ? { next: p, optionalChain: chained } : { verdict: false };
  }
  if (optionalChain && p.type === "call_expression" && p.childForFieldName("function")?.equals(cur)) return { next: p, optionalChain };
  const conversion = conversionOf(p, cur);
  if (conversion) return { next: conversion, optionalChain };
  return { verdict: testsValue(p, cur) };
}

/** The `Number(cur)`-style call whose first argument cur is. */
function conversionOf(p: Node, cur: Node): Node | null {
  if (p.type !== "arguments" || !p.firstNamedChild?.equals(cur)) return null;
  const call = p.parent;
  return call?.type === "call_expression" && CONVERSIONS.has(calleeName(call) ?? "") ? call : null;
}

/** Whether p copes with cur being unset: a fallback, a comparison, a negation or typeof, or a condition. */
function testsValue(p: Node, cur: Node): boolean {
  if (p.type === "binary_expression") {
    const op = p.childForFieldName("operator")?.text;
    const isLeft = p.childForFieldName("left")?.equals(cur) ?? false;
    if ((op === "??" || op === "||" || op === "&&") && isLeft) return true;
    return op === "===" || op === "!==" || op === "==" || op === "!=";
  }
  if (p.type === "unary_expression") {
    const op = p.childForFieldName("operator")?.text;
    return op === "!" || op === "typeof";
  }
  if (p.type === "ternary_expression") return p.childForFieldName("condition")?.equals(cur) ?? false;
  if (CONDITION_OWNERS.has(p.type)) {
    const cond = p.childForFieldName(p.type === "switch_statement" ? "value" : "condition");
    return cond?.equals(cur) ?? false;
  }
  return false;
}

/**
 * A read that cannot stop the program: one interpolated into a template
 * string (`${process.env.ORIGIN}/health` gives "undefined/health"), or one the
 * program makes only on some paths (in a branch of an `if`, a `switch` case or
 * a conditional expression, up to the enclosing function).
 */
function cannotStop(use: Node): boolean {
  let cur = use;
  while (cur.parent && (TRANSPARENT.has(cur.parent.type) || conversionOf(cur.parent, cur))) cur = conversionOf(cur.parent, cur) ?? cur.parent;
  if (cur.parent?.type === "template_substitution") return true;
  for (let n = cur; n.parent; n = n.parent) {
    const p = n.parent;
    if (STOPS.has(p.type) && p.type !== "statement_block") return false;
    if (p.type === "if_statement" && !(p.childForFieldName("condition")?.equals(n) ?? false)) return true;
    if (p.type === "else_clause" || p.type === "switch_case" || p.type === "switch_default") return true;
    if (p.type === "ternary_expression" && !(p.childForFieldName("condition")?.equals(n) ?? false)) return true;
  }
  return false;
}

// Scopes a `const v = ...` is visible in, nearest first.
const SCOPES = new Set(["statement_block", "program", "function_declaration", "arrow_function", "function_expression", "method_definition"]);

/** `const v = process.env.X` followed by a test or fallback on v (`if (!v)`, `v ?? "d"`) in v's scope. */
function storedThenTested(use: Node): boolean {
  let cur = use;
  while (cur.parent && TRANSPARENT.has(cur.parent.type)) cur = cur.parent;
  const decl = cur.parent;
  if (decl?.type !== "variable_declarator" || !decl.childForFieldName("value")?.equals(cur)) return false;
  const name = decl.childForFieldName("name");
  return name?.type === "identifier" && bindingTested(decl, name);
}

/** Whether the variable a declarator binds (`binding`) is tested or given a fallback where it is visible. */
function bindingTested(decl: Node, binding: Node): boolean {
  let scope: Node | null = decl.parent;
  while (scope && !SCOPES.has(scope.type)) scope = scope.parent;
  if (!scope) return false;
  return descendants(scope, "identifier").some((id) => id.text === binding.text && !id.equals(binding) && copesWithUnset(id));
}

const copesWithUnset = (node: Node): boolean => hasFallback(node) && !guardExits(node);

// Statements that end the program (or this call) when the variable is missing.
function exits(statement: Node): boolean {
  if (statement.type === "throw_statement") return true;
  if (statement.type !== "expression_statement") return false;
  const call = unwrap(children(statement)[0]);
  const fn = call?.type === "call_expression" ? unwrap(call.childForFieldName("function")) : null;
  return fn?.type === "member_expression" && fn.text === "process.exit";
}

/** The use sits in the condition of an `if` whose branch throws or exits: `if (!process.env.X) throw ...`. */
function guardExits(use: Node): boolean {
  for (let n = use; n.parent; n = n.parent) {
    const p = n.parent;
    if (p.type === "if_statement") {
      if (!p.childForFieldName("condition")?.equals(n)) return false;
      const branch = p.childForFieldName("consequence");
      if (!branch) return false;
      return branch.type === "statement_block" ? children(branch).some(exits) : exits(branch);
    }
    if (STOPS.has(p.type) || p.type.endsWith("_statement") || p.type.endsWith("declaration")) return false;
  }
  return false;
}

const STOPS = new Set(["statement_block", "program", "arrow_function", "function_expression", "function_declaration", "method_definition", "class_body"]);
