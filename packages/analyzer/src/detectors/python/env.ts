import type { EnvVarUse } from "../../model.ts";
import { children, descendants, lineOf, type Node } from "../../syntax.ts";
import { callArguments, stringLiteral } from "./literals.ts";
import { qualifiedName, type PythonImports } from "./names.ts";

// Environment variables a Python file reads, by name when the name is a
// string literal. `required` says whether the program has no fallback:
// os.environ["X"] and os.getenv("X") without a default count as required
// (the latter gives None, which most programs are not ready for);
// os.environ.get("X") is taken as written to tolerate a missing value. A read
// the program only makes on some paths is not required either: in a branch of
// an `if` (`if "X" in os.environ:`, `if args.distributed:`) or of a
// conditional expression, in a `try` that catches the KeyError, and, for
// os.getenv, wherever its None is tested (`os.getenv("X") or "d"`,
// `if os.getenv("X"):`, `os.getenv("X") == "1"`).

/** Cheap test on the text: a file that never spells these cannot read the environment through os. */
export const mayReadEnvironment = (source: string): boolean => source.includes("environ") || source.includes("getenv") || source.includes("BaseSettings");

export function envVarUses(root: Node, imports: PythonImports, path: string): EnvVarUse[] {
  const uses: EnvVarUse[] = [];
  const add = (nameNode: Node | undefined, use: Node, required: boolean) => {
    const name = stringLiteral(nameNode);
    if (name && name.length <= 256) uses.push({ name, path, line: lineOf(use), required });
  };
  for (const node of descendants(root, ["subscript", "call"])) {
    if (node.type === "subscript") {
      if (qualifiedName(node.childForFieldName("value"), imports) !== "os.environ" || isWrite(node)) continue;
      add(node.childForFieldName("subscript") ?? undefined, node, !optionalRead(node, false));
      continue;
    }
    const fn = qualifiedName(node.childForFieldName("function"), imports);
    if (fn !== "os.getenv" && fn !== "os.environ.get" && fn !== "os.environ.setdefault" && fn !== "os.environ.pop") continue;
    const args = callArguments(node);
    const nameNode = args.positional[0] ?? args.keywords.get("key");
    const hasDefault = args.positional.length > 1 || args.keywords.has("default") || args.keywords.has("value") || args.splat;
    const required = (fn === "os.getenv" || fn === "os.environ.pop") && !hasDefault && !optionalRead(node, fn === "os.getenv");
    add(nameNode, node, required);
  }
  // Only a file that imports BaseSettings can declare settings: spare the others a walk of the tree.
  if ([...imports.bindings.values()].some((m) => m.endsWith("BaseSettings") || m === "pydantic" || m === "pydantic_settings"))
    uses.push(...settingsUses(root, imports, path));
  if ([...imports.bindings.values()].some((m) => m === "environ" || m.startsWith("environ."))) uses.push(...djangoEnvironUses(root, imports, path));
  return uses;
}

// django-environ's casts that take the variable's name first; the *_url ones default to a conventional name.
const ENVIRON_CASTS = new Set(["str", "bool", "int", "float", "json", "list", "tuple", "dict", "url", "path", "bytes", "parse_value"]);
const ENVIRON_URLS: Record<string, string> = {
  db: "DATABASE_URL",
  db_url: "DATABASE_URL",
  cache: "CACHE_URL",
  cache_url: "CACHE_URL",
  email: "EMAIL_URL",
  email_url: "EMAIL_URL",
  search_url: "SEARCH_URL",
};

/**
 * django-environ: `env = environ.Env(DEBUG=(bool, False))`, then `env("X")`,
 * `env.str("X")`, `env.db()` (DATABASE_URL). Required unless a default is
 * given (`default=`, a cast's second argument, or a (cast, default) pair in
 * the Env(...) scheme) or the read is optional by the rules above.
 */
function djangoEnvironUses(root: Node, imports: PythonImports, path: string): EnvVarUse[] {
  const envs = environInstances(root, imports);
  if (!envs.size) return [];
  const out: EnvVarUse[] = [];
  for (const call of descendants(root, "call")) {
    const { owner, method } = environCall(call);
    const defaulted = owner === null ? undefined : envs.get(owner);
    if (!defaulted || (method !== null && !ENVIRON_CASTS.has(method) && !(method in ENVIRON_URLS))) continue;
    const args = callArguments(call);
    const name = stringLiteral(args.positional[0] ?? args.keywords.get("var")) ?? (method !== null ? (ENVIRON_URLS[method] ?? null) : null);
    if (!name || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) continue;
    const hasDefault = args.keywords.has("default") || (method !== null && args.positional.length > 1) || defaulted.has(name);
    out.push({ name, path, line: lineOf(call), required: !hasDefault && !args.splat && !optionalRead(call, false) });
  }
  return out;
}

/**
 * pydantic settings (`class Settings(BaseSettings): database_url: str`, pydantic
 * 1 or pydantic-settings): each field is read from the variable of its name in
 * capitals (after `env_prefix`), or from its `alias` / `validation_alias` /
 * `env=`; a field without a default is required.
 */
function settingsUses(root: Node, imports: PythonImports, path: string): EnvVarUse[] {
  const out: EnvVarUse[] = [];
  // Settings classes of this file by name, with their prefix: a subclass inherits both the class's nature and its env_prefix.
  const settings = new Map<string, string>();
  for (const cls of descendants(root, "class_definition")) {
    const bases = cls.childForFieldName("superclasses");
    const parent = bases ? children(bases).find((b) => /(^|\.)BaseSettings$/.test(qualifiedName(b, imports) ?? b.text) || settings.has(b.text)) : undefined;
    if (!parent) continue;
    const body = cls.childForFieldName("body");
    if (!body) continue;
    const prefix = envPrefix(body) ?? settings.get(parent.text) ?? "";
    settings.set(cls.childForFieldName("name")?.text ?? "", prefix);
    for (const stmt of children(body)) {
      const use = settingsField(stmt, prefix, imports, path);
      if (use) out.push(use);
    }
  }
  return out;
}

/** The class's `env_prefix`, from `SettingsConfigDict(env_prefix=...)` or `env_prefix = ...` (the last one said); null when it says none. */
function envPrefix(body: Node): string | null {
  let prefix: string | null = null;
  for (const call of descendants(body, "call")) {
    const p = stringLiteral(callArguments(call).keywords.get("env_prefix"));
    if (p !== null) prefix = p;
  }
  for (const a of descendants(body, "assignment")) {
    const left = a.childForFieldName("left");
    if (left?.text === "env_prefix") prefix = stringLiteral(a.childForFieldName("right")) ?? prefix;
  }
  return prefix;
}

/** The variable an annotated field of a settings class is read from. */
function settingsField(stmt: Node, prefix: string, imports: PythonImports, path: string): EnvVarUse | null {
  const a = stmt.type === "expression_statement" ? stmt.firstNamedChild : null;
  if (a?.type !== "assignment" || !a.childForFieldName("type")) return null;
  const name = a.childForFieldName("left");
  if (name?.type !== "identifier" || name.text === "model_config" || name.text.startsWith("_")) return null;
  const value = a.childForFieldName("right");
  let env = `${prefix}${name.text}`.toUpperCase();
  let required = value === null;
  if (value?.type === "call" && /(^|\.)Field$/.test(qualifiedName(value.childForFieldName("function"), imports) ?? "")) {
    const args = callArguments(value);
    const alias = stringLiteral(args.keywords.get("validation_alias") ?? args.keywords.get("alias") ?? args.keywords.get("env"));
    if (alias) env = alias.toUpperCase();
    const first = args.positional[0];
    required = (!first || first.type === "ellipsis") && !args.keywords.has("default") && !args.keywords.has("default_factory");
  }
  return /^[A-Z_][A-Z0-9_]*$/.test(env) ? { name: env, path, line: lineOf(a), required } : null;
}

/** The names bound to `environ.Env(...)`, each with the variables its scheme gives a default (`DEBUG=(bool, False)`). */
function environInstances(root: Node, imports: PythonImports): Map<string, Set<string>> {
  const envs = new Map<string, Set<string>>();
  for (const a of descendants(root, "assignment")) {
    const value = a.childForFieldName("right");
    const target = a.childForFieldName("left");
    if (value?.type !== "call" || target?.type !== "identifier") continue;
    if (qualifiedName(value.childForFieldName("function"), imports) !== "environ.Env") continue;
    const defaulted = new Set<string>();
    for (const [key, v] of callArguments(value).keywords) if (v.type === "tuple" && v.namedChildCount >= 2) defaulted.add(key);
    envs.set(target.text, defaulted);
  }
  return envs;
}

/** `env(...)` → owner "env"; `env.str(...)` → owner "env", method "str"; anything else: no owner. */
function environCall(call: Node): { owner: string | null; method: string | null } {
  const fn = call.childForFieldName("function");
  if (fn?.type === "identifier") return { owner: fn.text, method: null };
  const object = fn?.type === "attribute" ? fn.childForFieldName("object") : null;
  if (object?.type !== "identifier") return { owner: null, method: null };
  return { owner: object.text, method: fn!.childForFieldName("attribute")?.text ?? null };
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

/**
 * Whether the program reaches this read only on some paths, or copes with its
 * absence: see the file's header. `testsNone` is for reads that give None
 * rather than raise (os.getenv), whose value may be tested in place.
 */
export function optionalRead(read: Node, testsNone: boolean): boolean {
  if (testsNone && storedThenTested(read)) return true;
  let child = read;
  for (let p = read.parent; p; child = p, p = p.parent) {
    const verdict = enclosingVerdict(p, child, testsNone);
    if (verdict !== null) return verdict;
  }
  return false;
}

/** What the node p around a read (reached through child) says of it: optional, not, or null to look further out. */
function enclosingVerdict(p: Node, child: Node, testsNone: boolean): boolean | null {
  switch (p.type) {
    case "if_statement":
    case "elif_clause":
    case "while_statement": {
      const inCondition = p.childForFieldName("condition")?.equals(child) ?? false;
      if (inCondition) return testsNone ? true : null;
      if (p.type === "if_statement" && isMainGuard(p)) return null;
      return true;
    }
    case "else_clause":
    case "conditional_expression":
      return true;
    case "boolean_operator":
    case "comparison_operator":
    case "not_operator":
      return testsNone ? true : null;
    case "try_statement":
      return p.childForFieldName("body")?.equals(child) && catchesMissing(p) ? true : null;
    case "function_definition":
    case "lambda":
    case "class_definition":
      return false;
    default:
      return null;
  }
}

/** `proxy = os.getenv("X")` followed by `if proxy:` (or `proxy or ...`, `proxy is None`) in the same scope. */
function storedThenTested(read: Node): boolean {
  const assignment = read.parent;
  if (assignment?.type !== "assignment" || !assignment.childForFieldName("right")?.equals(read)) return false;
  const target = assignment.childForFieldName("left");
  if (target?.type !== "identifier") return false;
  let scope: Node | null = assignment;
  while (scope && scope.type !== "function_definition" && scope.type !== "module") scope = scope.parent;
  if (!scope) return false;
  for (const test of descendants(scope, [
    "if_statement",
    "elif_clause",
    "while_statement",
    "conditional_expression",
    "boolean_operator",
    "not_operator",
    "comparison_operator",
  ])) {
    const condition =
      test.type === "if_statement" || test.type === "elif_clause" || test.type === "while_statement" ? test.childForFieldName("condition") : test;
    if (condition && (condition.text === target.text || descendants(condition, "identifier").some((i) => i.text === target.text))) return true;
  }
  return false;
}

function isMainGuard(ifStatement: Node): boolean {
  return /^__name__\s*==\s*["']__main__["']$|^["']__main__["']\s*==\s*__name__$/.test(ifStatement.childForFieldName("condition")?.text.trim() ?? "");
}

/** A try whose handlers catch a missing key: KeyError, LookupError, Exception, BaseException, or everything. */
function catchesMissing(tryStatement: Node): boolean {
  return tryStatement.namedChildren.some((c) => {
    if (c?.type !== "except_clause") return false;
    const header = c.text.slice(0, c.text.indexOf(":") + 1 || undefined);
    return /^except\s*:/.test(header) || /\b(KeyError|LookupError|Exception|BaseException)\b/.test(header);
  });
}
