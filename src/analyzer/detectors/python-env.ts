import type { EnvVarUse } from "../model.ts";
import { descendants, lineOf, type Node } from "../syntax.ts";
import { callArguments, stringLiteral } from "./python-literals.ts";
import { qualifiedName, type PythonImports } from "./python-names.ts";

// Environment variables a Python file reads, by name when the name is a
// string literal. `required` says whether the program has no fallback:
// os.environ["X"] and os.getenv("X") without a default count as required
// (the latter gives None, which most programs are not ready for);
// os.environ.get("X") is taken as written to tolerate a missing value.

/** Cheap test on the text: a file that never spells these cannot read the environment through os. */
export const mayReadEnvironment = (source: string): boolean => source.includes("environ") || source.includes("getenv");

export function envVarUses(root: Node, imports: PythonImports, path: string): EnvVarUse[] {
  const uses: EnvVarUse[] = [];
  const add = (nameNode: Node | undefined, use: Node, required: boolean) => {
    const name = stringLiteral(nameNode);
    if (name && name.length <= 256) uses.push({ name, path, line: lineOf(use), required });
  };
  for (const node of descendants(root, ["subscript", "call"])) {
    if (node.type === "subscript") {
      if (qualifiedName(node.childForFieldName("value"), imports) !== "os.environ" || isWrite(node)) continue;
      add(node.childForFieldName("subscript") ?? undefined, node, true);
      continue;
    }
    const fn = qualifiedName(node.childForFieldName("function"), imports);
    if (fn !== "os.getenv" && fn !== "os.environ.get" && fn !== "os.environ.setdefault" && fn !== "os.environ.pop") continue;
    const args = callArguments(node);
    const nameNode = args.positional[0] ?? args.keywords.get("key");
    const hasDefault = args.positional.length > 1 || args.keywords.has("default") || args.keywords.has("value") || args.splat;
    const required = (fn === "os.getenv" || fn === "os.environ.pop") && !hasDefault;
    add(nameNode, node, required);
  }
  return uses;
}

/** `os.environ["X"] = ...` and `del os.environ["X"]` set the variable rather than read it. */
function isWrite(subscript: Node): boolean {
  const parent = subscript.parent;
  if (!parent) return false;
  if (parent.type === "delete_statement") return true;
  if (parent.type === "assignment") {
    return parent.childForFieldName("left")?.equals(subscript) ?? false;
  }
  return false;
}
