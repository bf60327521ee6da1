import { children, type Node } from "../../syntax.ts";

// Python literals read off the syntax tree. Anything that is not spelled out
// in the source (a name, a call, an f-string with a placeholder) has no value
// here: the analyzer reports what is written, it never guesses. Arithmetic on
// literals (`5 * 8000`, `2**19`, `6e-4 / 10`, `1 << 20`) is evaluated as
// Python would, since that is how people write sizes; a conditional
// expression gives its first constant branch, with a note saying so.

export type Scalar = string | number | boolean | null;

export interface Literal {
  kind: "str" | "int" | "float" | "bool" | "none";
  value: Scalar;
  /** Set when the value is one branch of a conditional expression: what the other depends on. */
  note?: string;
}

/** The text of a string literal (also implicitly concatenated ones), or null when it is not one. */
export function stringLiteral(node: Node | null | undefined): string | null {
  if (!node) return null;
  if (node.type === "concatenated_string") {
    let out = "";
    for (const part of children(node)) {
      if (part.type === "comment") continue;
      const s = stringLiteral(part);
      if (s === null) return null;
      out += s;
    }
    return out;
  }
  if (node.type === "parenthesized_expression") {
    const inner = children(node).filter((c) => c.type !== "comment");
    return inner.length === 1 ? stringLiteral(inner[0]) : null;
  }
  if (node.type !== "string") return null;
  const start = node.firstChild;
  if (!start || start.type !== "string_start") return null;
  const prefix = start.text.replace(/["']+$/, "").toLowerCase();
  // Bytes are not text, and template strings are not plain strings.
  if (prefix.includes("b") || prefix.includes("t")) return null;
  const raw = prefix.includes("r");
  let out = "";
  for (const part of children(node)) {
    if (part.type === "interpolation") return null;
    if (part.type === "string_content") out += raw ? part.text : unescape(part.text);
  }
  return prefix.includes("f") ? out.replace(/\{\{/g, "{").replace(/\}\}/g, "}") : out;
}

const SIMPLE_ESCAPES: Record<string, string> = {
  "\n": "",
  "\\": "\\",
  "'": "'",
  '"': '"',
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
};

/** Python's escape sequences; unknown ones stay as written, as Python keeps them. */
function unescape(text: string): string {
  if (!text.includes("\\")) return text;
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c !== "\\" || i + 1 >= text.length) {
      out += c;
      continue;
    }
    const e = text[i + 1]!;
    if (e in SIMPLE_ESCAPES) {
      out += SIMPLE_ESCAPES[e];
      i += 1;
      continue;
    }
    const hexLength = e === "x" ? 2 : e === "u" ? 4 : e === "U" ? 8 : 0;
    if (hexLength) {
      const hex = text.slice(i + 2, i + 2 + hexLength);
      const code = /^[0-9a-fA-F]+$/.test(hex) && hex.length === hexLength ? parseInt(hex, 16) : NaN;
      if (code <= 0x10ffff) {
        out += String.fromCodePoint(code);
        i += 1 + hexLength;
        continue;
      }
    }
    const octal = /^[0-7]{1,3}/.exec(text.slice(i + 1, i + 4));
    if (octal) {
      out += String.fromCodePoint(parseInt(octal[0], 8));
      i += octal[0].length;
      continue;
    }
    out += c;
  }
  return out;
}

function numberLiteral(text: string): number | null {
  const clean = text.replace(/_/g, "");
  if (/[jJ]$/.test(clean)) return null; // complex
  const n = Number(clean);
  return Number.isFinite(n) ? n : null;
}

/** Deeper expressions are not evaluated: a hostile file must not exhaust the stack. */
const MAX_DEPTH = 32;

/** A scalar literal (str, int, float, bool, None, a signed number, constant arithmetic), or null when the node is anything else. */
export function literal(node: Node | null | undefined, depth = 0): Literal | null {
  if (!node || depth > MAX_DEPTH) return null;
  switch (node.type) {
    case "true":
      return { kind: "bool", value: true };
    case "false":
      return { kind: "bool", value: false };
    case "none":
      return { kind: "none", value: null };
    case "integer":
    case "float": {
      const n = numberLiteral(node.text);
      if (n === null) return null;
      return { kind: node.type === "integer" ? "int" : "float", value: n };
    }
    case "unary_operator": {
      const op = node.childForFieldName("operator")?.type;
      const arg = literal(node.childForFieldName("argument"), depth + 1);
      if (!arg || (arg.kind !== "int" && arg.kind !== "float") || (op !== "-" && op !== "+")) return null;
      return { kind: arg.kind, value: op === "-" ? -(arg.value as number) : arg.value };
    }
    case "parenthesized_expression": {
      const inner = children(node).filter((c) => c.type !== "comment");
      return inner.length === 1 ? literal(inner[0], depth + 1) : null;
    }
    case "binary_operator":
      return binaryLiteral(node, depth);
    case "conditional_expression":
      return conditionalLiteral(node, depth);
    default: {
      const s = stringLiteral(node);
      return s === null ? null : { kind: "str", value: s };
    }
  }
}

function binaryLiteral(node: Node, depth: number): Literal | null {
  const left = literal(node.childForFieldName("left"), depth + 1);
  const right = left && literal(node.childForFieldName("right"), depth + 1);
  const op = node.childForFieldName("operator")?.type;
  return left && right && op && !left.note && !right.note ? arithmetic(op, left, right) : null;
}

/** `a if cond else b`: the first branch that is a constant, and what decides. */
function conditionalLiteral(node: Node, depth: number): Literal | null {
  const [yes, cond, no] = children(node).filter((c) => c.type !== "comment");
  if (!yes || !cond || !no) return null;
  const first = literal(yes, depth + 1) ?? literal(no, depth + 1);
  if (!first || first.note) return null;
  const clip = (t: string) => (t.length > 200 ? `${t.slice(0, 199)}…` : t);
  return { ...first, note: `${clip(yes.text)} if ${clip(cond.text.replace(/\s+/g, " "))}, else ${clip(no.text)}` };
}

type Operation = (a: number, b: number, ints: boolean) => { value: number; float?: boolean } | null;

/** Python's arithmetic on numbers; `float` when the result is a float even from two ints. */
const OPERATIONS: Record<string, Operation> = {
  "+": (a, b) => ({ value: a + b }),
  "-": (a, b) => ({ value: a - b }),
  "*": (a, b) => ({ value: a * b }),
  "/": (a, b) => (b === 0 ? null : { value: a / b, float: true }),
  "//": (a, b) => (b === 0 ? null : { value: Math.floor(a / b) }),
  "%": (a, b) => (b === 0 ? null : { value: a - b * Math.floor(a / b) }),
  "**": (a, b, ints) => (a === 0 && b < 0 ? null : { value: a ** b, float: ints && b < 0 }),
  "<<": (a, b, ints) => (!ints || b < 0 || b > 64 ? null : { value: a * 2 ** b }),
  ">>": (a, b, ints) => (!ints || b < 0 || b > 64 ? null : { value: Math.floor(a / 2 ** b) }),
};

/**
 * `left op right` on two literals as Python computes it: int stays int except
 * through `/`, `**` of a negative power is a float, `//` and `%` floor, `+`
 * joins strings. Null for anything else, a division by zero, or a result a
 * JSON number cannot hold exactly.
 */
export function arithmetic(op: string, left: Literal, right: Literal): Literal | null {
  if (left.kind === "str" && right.kind === "str" && op === "+") {
    const value = `${left.value as string}${right.value as string}`;
    return value.length <= 4096 ? { kind: "str", value } : null;
  }
  const numeric = (l: Literal) => l.kind === "int" || l.kind === "float" || l.kind === "bool";
  const operation = OPERATIONS[op];
  if (!operation || !numeric(left) || !numeric(right)) return null;
  const ints = left.kind !== "float" && right.kind !== "float";
  const result = operation(Number(left.value), Number(right.value), ints);
  if (!result) return null;
  const kind = ints && !result.float ? "int" : "float";
  const { value } = result;
  if (!Number.isFinite(value) || (kind === "int" && !Number.isSafeInteger(value))) return null;
  return { kind, value: Object.is(value, -0) ? 0 : value };
}

/** A list, tuple or set of non-None scalar literals, or null when any element is something else. */
export function literalList(node: Node | null | undefined): (string | number | boolean)[] | null {
  if (!node || !["list", "tuple", "set"].includes(node.type)) return null;
  const out: (string | number | boolean)[] = [];
  for (const item of children(node)) {
    if (item.type === "comment") continue;
    const lit = literal(item);
    if (!lit || lit.value === null) return null;
    out.push(lit.value);
  }
  return out;
}

/** The docstring of a module or a function body: its first statement, when that is a plain string. */
export function docstring(body: Node | null | undefined): string | null {
  if (!body) return null;
  const first = children(body).find((c) => c.type !== "comment");
  if (!first || first.type !== "expression_statement" || first.namedChildCount !== 1) return null;
  const text = stringLiteral(first.firstNamedChild);
  return text === null ? null : cleanDocstring(text);
}

/** What inspect.cleandoc does: drop the common indentation and blank lines at either end. */
export function cleanDocstring(text: string): string {
  const lines = text.replace(/\t/g, "        ").split(/\r?\n/);
  let indent = Infinity;
  for (const line of lines.slice(1)) {
    const stripped = line.trimStart();
    if (stripped) indent = Math.min(indent, line.length - stripped.length);
  }
  // Only spaces and tabs go from line ends: click cuts a docstring at a form feed.
  const out = [
    lines[0]!.trimStart(),
    ...lines
      .slice(1)
      .map((l) => (indent === Infinity ? l : l.slice(indent)))
      .map((l) => l.replace(/[ \t]+$/, "")),
  ];
  out[0] = out[0]!.replace(/[ \t]+$/, "");
  while (out.length && !out[0]) out.shift();
  while (out.length && !out[out.length - 1]) out.pop();
  return out.join("\n");
}

/** Comments that steer tools rather than say what something is. */
const TOOL_COMMENT = /^(noqa|type:|pylint:|pyright:|mypy:|fmt:|pragma|nosec|isort:|todo\b|fixme\b|xxx\b|hack\b)/i;

/**
 * The comment written after a statement on its last line (`warmup = 200  # steps of warm-up`),
 * for the statement holding node; null when there is none or it steers a tool.
 */
export function trailingComment(node: Node | null | undefined): string | null {
  let stmt = node;
  while (stmt && stmt.parent && !["module", "block"].includes(stmt.parent.type)) stmt = stmt.parent;
  const next = stmt?.nextSibling;
  if (!stmt || next?.type !== "comment" || next.startPosition.row !== stmt.endPosition.row) return null;
  const text = next.text.replace(/^#+/, "").trim();
  return text && !TOOL_COMMENT.test(text) && /\p{L}/u.test(text) ? text.slice(0, 4096) : null;
}

export interface CallArguments {
  positional: Node[];
  keywords: Map<string, Node>;
  /** `*args` or `**kwargs` was passed: more arguments than can be seen. */
  splat: boolean;
}

export function callArguments(call: Node): CallArguments {
  const out: CallArguments = { positional: [], keywords: new Map(), splat: false };
  const list = call.childForFieldName("arguments");
  if (!list || list.type !== "argument_list") return out;
  for (const arg of children(list)) {
    if (arg.type === "comment") continue;
    if (arg.type === "keyword_argument") {
      const name = arg.childForFieldName("name")?.text;
      const value = arg.childForFieldName("value");
      if (name && value && !out.keywords.has(name)) out.keywords.set(name, value);
    } else if (arg.type === "list_splat" || arg.type === "dictionary_splat") {
      out.splat = true;
    } else {
      out.positional.push(arg);
    }
  }
  return out;
}
