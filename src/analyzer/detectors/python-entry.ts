import type { EnvVarUse, Parameter } from "../model.ts";
import { children, descendants, type Node } from "../syntax.ts";
import { argparseFacts } from "./python-argparse.ts";
import { clickFacts } from "./python-click.ts";
import { addParameterPaths, fileAccesses } from "./python-io.ts";
import { docstring, stringLiteral } from "./python-literals.ts";
import type { PythonImports } from "./python-names.ts";
import { uniqueParameters } from "./python-params.ts";

// What a runnable Python file tells about itself: its docstring, its
// command-line parameters (argparse or click), and the files it reads and writes.

export interface EntryFacts {
  /** The module docstring, cleaned; null when there is none. */
  docstring: string | null;
  parameters: Parameter[];
  /** The parser's description or the command's help, when the code gives one. */
  cliDescription: string | null;
  inputs: string[];
  outputs: string[];
  /** click options that fall back to an environment variable. */
  envVars: EnvVarUse[];
}

/** The top-level `if __name__ == "__main__":` block, either way round, either quote. */
export function mainBlock(root: Node): Node | null {
  for (const stmt of children(root)) {
    if (stmt.type !== "if_statement") continue;
    let cond = stmt.childForFieldName("condition");
    while (cond?.type === "parenthesized_expression") cond = cond.firstNamedChild;
    if (cond?.type !== "comparison_operator") continue;
    const operands = children(cond);
    const ops = cond.childrenForFieldName("operators");
    if (operands.length !== 2 || ops.length !== 1 || ops[0]?.type !== "==") continue;
    const [a, b] = operands as [Node, Node];
    const isName = (n: Node) => n.type === "identifier" && n.text === "__name__";
    if ((isName(a) && stringLiteral(b) === "__main__") || (isName(b) && stringLiteral(a) === "__main__")) {
      return stmt.childForFieldName("consequence");
    }
  }
  return null;
}

/** Names of the functions the code run on start calls: in the main block, or in top-level statements. */
function startupCalls(root: Node, main: Node | null): Set<string> {
  const names = new Set<string>();
  const scopes = main ? [main] : children(root).filter((c) => c.type === "expression_statement");
  for (const scope of scopes) {
    for (const call of descendants(scope, "call")) {
      const fn = call.childForFieldName("function");
      if (fn?.type === "identifier") names.add(fn.text);
    }
  }
  return names;
}

export function entryFacts(root: Node, imports: PythonImports, path: string, extraCommandNames: ReadonlySet<string> = new Set()): EntryFacts {
  const calls = descendants(root, "call");
  const argparse = argparseFacts(calls, imports);
  const preferred = new Set([...startupCalls(root, mainBlock(root)), ...extraCommandNames]);
  const click = clickFacts(root, imports, preferred, path);
  const parameters = uniqueParameters([...argparse.parameters, ...(click?.parameters ?? [])]);
  const files = fileAccesses(calls, imports);
  addParameterPaths(parameters, files, new Map([...(click?.roles ?? []), ...argparse.roles]));
  return {
    docstring: docstring(root),
    parameters,
    cliDescription: argparse.description ?? click?.description ?? null,
    inputs: [...files.inputs].sort(),
    outputs: [...files.outputs].sort(),
    envVars: click?.envVars ?? [],
  };
}
