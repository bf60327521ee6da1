import type { MakeAssignment } from "./parse.ts";

// Which make variables a piece of text refers to, and what a variable's value
// is when it can be told without running make.

/**
 * Names referenced as `$(NAME)`, `${NAME}` or `$(NAME:.c=.o)`, in order of
 * first appearance. `$$` is a dollar for the shell, and a function call
 * (`$(shell ...)`, `$(wildcard ...)`) is not a variable, though the
 * references inside its arguments are.
 */
export function variableReferences(text: string): string[] {
  const seen = new Set<string>();
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== "$") continue;
    const open = text[i + 1];
    if (open !== "(" && open !== "{") {
      i += 1; // `$$`, `$@`, `$<`: nothing to look up
      continue;
    }
    const close = open === "(" ? ")" : "}";
    let j = i + 2;
    while (j < text.length && !isNameEnd(text[j]!)) j++;
    const name = text.slice(i + 2, j);
    if (name && (text[j] === close || text[j] === ":")) seen.add(name);
    i += 1;
  }
  return [...seen];
}

function isNameEnd(c: string): boolean {
  return c === ")" || c === "}" || c === ":" || c === "$" || c === "(" || c === "{" || c === "," || c === " " || c === "\t";
}

export type MakeValue = { known: true; text: string } | { known: false };

/**
 * The value make would give a variable from these assignments (in file
 * order), following `=`/`:=` (replace), `?=` (only if unset) and `+=`
 * (append). Unknown when any assignment depends on a conditional, runs a
 * shell (`!=`) or refers to another variable or function.
 */
export function evaluate(assignments: readonly MakeAssignment[]): MakeValue {
  let value: string | null = null;
  for (const a of assignments) {
    if (a.conditional || a.op === "!=" || a.value.includes("$")) return { known: false };
    if (a.op === "?=") value ??= a.value;
    else if (a.op === "+=") value = value === null || value === "" ? a.value : `${value} ${a.value}`;
    else value = a.value;
  }
  return value === null ? { known: false } : { known: true, text: value };
}
