import { children, type Node } from "../../syntax.ts";

// Python literals read off the syntax tree. Anything that is not spelled out
// in the source (a name, a call, an f-string with a placeholder) has no value
// here: the analyzer reports what is written, it never guesses or evaluates.

export type Scalar = string | number | boolean | null;

export interface Literal {
  kind: "str" | "int" | "float" | "bool" | "none";
  value: Scalar;
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

/** A scalar literal (str, int, float, bool, None, a signed number), or null when the node is anything else. */
export function literal(node: Node | null | undefined): Literal | null {
  if (!node) return null;
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
      const arg = literal(node.childForFieldName("argument"));
      if (!arg || (arg.kind !== "int" && arg.kind !== "float") || (op !== "-" && op !== "+")) return null;
      return { kind: arg.kind, value: op === "-" ? -(arg.value as number) : arg.value };
    }
    case "parenthesized_expression": {
      const inner = children(node).filter((c) => c.type !== "comment");
      return inner.length === 1 ? literal(inner[0]) : null;
    }
    default: {
      const s = stringLiteral(node);
      return s === null ? null : { kind: "str", value: s };
    }
  }
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
