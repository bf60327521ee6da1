import { children, type Node } from "../../syntax.ts";

// JavaScript/TypeScript literals read off the syntax tree. Only what is
// spelled out in the source has a value; a name, a call or a template with a
// substitution is unknown (null), never guessed. Arithmetic on number
// literals (`1024 * 1024`, `60 * 60 * 1000`, `2 ** 20`) is computed as
// JavaScript does, since that is how people write sizes and durations.

export type Scalar = string | number | boolean | null;

export interface Literal {
  kind: "string" | "integer" | "number" | "boolean" | "null";
  value: Scalar;
}

// Wrappers that do not change a value: `(x)`, `x as const`, `x satisfies T`, `x!`, `<T>x`.
const TRANSPARENT = new Set(["parenthesized_expression", "as_expression", "satisfies_expression", "non_null_expression", "type_assertion"]);

export function unwrap(node: Node | null | undefined): Node | null {
  let n = node ?? null;
  while (n && TRANSPARENT.has(n.type)) {
    const inner = children(n).find((c) => c.type !== "comment");
    if (!inner) return null;
    n = inner;
  }
  return n;
}

/** The text of a string literal or of a template without substitutions; null otherwise. */
export function stringValue(node: Node | null | undefined): string | null {
  const n = unwrap(node);
  if (!n || (n.type !== "string" && n.type !== "template_string")) return null;
  let out = "";
  for (const part of children(n)) {
    if (part.type === "string_fragment") out += part.text;
    else if (part.type === "escape_sequence") out += unescape(part.text);
    else if (part.type === "comment") continue;
    else return null;
  }
  return out;
}

const ARITHMETIC: Record<string, (a: number, b: number) => number> = {
  "+": (a, b) => a + b,
  "-": (a, b) => a - b,
  "*": (a, b) => a * b,
  "/": (a, b) => a / b,
  "%": (a, b) => a % b,
  "**": (a, b) => a ** b,
  "<<": (a, b) => a << b,
  ">>": (a, b) => a >> b,
};

/** `a op b` on two number literals, as JavaScript computes it; an integer when both are and the result is one (never through `/`). */
function arithmetic(n: Node, depth: number): Literal | null {
  const op = ARITHMETIC[n.childForFieldName("operator")?.text ?? ""];
  const a = literal(n.childForFieldName("left"), depth + 1);
  const b = a && literal(n.childForFieldName("right"), depth + 1);
  const numeric = (l: Literal | null): l is Literal & { value: number } => l?.kind === "integer" || l?.kind === "number";
  if (!op || !numeric(a) || !numeric(b)) return null;
  const value = op(a.value, b.value);
  if (!Number.isFinite(value)) return null;
  const integer = a.kind === "integer" && b.kind === "integer" && n.childForFieldName("operator")?.text !== "/" && Number.isSafeInteger(value);
  return { kind: integer ? "integer" : "number", value: Object.is(value, -0) ? 0 : value };
}

export function literal(node: Node | null | undefined, depth = 0): Literal | null {
  const n = unwrap(node);
  if (!n || depth > 32) return null;
  switch (n.type) {
    case "binary_expression":
      return arithmetic(n, depth);
    case "string":
    case "template_string": {
      const s = stringValue(n);
      return s === null ? null : { kind: "string", value: s };
    }
    case "number":
      return numberLiteral(n.text, 1);
    case "true":
      return { kind: "boolean", value: true };
    case "false":
      return { kind: "boolean", value: false };
    case "null":
      return { kind: "null", value: null };
    case "unary_expression": {
      const op = n.childForFieldName("operator")?.text;
      const arg = unwrap(n.childForFieldName("argument"));
      if ((op === "-" || op === "+") && arg?.type === "number") return numberLiteral(arg.text, op === "-" ? -1 : 1);
      return null;
    }
    default:
      return null;
  }
}

function numberLiteral(text: string, sign: number): Literal | null {
  const t = text.replace(/_/g, "");
  if (t.endsWith("n")) return null; // a BigInt is not a JSON number
  const v = /^0[xob]/i.test(t) ? Number(t) : /^0\d+$/.test(t) ? parseInt(t, 8) : Number(t);
  if (!Number.isFinite(v)) return null;
  const integer = Number.isInteger(v) && !/[.eE]/.test(/^0x/i.test(t) ? "" : t);
  return { kind: integer ? "integer" : "number", value: sign * v };
}

/** The elements of an array literal when every one is a literal; null otherwise. */
export function literalArray(node: Node | null | undefined): (string | number | boolean)[] | null {
  const n = unwrap(node);
  if (!n || n.type !== "array") return null;
  const out: (string | number | boolean)[] = [];
  for (const el of children(n)) {
    if (el.type === "comment") continue;
    const lit = literal(el);
    if (!lit || lit.value === null) return null;
    out.push(lit.value);
  }
  return out;
}

/** A property's key as written (`a`, `"a"`, `[ "a" ]`), or null for a computed one. */
export function propertyKey(pair: Node): string | null {
  const key = pair.childForFieldName("key");
  if (!key) return null;
  if (key.type === "property_identifier" || key.type === "identifier") return key.text;
  if (key.type === "number") return key.text;
  if (key.type === "computed_property_name") return stringValue(children(key)[0]);
  return stringValue(key);
}

/** The properties of an object literal, by key; shorthand `{ a }` maps a to the identifier. */
export function objectProperties(node: Node | null | undefined): Map<string, Node> | null {
  const n = unwrap(node);
  if (!n || n.type !== "object") return null;
  const out = new Map<string, Node>();
  for (const p of children(n)) {
    if (p.type === "pair") {
      const key = propertyKey(p);
      const value = p.childForFieldName("value");
      if (key !== null && value && !out.has(key)) out.set(key, value);
    } else if (p.type === "shorthand_property_identifier" && !out.has(p.text)) {
      out.set(p.text, p);
    }
  }
  return out;
}

export function callArguments(call: Node): Node[] {
  const args = call.childForFieldName("arguments");
  return args ? children(args).filter((a) => a.type !== "comment") : [];
}

/** The name a call is made by: `f(...)` → f, `a.b.f(...)` → f. */
export function calleeName(call: Node): string | null {
  const fn = unwrap(call.childForFieldName("function"));
  if (!fn) return null;
  if (fn.type === "identifier") return fn.text;
  if (fn.type === "member_expression") return fn.childForFieldName("property")?.text ?? null;
  return null;
}

/** The receiver of a method call `x.f(...)`, or null for a plain call. */
export function calleeObject(call: Node): Node | null {
  const fn = unwrap(call.childForFieldName("function"));
  return fn?.type === "member_expression" ? unwrap(fn.childForFieldName("object")) : null;
}

const SIMPLE_ESCAPES: Record<string, string> = { n: "\n", r: "\r", t: "\t", b: "\b", f: "\f", v: "\v", "0": "\0" };

function unescape(seq: string): string {
  const body = seq.slice(1);
  if (body.startsWith("\n") || body.startsWith("\r")) return ""; // line continuation
  const simple = SIMPLE_ESCAPES[body];
  if (simple !== undefined) return simple;
  const hex = /^x([0-9a-fA-F]{2})$|^u([0-9a-fA-F]{4})$|^u\{([0-9a-fA-F]{1,6})\}$/.exec(body);
  if (hex) {
    const code = parseInt(hex[1] ?? hex[2] ?? hex[3] ?? "0", 16);
    return code <= 0x10ffff ? String.fromCodePoint(code) : body;
  }
  return body;
}

/** The module a file loads by `import ... from "m"`, `import("m")` or `require("m")`. */
export function importedModules(root: Node): Set<string> {
  const out = new Set<string>();
  for (const imp of root.descendantsOfType(["import_statement", "export_statement"])) {
    const src = stringValue(imp?.childForFieldName("source"));
    if (src !== null) out.add(src);
  }
  for (const call of root.descendantsOfType("call_expression")) {
    if (!call) continue;
    const fn = call.childForFieldName("function");
    if (fn?.type !== "import" && !(fn?.type === "identifier" && fn.text === "require")) continue;
    const src = stringValue(callArguments(call)[0]);
    if (src !== null) out.add(src);
  }
  return out;
}

/** Cuts a string to a schema limit. */
export const clip = (s: string, max: number): string => (s.length > max ? s.slice(0, max) : s);

/** The value a top-level `const name = ...` (or let/var) gives, when the file declares it exactly once. */
export function topLevelValue(root: Node, name: string): Node | null {
  let found: Node | null = null;
  for (const stmt of children(root)) {
    const decl = stmt.type === "export_statement" ? stmt.childForFieldName("declaration") : stmt;
    if (!decl || (decl.type !== "lexical_declaration" && decl.type !== "variable_declaration")) continue;
    for (const d of children(decl)) {
      if (d.type !== "variable_declarator" || d.childForFieldName("name")?.text !== name) continue;
      if (found) return null;
      found = d.childForFieldName("value");
    }
  }
  return unwrap(found);
}

/** An object literal, or an identifier naming a top-level one. */
export function objectOrConst(root: Node, node: Node | null | undefined): Map<string, Node> | null {
  const n = unwrap(node);
  if (n && (n.type === "identifier" || n.type === "shorthand_property_identifier")) return objectProperties(topLevelValue(root, n.text));
  return objectProperties(n);
}

/** Where a call's method name sits: chained calls share a start, their names do not. */
export function callPosition(call: Node): number {
  const fn = unwrap(call.childForFieldName("function"));
  return (fn?.type === "member_expression" ? fn.childForFieldName("property") : fn)?.startIndex ?? call.startIndex;
}
