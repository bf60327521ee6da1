// A line parser for Makefiles (there is no tree-sitter grammar for make). It
// reads what GNU make reads when it builds its rule database, without
// expanding anything: rules with their recipes, .PHONY lists, variable
// assignments, and the comments people put next to them to say what a target
// does. Conditionals are not evaluated: both branches are read, and an
// assignment inside one is marked so that its value is not taken as fact.

export type AssignOp = "=" | ":=" | "::=" | ":::=" | "?=" | "+=" | "!=";

export interface MakeAssignment {
  name: string;
  op: AssignOp;
  value: string;
  line: number;
  /** The trailing `# comment` on the assignment's line. */
  comment: string | null;
  /** Inside a conditional other than `ifndef <name>`: whether it applies depends on what make evaluates. */
  conditional: boolean;
  /** Target-specific (`train: EPOCHS = 5`): applies to these targets only. */
  forTargets: string[] | null;
  /** Parse order across the file and what it includes, for a stable parameter order. */
  seq: number;
}

export interface MakeRule {
  targets: string[];
  prerequisites: string[];
  recipe: string[];
  file: string;
  line: number;
  /** `## text` on the rule's line, else the comment lines right above it. */
  description: string | null;
}

export interface ParsedMakefile {
  rules: MakeRule[];
  assignments: MakeAssignment[];
  phony: Set<string>;
}

/** Reads an included file by its path relative to the repository; null when it cannot. */
export type IncludeReader = (path: string) => string | null;

export interface ParseOptions {
  /** The file's repository-relative path. */
  path: string;
  /** The folder make runs in (`make -C dir`), which include paths are relative to. */
  dir: string;
  readInclude?: IncludeReader;
}

const MAX_INCLUDE_DEPTH = 4;
const MAX_DESCRIPTION = 1000;

interface LogicalLine {
  text: string;
  line: number;
}

interface Conditional {
  /** `ifndef X` guards an assignment to X the way `?=` does; anything else makes it uncertain. */
  guards: string | null;
  inElse: boolean;
}

export function parseMakefile(text: string, options: ParseOptions): ParsedMakefile {
  const out: ParsedMakefile = { rules: [], assignments: [], phony: new Set() };
  const state = { seq: 0, visited: new Set<string>([options.path]) };
  parseInto(text, options.path, options, out, state, 0);
  return out;
}

interface ParseState {
  seq: number;
  visited: Set<string>;
}

/** What parsing one file carries from line to line. */
interface FileParse {
  file: string;
  options: ParseOptions;
  out: ParsedMakefile;
  state: ParseState;
  depth: number;
  conditionals: Conditional[];
  /** The rule whose recipe lines may follow. */
  rule: MakeRule | null;
  /** Nesting inside `define ... endef`, whose lines are not read. */
  defineDepth: number;
  /** The comment lines right above the current line. */
  commentBlock: string[];
}

function parseInto(text: string, file: string, options: ParseOptions, out: ParsedMakefile, state: ParseState, depth: number): void {
  const p: FileParse = { file, options, out, state, depth, conditionals: [], rule: null, defineDepth: 0, commentBlock: [] };
  for (const { text: raw, line } of logicalLines(text)) parseLine(p, raw, line);
}

function parseLine(p: FileParse, raw: string, line: number): void {
  if (p.defineDepth > 0) return defineBody(p, raw);
  if (p.rule && raw.startsWith("\t")) {
    p.rule.recipe.push(raw.slice(1));
    p.commentBlock = [];
    return;
  }
  const { code, comment } = splitComment(raw);
  const trimmed = code.trim();
  if (trimmed === "") return commentLine(p, comment);
  const above = p.commentBlock;
  p.commentBlock = [];
  if (directive(p, trimmed)) return;

  const split = splitStatement(stripDirectivePrefixes(trimmed));
  // A tab-indented line outside any rule is only read if it is an assignment (make rejects anything else there).
  if (!split || (split.kind === "rule" && raw.startsWith("\t"))) {
    p.rule = null;
    return;
  }
  if (split.kind === "assign") {
    p.rule = null;
    const note = comment === null ? null : comment.replace(/^#+/, "").trim() || null;
    return assignment(p, split, line, note, null);
  }
  ruleLine(p, split, line, comment, above);
}

/** Inside `define`: only the nesting is followed. */
function defineBody(p: FileParse, raw: string): void {
  const word = firstWord(stripDirectivePrefixes(raw.trim()));
  if (word === "define") p.defineDepth += 1;
  else if (word === "endef") p.defineDepth -= 1;
}

/** A line with no code: a comment joins the block above the next line; a blank line ends it. */
function commentLine(p: FileParse, comment: string | null): void {
  if (comment === null) p.commentBlock = [];
  else if (comment.startsWith("#@"))
    p.commentBlock = []; // `##@ Section` headers of the help convention
  else {
    const words = comment.replace(/^#+/, "").trim();
    if (/[\p{L}\p{N}]/u.test(words)) p.commentBlock.push(words);
  }
}

const CONDITIONALS = new Set(["ifeq", "ifneq", "ifdef", "ifndef"]);
const INCLUDES = new Set(["include", "-include", "sinclude"]);
const IGNORED = new Set(["vpath", "unexport", "undefine"]);

/** Conditionals, define, include and the directives that set nothing; true when the line was one. */
function directive(p: FileParse, trimmed: string): boolean {
  const word = firstWord(trimmed);
  if (CONDITIONALS.has(word)) {
    const arg = trimmed.slice(word.length).trim();
    p.conditionals.push({ guards: word === "ifndef" && /^[^\s$]+$/.test(arg) ? arg : null, inElse: false });
  } else if (word === "else") {
    const top = p.conditionals.at(-1);
    if (top) top.inElse = true;
  } else if (word === "endif") {
    p.conditionals.pop();
  } else if (word === "define" || /^(override|export|private)\s+define\b/.test(trimmed)) {
    p.defineDepth = 1;
    p.rule = null;
  } else if (INCLUDES.has(word)) {
    p.rule = null;
    include(p, trimmed.slice(word.length).trim());
  } else return IGNORED.has(word);
  return true;
}

function include(p: FileParse, targets: string): void {
  const { options } = p;
  if (p.depth >= MAX_INCLUDE_DEPTH || !options.readInclude) return;
  for (const target of targets.split(/\s+/)) {
    const path = resolveInclude(p.options.dir, target);
    if (!path || p.state.visited.has(path)) continue;
    p.state.visited.add(path);
    const included = options.readInclude(path);
    if (included !== null) parseInto(included, path, options, p.out, p.state, p.depth + 1);
  }
}

function assignment(p: FileParse, split: Extract<Statement, { kind: "assign" }>, line: number, comment: string | null, forTargets: string[] | null): void {
  if (!isVariableName(split.name)) return;
  p.out.assignments.push({
    name: split.name,
    op: split.op,
    value: split.value.trim(),
    line,
    comment,
    conditional: p.conditionals.some((c) => c.inElse || c.guards !== split.name),
    forTargets,
    seq: p.state.seq++,
  });
}

function ruleLine(p: FileParse, split: Extract<Statement, { kind: "rule" }>, line: number, comment: string | null, above: string[]): void {
  const targets = split.targets.split(/\s+/).filter(Boolean);
  // `train: EPOCHS = 5` sets a variable for that target; it defines no recipe.
  const targetAssign = splitStatement(stripDirectivePrefixes(split.rest.trim()));
  if (targetAssign?.kind === "assign" && !split.rest.includes(";")) {
    p.rule = null;
    return assignment(p, targetAssign, line, null, targets);
  }
  let prereqText = split.rest;
  const recipe: string[] = [];
  const semicolon = indexOutsideReferences(prereqText, ";");
  if (semicolon >= 0) {
    recipe.push(prereqText.slice(semicolon + 1));
    prereqText = prereqText.slice(0, semicolon);
  }
  // Static pattern rules (`objs: %.o: %.c`): the prerequisites come after the second colon.
  const secondColon = indexOutsideReferences(prereqText, ":");
  if (secondColon >= 0) prereqText = prereqText.slice(secondColon + 1);
  if (targets.length === 1 && targets[0] === ".PHONY") {
    for (const t of prereqText.split(/\s+/)) if (t) p.out.phony.add(t);
    p.commentBlock = above; // a `.PHONY: x` line between a comment and its rule keeps them together
    p.rule = { targets, prerequisites: [], recipe: [], file: p.file, line, description: null };
    return;
  }
  const ruleComment = comment !== null && comment.startsWith("#") ? comment.replace(/^#+/, "").trim() : "";
  const description = ruleComment || above.join(" ");
  p.rule = {
    targets,
    prerequisites: prereqText.split(/\s+/).filter((t) => t && t !== "|"),
    recipe,
    file: p.file,
    line,
    description: description ? clip(description) : null,
  };
  p.out.rules.push(p.rule);
}

/** Joins backslash-continued lines; each logical line keeps the number of its first physical line. */
export function logicalLines(text: string): LogicalLine[] {
  const physical = text.split(/\r?\n/);
  const out: LogicalLine[] = [];
  for (let i = 0; i < physical.length; i++) {
    const start = i;
    let current = physical[i]!;
    // Pieces are joined once at the end, so a long run of continuations costs linear time.
    const pieces: string[] = [];
    while (endsWithContinuation(current) && i + 1 < physical.length) {
      pieces.push(current.slice(0, -1).trimEnd());
      i += 1;
      current = physical[i]!.trimStart();
    }
    pieces.push(current);
    out.push({ text: pieces.join(" "), line: start + 1 });
  }
  return out;
}

function endsWithContinuation(line: string): boolean {
  let n = 0;
  for (let i = line.length - 1; i >= 0 && line[i] === "\\"; i--) n++;
  return n % 2 === 1;
}

/**
 * Splits off a `#` comment. Make does not see comments inside a variable
 * reference or function call, and `\#` is a literal hash.
 */
export function splitComment(line: string): { code: string; comment: string | null } {
  const i = scanOutsideReferences(line, { escapes: true }, (c) => c === "#");
  return i === -1 ? { code: line, comment: null } : { code: line.slice(0, i), comment: line.slice(i + 1) };
}

type Statement = { kind: "assign"; name: string; op: AssignOp; value: string } | { kind: "rule"; targets: string; rest: string };

/** Tells `VAR op value` from `targets: prerequisites` by the first operator outside variable references. */
export function splitStatement(s: string): Statement | null {
  const i = scanOutsideReferences(s, { singleCharacterReferences: true }, (c) => c === "=" || c === ":");
  if (i === -1) return null;
  if (s[i] === "=") {
    const prev = s[i - 1];
    const compound = prev === "?" || prev === "+" || prev === "!";
    const op = (compound ? `${prev}=` : "=") as AssignOp;
    return { kind: "assign", name: s.slice(0, compound ? i - 1 : i).trim(), op, value: s.slice(i + 1) };
  }
  for (const op of [":::=", "::=", ":="] as const) {
    if (s.startsWith(op, i)) return { kind: "assign", name: s.slice(0, i).trim(), op, value: s.slice(i + op.length) };
  }
  const double = s[i + 1] === ":";
  return { kind: "rule", targets: s.slice(0, i), rest: s.slice(i + (double ? 2 : 1)) };
}

function indexOutsideReferences(s: string, ch: string): number {
  return scanOutsideReferences(s, {}, (c) => c === ch);
}

/**
 * The index of the first character outside variable references and function
 * calls (`$(...)`, `${...}`, nested) for which found is true, or -1. With
 * escapes, `\x` is skipped; with singleCharacterReferences, so is `$x`.
 */
function scanOutsideReferences(s: string, opts: { escapes?: boolean; singleCharacterReferences?: boolean }, found: (c: string) => boolean): number {
  let depth = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (opts.escapes && c === "\\") {
      i += 1;
      continue;
    }
    if (c === "$" && (s[i + 1] === "(" || s[i + 1] === "{")) {
      depth += 1;
      i += 1;
      continue;
    }
    if (opts.singleCharacterReferences && c === "$") {
      i += 1;
      continue;
    }
    if (depth > 0) {
      if (c === "(" || c === "{") depth += 1;
      else if (c === ")" || c === "}") depth -= 1;
      continue;
    }
    if (found(c)) return i;
  }
  return -1;
}

function firstWord(s: string): string {
  const m = /^\S+/.exec(s);
  return m ? m[0] : "";
}

// `export VAR = x`, `override VAR := x`, `private VAR = x` are assignments with a modifier.
function stripDirectivePrefixes(s: string): string {
  let out = s;
  for (;;) {
    const m = /^(export|override|private)\s+/.exec(out);
    if (!m) return out;
    out = out.slice(m[0].length);
  }
}

function isVariableName(name: string): boolean {
  return name !== "" && !/[\s$#:=]/.test(name);
}

function resolveInclude(dir: string, target: string): string | null {
  if (!target || /[$*?[\]]/.test(target) || target.startsWith("/")) return null;
  const parts = dir === "" ? [] : dir.split("/");
  for (const part of target.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(part);
  }
  return parts.length ? parts.join("/") : null;
}

function clip(s: string): string {
  return s.length > MAX_DESCRIPTION ? `${s.slice(0, MAX_DESCRIPTION - 1).trimEnd()}…` : s;
}
