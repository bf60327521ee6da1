import type { EnvVarUse } from "../model.ts";
import { children, descendants, lineOf, type Node } from "../syntax.ts";
import { calleeName, propertyKey, stringValue, unwrap } from "./node-literals.ts";

// Environment variables JavaScript/TypeScript code reads: `process.env.X`,
// `process.env["X"]`, `import.meta.env.X`, destructuring from them and
// `"X" in process.env`. A read is required unless the code visibly copes with
// the variable being unset: a `??`/`||` fallback, a test, a destructuring
// default. A test whose branch throws or exits is a guard, not a way of coping.

export function envUses(root: Node, path: string): EnvVarUse[] {
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
      if (name !== null && !isWriteOrCall(n)) add(name, n, !copesWithUnset(n) && !storedThenTested(n));
    }
  }
  return out.sort((a, b) => a.line - b.line || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
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

function hasFallback(use: Node): boolean {
  let cur = use;
  // Inside `process.env.X?.trim()` the whole chain is undefined when X is unset.
  let optionalChain = false;
  for (;;) {
    const p = cur.parent;
    if (!p) return false;
    if (TRANSPARENT.has(p.type)) {
      cur = p;
      continue;
    }
    if (p.type === "member_expression" && p.childForFieldName("object")?.equals(cur)) {
      optionalChain ||= p.childForFieldName("optional_chain") !== null;
      if (!optionalChain) return false;
      cur = p;
      continue;
    }
    if (optionalChain && p.type === "call_expression" && p.childForFieldName("function")?.equals(cur)) {
      cur = p;
      continue;
    }
    if (p.type === "arguments" && p.firstNamedChild?.equals(cur)) {
      const call = p.parent;
      if (call?.type === "call_expression" && CONVERSIONS.has(calleeName(call) ?? "")) {
        cur = call;
        continue;
      }
    }
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
