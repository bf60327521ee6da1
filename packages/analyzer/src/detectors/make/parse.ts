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

function parseInto(text: string, file: string, options: ParseOptions, out: ParsedMakefile, state: { seq: number; visited: Set<string> }, depth: number): void {
  const conditionals: Conditional[] = [];
  let rule: MakeRule | null = null;
  let defineDepth = 0;
  let commentBlock: string[] = [];

  for (const { text: raw, line } of logicalLines(text)) {
    if (defineDepth > 0) {
      const word = firstWord(stripDirectivePrefixes(raw.trim()));
      if (word === "define") defineDepth += 1;
      else if (word === "endef") defineDepth -= 1;
      continue;
    }
    if (rule && raw.startsWith("\t")) {
      rule.recipe.push(raw.slice(1));
      commentBlock = [];
      continue;
    }
    const { code, comment } = splitComment(raw);
    const trimmed = code.trim();
    if (trimmed === "") {
      if (comment === null) commentBlock = [];
      else if (comment.startsWith("#@"))
        commentBlock = []; // `##@ Section` headers of the help convention
      else {
        const words = comment.replace(/^#+/, "").trim();
        if (/[\p{L}\p{N}]/u.test(words)) commentBlock.push(words);
      }
      continue;
    }
    const above = commentBlock;
    commentBlock = [];
    const word = firstWord(trimmed);
    if (word === "ifeq" || word === "ifneq" || word === "ifdef" || word === "ifndef") {
      const arg = trimmed.slice(word.length).trim();
      conditionals.push({ guards: word === "ifndef" && /^[^\s$]+$/.test(arg) ? arg : null, inElse: false });
      continue;
    }
    if (word === "else") {
      const top = conditionals.at(-1);
      if (top) top.inElse = true;
      continue;
    }
    if (word === "endif") {
      conditionals.pop();
      continue;
    }
    if (word === "define" || /^(override|export|private)\s+define\b/.test(trimmed)) {
      defineDepth = 1;
      rule = null;
      continue;
    }
    if (word === "include" || word === "-include" || word === "sinclude") {
      rule = null;
      if (depth < MAX_INCLUDE_DEPTH && options.readInclude) {
        for (const target of trimmed.slice(word.length).trim().split(/\s+/)) {
          const path = resolveInclude(options.dir, target);
          if (!path || state.visited.has(path)) continue;
          state.visited.add(path);
          const included = options.readInclude(path);
          if (included !== null) parseInto(included, path, options, out, state, depth + 1);
        }
      }
      continue;
    }
    if (word === "vpath" || word === "unexport" || word === "undefine") continue;

    const split = splitStatement(stripDirectivePrefixes(trimmed));
    // A tab-indented line outside any rule is only read if it is an assignment (make rejects anything else there).
    if (!split || (split.kind === "rule" && raw.startsWith("\t"))) {
      rule = null;
      continue;
    }
    const conditional = (name: string) => conditionals.some((c) => c.inElse || c.guards !== name);
    if (split.kind === "assign") {
      rule = null;
      if (isVariableName(split.name)) {
        out.assignments.push({
          name: split.name,
          op: split.op,
          value: split.value.trim(),
          line,
          comment: comment === null ? null : comment.replace(/^#+/, "").trim() || null,
          conditional: conditional(split.name),
          forTargets: null,
          seq: state.seq++,
        });
      }
      continue;
    }
    const targets = split.targets.split(/\s+/).filter(Boolean);
    // `train: EPOCHS = 5` sets a variable for that target; it defines no recipe.
    const targetAssign = splitStatement(stripDirectivePrefixes(split.rest.trim()));
    if (targetAssign?.kind === "assign" && !split.rest.includes(";")) {
      rule = null;
      if (isVariableName(targetAssign.name)) {
        out.assignments.push({
          name: targetAssign.name,
          op: targetAssign.op,
          value: targetAssign.value.trim(),
          line,
          comment: null,
          conditional: conditional(targetAssign.name),
          forTargets: targets,
          seq: state.seq++,
        });
      }
      continue;
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
      for (const t of prereqText.split(/\s+/)) if (t) out.phony.add(t);
      commentBlock = above; // a `.PHONY: x` line between a comment and its rule keeps them together
      rule = { targets, prerequisites: [], recipe: [], file, line, description: null };
      continue;
    }
    const ruleComment = comment !== null && comment.startsWith("#") ? comment.replace(/^#+/, "").trim() : "";
    const description = ruleComment || above.join(" ");
    rule = {
      targets,
      prerequisites: prereqText.split(/\s+/).filter((p) => p && p !== "|"),
      recipe,
      file,
      line,
      description: description ? clip(description) : null,
    };
    out.rules.push(rule);
  }
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
