import { children, descendants, type Node } from "../../syntax.ts";

// What the names in a Python file refer to, from its import statements, so
// that `pd.read_csv`, `from os import getenv` and `import click as c` are all
// recognised by the dotted name of what they import.

export interface FromImport {
  /** Leading dots of a relative import (0 for an absolute one). */
  level: number;
  /** The module after the dots ("" for `from . import x`). */
  module: string;
  /** The names it binds in this file, each with the name it imports. */
  names: { local: string; imported: string }[];
}

export interface PythonImports {
  /** Local name → the dotted name it stands for ("np" → "numpy", "getenv" → "os.getenv"). */
  bindings: Map<string, string>;
  /** Absolute modules imported outside any def or class, in source order. */
  topLevelModules: string[];
  fromImports: FromImport[];
}

export function readImports(root: Node): PythonImports {
  const out: PythonImports = { bindings: new Map(), topLevelModules: [], fromImports: [] };
  for (const stmt of descendants(root, ["import_statement", "import_from_statement"])) {
    const topLevel = !insideDefinition(stmt);
    if (stmt.type === "import_statement") importStatement(stmt, topLevel, out);
    else fromImportStatement(stmt, topLevel, out);
  }
  return out;
}

/** `import a.b`, `import a as b`. */
function importStatement(stmt: Node, topLevel: boolean, out: PythonImports): void {
  for (const name of stmt.childrenForFieldName("name")) {
    if (!name) continue;
    if (name.type === "aliased_import") {
      const module = name.childForFieldName("name")?.text;
      const alias = name.childForFieldName("alias")?.text;
      if (module && alias) out.bindings.set(alias, module);
      if (module && topLevel) out.topLevelModules.push(module);
    } else {
      // `import a.b` binds `a`, which refers to the module `a` itself.
      const module = name.text;
      const head = module.split(".")[0]!;
      if (!out.bindings.has(head)) out.bindings.set(head, head);
      if (topLevel) out.topLevelModules.push(module);
    }
  }
}

/** The leading dots and the module of `from ..a.b import x`. */
function fromModule(moduleNode: Node): { level: number; module: string } {
  if (moduleNode.type !== "relative_import") return { level: 0, module: moduleNode.text };
  const prefix = children(moduleNode).find((c) => c.type === "import_prefix");
  return { level: prefix ? prefix.text.length : 0, module: children(moduleNode).find((c) => c.type === "dotted_name")?.text ?? "" };
}

/** `from m import x`, `from . import x as y`. */
function fromImportStatement(stmt: Node, topLevel: boolean, out: PythonImports): void {
  const moduleNode = stmt.childForFieldName("module_name");
  if (!moduleNode) return;
  const { level, module } = fromModule(moduleNode);
  const from: FromImport = { level, module, names: [] };
  for (const name of stmt.childrenForFieldName("name")) {
    if (!name) continue;
    const imported = name.type === "aliased_import" ? name.childForFieldName("name")?.text : name.text;
    const local = name.type === "aliased_import" ? name.childForFieldName("alias")?.text : name.text;
    if (!imported || !local) continue;
    from.names.push({ local, imported });
    out.bindings.set(local, level ? `${".".repeat(level)}${module ? `${module}.` : ""}${imported}` : `${module}.${imported}`);
  }
  out.fromImports.push(from);
  if (level === 0 && topLevel) out.topLevelModules.push(module);
}

function insideDefinition(node: Node): boolean {
  for (let p = node.parent; p; p = p.parent) {
    if (p.type === "function_definition" || p.type === "class_definition") return true;
  }
  return false;
}

/**
 * The dotted name an identifier or attribute chain stands for, with its head
 * resolved through the imports (`np.load` → "numpy.load"); null for anything
 * else (a call, a subscript).
 */
export function qualifiedName(node: Node | null | undefined, imports: PythonImports): string | null {
  if (!node) return null;
  if (node.type === "identifier") return imports.bindings.get(node.text) ?? node.text;
  if (node.type === "attribute") {
    const object = qualifiedName(node.childForFieldName("object"), imports);
    const attribute = node.childForFieldName("attribute")?.text;
    return object && attribute ? `${object}.${attribute}` : null;
  }
  return null;
}

/** The name after the last dot. */
export const lastSegment = (dotted: string): string => dotted.slice(dotted.lastIndexOf(".") + 1);
