import type { EnvVarUse } from "../../model.ts";
import { children, descendants, lineOf, type Node } from "../../syntax.ts";
import { goString } from "./literals.ts";

// Environment variables Go code reads: os.Getenv("X") is required unless the
// code visibly handles the empty value (compares it, or the variable it is
// stored in, with something; or passes it to cmp.Or with a fallback after it)
// other than by stopping (`if v == "" { log.Fatal(...) }` still requires it);
// os.LookupEnv("X") reports presence, so it is never required.

export function goEnvUses(root: Node, path: string, osAlias: string, cmpAlias: string | null): EnvVarUse[] {
  const out: EnvVarUse[] = [];
  // Comparisons per scope, found once: a file of many Getenv calls would otherwise walk its tree once per call.
  const comparisons = new Map<number, Node[]>();
  for (const call of descendants(root, "call_expression")) {
    const fn = call.childForFieldName("function");
    if (fn?.type !== "selector_expression" || fn.childForFieldName("operand")?.text !== osAlias) continue;
    const method = fn.childForFieldName("field")?.text;
    if (method !== "Getenv" && method !== "LookupEnv") continue;
    const name = goString(argumentsOf(call)[0]);
    if (!name || name.length > 256 || /\s/.test(name)) continue;
    out.push({ name, path, line: lineOf(call), required: method === "Getenv" && !handlesEmpty(call, cmpAlias, comparisons) });
  }
  return out;
}

function argumentsOf(call: Node): Node[] {
  const args = call.childForFieldName("arguments");
  return args ? children(args).filter((a) => a.type !== "comment") : [];
}

function unparenParent(node: Node): { node: Node; parent: Node | null } {
  let n = node;
  while (n.parent?.type === "parenthesized_expression") n = n.parent;
  return { node: n, parent: n.parent };
}

function handlesEmpty(call: Node, cmpAlias: string | null, comparisons: Map<number, Node[]>): boolean {
  const { node, parent } = unparenParent(call);
  if (!parent) return false;
  if (parent.type === "binary_expression") return isComparison(parent) && !guardStops(parent);
  if (parent.type === "argument_list" && cmpAlias !== null) {
    const owner = parent.parent?.childForFieldName("function");
    const args = children(parent);
    if (owner?.type === "selector_expression" && owner.text === `${cmpAlias}.Or` && !args[args.length - 1]?.equals(node)) return true;
  }
  // `v := os.Getenv("X")` / `v = ...` / `var v = ...`, later tested.
  if (parent.type === "expression_list") {
    const holder = parent.parent;
    if (!holder || !["short_var_declaration", "assignment_statement", "var_spec"].includes(holder.type)) return false;
    const values = children(parent);
    const names =
      holder.type === "var_spec"
        ? holder.childrenForFieldName("name").filter((n): n is Node => n !== null)
        : children(holder.childForFieldName("left") ?? holder);
    const target = names[values.findIndex((v) => v.equals(node))];
    if (target?.type !== "identifier") return false;
    const scope = scopeOf(holder);
    let inScope = comparisons.get(scope.id);
    if (!inScope) comparisons.set(scope.id, (inScope = descendants(scope, "binary_expression")));
    return testedInScope(inScope, target.text);
  }
  return false;
}

const isComparison = (b: Node) => ["==", "!="].includes(b.childForFieldName("operator")?.text ?? "");

function scopeOf(node: Node): Node {
  for (let n = node.parent; n; n = n.parent) {
    if (["function_declaration", "method_declaration", "func_literal"].includes(n.type)) return n;
    if (!n.parent) return n;
  }
  return node;
}

/** A comparison of v (or len(v)) somewhere in scope that is not just a guard stopping the program. */
function testedInScope(comparisons: readonly Node[], name: string): boolean {
  for (const b of comparisons) {
    const op = b.childForFieldName("operator")?.text ?? "";
    const sides = [b.childForFieldName("left"), b.childForFieldName("right")];
    const tests =
      (isComparison(b) && sides.some((s) => s?.type === "identifier" && s.text === name)) ||
      (["==", "!=", ">", "<", ">=", "<="].includes(op) && sides.some((s) => isLenOf(s, name)));
    if (tests && !guardStops(b)) return true;
  }
  return false;
}

/** The comparison is the condition of an `if` whose branch stops: log.Fatal*, *.Panic*, panic, os.Exit. */
function guardStops(comparison: Node): boolean {
  let n = comparison;
  while (n.parent && ["binary_expression", "parenthesized_expression", "unary_expression"].includes(n.parent.type)) n = n.parent;
  const owner = n.parent;
  if (owner?.type !== "if_statement" || !owner.childForFieldName("condition")?.equals(n)) return false;
  const block = owner.childForFieldName("consequence");
  if (!block) return false;
  const statements = children(block).flatMap((c) => (c.type === "statement_list" ? children(c) : [c]));
  return statements.some((st) => {
    const call = st.type === "expression_statement" ? children(st)[0] : null;
    const fn = call?.type === "call_expression" ? call.childForFieldName("function") : null;
    if (fn?.type === "identifier") return fn.text === "panic";
    if (fn?.type !== "selector_expression") return false;
    const field = fn.childForFieldName("field")?.text ?? "";
    return /^(Fatal|Panic)/.test(field) || fn.text === "os.Exit";
  });
}

function isLenOf(node: Node | null, name: string): boolean {
  if (node?.type !== "call_expression" || node.childForFieldName("function")?.text !== "len") return false;
  const args = argumentsOf(node);
  return args.length === 1 && args[0]?.type === "identifier" && args[0].text === name;
}
