import { children, type Node } from "../../syntax.ts";

// Go literals read off the syntax tree. Only what is spelled out has a value:
// a constant's name or a call is unknown (null), never guessed. Arithmetic on
// number literals (`1 << 16`, `2 * 4`, `1.5 * 2`) is evaluated as Go's
// untyped constants are, and `N * time.Unit` is a duration.

export type GoLiteral = { kind: "string"; value: string } | { kind: "integer" | "float"; value: number } | { kind: "bool"; value: boolean };

function unparen(node: Node | null | undefined): Node | null {
  let n = node ?? null;
  while (n?.type === "parenthesized_expression") n = children(n)[0] ?? null;
  return n;
}

/** A string literal, or a `+` of them. */
export function goString(node: Node | null | undefined): string | null {
  const n = unparen(node);
  if (!n) return null;
  if (n.type === "binary_expression" && n.childForFieldName("operator")?.text === "+") {
    // Walked down the left spine rather than recursively: a hostile file may chain thousands of terms.
    const parts: string[] = [];
    let cur: Node | null = n;
    while (cur?.type === "binary_expression" && cur.childForFieldName("operator")?.text === "+") {
      const right = stringPiece(cur.childForFieldName("right"));
      if (right === null) return null;
      parts.push(right);
      cur = unparen(cur.childForFieldName("left"));
    }
    const first = stringPiece(cur);
    if (first === null) return null;
    parts.push(first);
    return parts.reverse().join("");
  }
  return stringPiece(n);
}

function stringPiece(node: Node | null | undefined): string | null {
  const n = unparen(node);
  if (!n) return null;
  if (n.type === "raw_string_literal") {
    return children(n)
      .filter((c) => c.type === "raw_string_literal_content")
      .map((c) => c.text.replace(/\r/g, ""))
      .join("");
  }
  if (n.type === "interpreted_string_literal") {
    let out = "";
    for (const part of children(n)) {
      if (part.type === "interpreted_string_literal_content") out += part.text;
      else if (part.type === "escape_sequence") {
        const s = unescape(part.text);
        if (s === null) return null;
        out += s;
      } else return null;
    }
    return out;
  }
  return null;
}

export function goLiteral(node: Node | null | undefined, depth = 0): GoLiteral | null {
  const n = unparen(node);
  if (!n || depth > 32) return null;
  switch (n.type) {
    case "binary_expression": {
      const text = goString(n);
      if (text !== null) return { kind: "string", value: text };
      const left = goLiteral(n.childForFieldName("left"), depth + 1);
      const right = left && goLiteral(n.childForFieldName("right"), depth + 1);
      const op = n.childForFieldName("operator")?.text;
      const numeric = (l: GoLiteral | null): l is GoNumber => l?.kind === "integer" || l?.kind === "float";
      return op && numeric(left) && numeric(right) ? goArithmetic(op, left, right) : null;
    }
    case "true":
      return { kind: "bool", value: true };
    case "false":
      return { kind: "bool", value: false };
    case "int_literal":
    case "float_literal":
      return goNumber(n.type, n.text, 1);
    case "unary_expression": {
      const op = n.childForFieldName("operator")?.text;
      const arg = unparen(n.childForFieldName("operand"));
      if ((op === "-" || op === "+") && (arg?.type === "int_literal" || arg?.type === "float_literal"))
        return goNumber(arg.type, arg.text, op === "-" ? -1 : 1);
      return null;
    }
    default: {
      const s = goString(n);
      return s === null ? null : { kind: "string", value: s };
    }
  }
}

type GoNumber = { kind: "integer" | "float"; value: number };

/**
 * Untyped constant arithmetic: integers stay integers (`/` truncates, shifts
 * and `%` only on integers), a float anywhere makes a float. Null for a
 * division by zero or a result a JSON number cannot hold exactly.
 */
export function goArithmetic(op: string, a: GoNumber, b: GoNumber): GoLiteral | null {
  const ints = a.kind === "integer" && b.kind === "integer";
  let value: number;
  switch (op) {
    case "+":
      value = a.value + b.value;
      break;
    case "-":
      value = a.value - b.value;
      break;
    case "*":
      value = a.value * b.value;
      break;
    case "/":
      if (b.value === 0) return null;
      value = ints ? Math.trunc(a.value / b.value) : a.value / b.value;
      break;
    case "%":
      if (!ints || b.value === 0) return null;
      value = a.value % b.value;
      break;
    case "<<":
    case ">>":
      if (!ints || b.value < 0 || b.value > 64) return null;
      value = op === "<<" ? a.value * 2 ** b.value : Math.floor(a.value / 2 ** b.value);
      break;
    default:
      return null;
  }
  if (!Number.isFinite(value) || (ints && !Number.isSafeInteger(value))) return null;
  return { kind: ints ? "integer" : "float", value: Object.is(value, -0) ? 0 : value };
}

function goNumber(type: string, text: string, sign: number): GoLiteral | null {
  const t = text.replace(/_/g, "");
  let v: number;
  if (type === "int_literal") v = /^0[0-7]+$/.test(t) ? parseInt(t, 8) : Number(t);
  else v = /^0x/i.test(t) ? NaN : Number(t); // hexadecimal floats are left alone
  if (!Number.isFinite(v)) return null;
  return { kind: type === "int_literal" ? "integer" : "float", value: sign * v };
}

const DURATION_UNITS: Record<string, string> = { Nanosecond: "ns", Microsecond: "us", Millisecond: "ms", Second: "s", Minute: "m", Hour: "h" };

/**
 * A time.Duration default written as `5 * time.Second`, `time.Minute`, or an
 * integer count of nanoseconds, as flag's parser (time.ParseDuration) accepts it.
 */
export function goDuration(node: Node | null | undefined, timeAlias: string | null): string | null {
  const n = unparen(node);
  if (!n) return null;
  const unit = (u: Node | null): string | null => {
    const x = unparen(u);
    if (x?.type !== "selector_expression" || timeAlias === null) return null;
    if (x.childForFieldName("operand")?.text !== timeAlias) return null;
    return DURATION_UNITS[x.childForFieldName("field")?.text ?? ""] ?? null;
  };
  const count = (c: Node | null): number | null => {
    const lit = goLiteral(c);
    return lit?.kind === "integer" ? lit.value : null;
  };
  const alone = unit(n);
  if (alone) return `1${alone}`;
  const lit = count(n);
  if (lit !== null) return lit === 0 ? "0s" : `${lit}ns`;
  if (n.type === "binary_expression" && n.childForFieldName("operator")?.text === "*") {
    const l = n.childForFieldName("left");
    const r = n.childForFieldName("right");
    const u = unit(r) ?? unit(l);
    const k = unit(r) ? count(l) : count(r);
    if (u && k !== null) return `${k}${u}`;
  }
  return null;
}

const SIMPLE_ESCAPES: Record<string, string> = { a: "\x07", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v", "\\": "\\", "'": "'", '"': '"' };

function unescape(seq: string): string | null {
  const body = seq.slice(1);
  const simple = SIMPLE_ESCAPES[body];
  if (simple !== undefined) return simple;
  if (/^[0-7]{3}$/.test(body)) return String.fromCharCode(parseInt(body, 8));
  const hex = /^(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8}))$/.exec(body);
  if (!hex) return null;
  const code = parseInt(hex[1] ?? hex[2] ?? hex[3] ?? "0", 16);
  return code <= 0x10ffff ? String.fromCodePoint(code) : null;
}

/** The import path of each import spec, under the name the file uses for it. */
export function goImports(root: Node): Map<string, string> {
  const byPath = new Map<string, string>();
  for (const spec of root.descendantsOfType("import_spec")) {
    if (!spec) continue;
    const path = goString(spec.childForFieldName("path"));
    if (path === null) continue;
    const alias = spec.childForFieldName("name")?.text;
    const name = alias ?? path.slice(path.lastIndexOf("/") + 1);
    if (name !== "_" && name !== ".") byPath.set(path, name);
  }
  return byPath;
}
