import { DomainValidationError, type ValidationIssue } from "../errors.ts";

// Text that every place input ends up can hold exactly as given. Two kinds of
// JavaScript string cannot be:
//
// - a NUL character (U+0000): Postgres text and jsonb refuse it (the insert
//   fails), and argv and environment entries are NUL-terminated C strings;
// - an unpaired UTF-16 surrogate (JSON allows "\ud800"): it has no UTF-8
//   encoding, so the pg driver silently stores U+FFFD in text, jsonb refuses
//   the escape, and Kubernetes (Go's JSON decoder) replaces it with U+FFFD.
//
// Such text is refused where it comes in (422), so it is never half-stored,
// mangled, or written to one place (a Kubernetes resource) and then refused
// by the next (its row). The API applies this to every string and object key
// of every path, query and body it validates (src/api/validation.ts).

export type TextProblem = "nul" | "surrogate";

/** What makes this string unstorable, or null when every sink can hold it. */
export function textProblem(s: string): TextProblem | null {
  if (s.includes("\0")) return "nul";
  if (!s.isWellFormed()) return "surrogate";
  return null;
}

/** The pydantic type of the issue: a validator's refusal. */
export const TEXT_ISSUE_TYPE = "value_error";

export const TEXT_ISSUE_MESSAGES: Record<TextProblem, string> = {
  nul: "Value error, must not contain NUL characters (U+0000)",
  surrogate: "Value error, must not contain unpaired UTF-16 surrogates",
};

/** pydantic's last loc item for an object key itself (not its value): ["body", "parameters", "a\u0000", "[key]"]. */
export const KEY_LOC = "[key]";

type Loc = ValidationIssue["loc"];
// The walk keeps each node's path as a link to its parent, so a loc is built only for a problem.
type Path = { parent: Path; key: string | number; depth: number } | null;
// `within`: the node lies below the depth limit, inside the value at `path`.
type Node = { kind: "value"; value: unknown; path: Path; within: boolean } | { kind: "key"; key: string; path: Path; within: boolean };

/** At most this many issues are listed per part (the request is refused either way), so the answer stays small. */
export const MAX_TEXT_ISSUES = 100;
/** A problem nested deeper than this (no request schema is) is reported at its ancestor at this depth, once. */
export const MAX_LOC_DEPTH = 32;

function toLoc(prefix: Loc, path: Path, extra: Loc = []): Loc {
  const keys: (string | number)[] = [];
  for (let p = path; p; p = p.parent) keys.push(p.key);
  return [...prefix, ...keys.reverse(), ...extra];
}

/**
 * True when `value` is a string, a scalar, or an object of such values whose keys and
 * strings are all storable: the usual query or path parameters, checked without the
 * walk's stack, nodes and paths (about 1.2 KiB a request on GET /v1/repositories,
 * issue 36). Anything else, or any problem, is left to the walk, which reports it.
 */
function flatAndStorable(value: unknown): boolean {
  if (typeof value === "string") return textProblem(value) === null;
  if (value === null || typeof value !== "object") return true;
  if (Array.isArray(value)) return false;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) return false;
    const v = (value as Record<string, unknown>)[key];
    if (textProblem(key) !== null || (v !== null && typeof v === "object") || (typeof v === "string" && textProblem(v) !== null)) return false;
  }
  return true;
}

/**
 * One issue per string (array element, object value, or object key) in `value` that
 * textProblem refuses, at its loc under `prefix`, in document order. The walk uses its
 * own stack and builds a loc only for a problem, so it is linear in the input and no
 * nesting can overflow the call stack; the issues are bounded by MAX_TEXT_ISSUES and
 * their locs by MAX_LOC_DEPTH, so a hostile body cannot make a huge answer.
 */
export function unstorableTextIssues(value: unknown, prefix: Loc): ValidationIssue[] {
  if (flatAndStorable(value)) return [];
  const issues: ValidationIssue[] = [];
  const reportedWithin = new Set<Path>();
  const stack: Node[] = [{ kind: "value", value, path: null, within: false }];
  const report = (s: string, node: Node, extra: Loc) => {
    const problem = textProblem(s);
    if (!problem) return;
    if (node.within) {
      if (reportedWithin.has(node.path)) return;
      reportedWithin.add(node.path);
    }
    issues.push({ loc: toLoc(prefix, node.path, node.within ? [] : extra), msg: TEXT_ISSUE_MESSAGES[problem], type: TEXT_ISSUE_TYPE });
  };
  while (stack.length && issues.length < MAX_TEXT_ISSUES) {
    const node = stack.pop()!;
    if (node.kind === "key") {
      report(node.key, node, [KEY_LOC]);
      continue;
    }
    const v = node.value;
    if (typeof v === "string") {
      report(v, node, []);
      continue;
    }
    if (v === null || typeof v !== "object") continue;
    const within = node.within || (node.path?.depth ?? 0) >= MAX_LOC_DEPTH;
    const at = (key: string | number): Path => (within ? node.path : { parent: node.path, key, depth: (node.path?.depth ?? 0) + 1 });
    const children: Node[] = [];
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) children.push({ kind: "value", value: v[i], path: at(i), within });
    } else {
      for (const [k, x] of Object.entries(v)) {
        const path = at(k);
        children.push({ kind: "key", key: k, path, within }, { kind: "value", value: x, path, within });
      }
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return issues;
}

/** Throws the 422 for every unstorable string in the request parts given (keyed by loc: "path", "query", "body"). */
export function rejectUnstorableText(parts: Record<string, unknown>): void {
  const issues = Object.entries(parts).flatMap(([loc, value]) => unstorableTextIssues(value, [loc]));
  if (issues.length) throw new DomainValidationError(issues);
}

/** For data about to be written somewhere (a resource, a row) that was validated already: refusing it here is a bug, but nothing is written. */
export function assertStorableText(value: unknown, what: string): void {
  const issues = unstorableTextIssues(value, []);
  if (issues.length) throw new Error(`${what} holds text that cannot be stored, at ${issues.map((i) => JSON.stringify(i.loc)).join(", ")}`);
}
