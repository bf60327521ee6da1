import type { Parameter } from "../../model.ts";
import { descendants, type Node } from "../../syntax.ts";
import { callArguments, calleeName, literal, objectProperties, propertyKey, stringValue, unwrap } from "./literals.ts";

// The port a Node web server listens on. Express, Koa, `http.createServer`
// and Fastify servers are started with `.listen(port)` (Fastify:
// `.listen({ port })`), the port read from the environment with a fallback:
// `process.env.PORT || 3000`, `Number(process.env.PORT ?? 8080)`,
// `normalizePort(process.env.PORT || '3000')`, `const { PORT = 3000 } =
// process.env`, or a config object's `port: ...`, directly or through
// constants. A port the environment decides becomes a `port` parameter
// passed as that variable; a port written as a number alone is fixed and
// not a parameter. Frameworks whose command line serves the app (`next
// start`, `vite`, `react-scripts start`) take the port their own way.

/** Where a server's port comes from: the variable read (null: none) and the fallback (null: none). */
export interface PortSource {
  env: string | null;
  value: number | null;
}

const ENV_OBJECTS = new Set(["process.env", "process?.env"]);
const MAX_DEPTH = 8;

/** The environment variable of `process.env.X` / `process.env["X"]`; null for anything else. */
function envRead(n: Node): string | null {
  if (n.type === "member_expression") {
    const obj = unwrap(n.childForFieldName("object"));
    return obj && ENV_OBJECTS.has(obj.text.replace(/\s/g, "")) ? (n.childForFieldName("property")?.text ?? null) : null;
  }
  if (n.type === "subscript_expression") {
    const obj = unwrap(n.childForFieldName("object"));
    return obj && ENV_OBJECTS.has(obj.text.replace(/\s/g, "")) ? stringValue(n.childForFieldName("index")) : null;
  }
  return null;
}

/** A port number written as a literal: `3000`, `"3000"`. */
function portNumber(n: Node | null): number | null {
  const lit = literal(n);
  const v = lit?.kind === "string" && /^\d{1,5}$/.test(String(lit.value)) ? Number(lit.value) : lit?.kind === "integer" ? Number(lit.value) : null;
  return v !== null && v > 0 && v < 65536 ? v : null;
}

const SCOPES = new Set(["program", "statement_block", "class_body", "switch_body"]);

/**
 * The value a name has where it is used: the nearest enclosing block's own
 * `const name = ...` (or let/var), or its `const { name = 3000 } =
 * process.env` entry; null when none or when that block declares it twice.
 */
function declarationOf(name: string, at: Node): Node | null {
  for (let scope = at.parent; scope; scope = scope.parent) {
    if (!SCOPES.has(scope.type)) continue;
    const found = scope.namedChildren.flatMap((stmt) => (stmt ? declaredIn(stmt, name) : []));
    if (found.length) return found.length === 1 ? found[0]! : null;
  }
  return null;
}

/** What one statement declares under a name: a declarator's value, or a `process.env` pattern's entry. */
function declaredIn(stmt: Node, name: string): Node[] {
  const decl = stmt.type === "export_statement" ? stmt.childForFieldName("declaration") : stmt;
  if (!decl || (decl.type !== "lexical_declaration" && decl.type !== "variable_declaration")) return [];
  const out: Node[] = [];
  for (const d of decl.namedChildren) {
    const target = d?.type === "variable_declarator" ? d.childForFieldName("name") : null;
    const value = d?.childForFieldName("value") ?? null;
    if (!target || !value) continue;
    if (target.type === "identifier" && target.text === name) out.push(value);
    else if (target.type === "object_pattern" && envObject(value)) out.push(...patternEntries(target, name));
  }
  return out;
}

/** `{ PORT = 3000 }` / `{ PORT }` entries of a pattern for the name. */
function patternEntries(pattern: Node, name: string): Node[] {
  return pattern.namedChildren.filter((p): p is Node => {
    const key = p?.type === "object_assignment_pattern" ? p.childForFieldName("left") : p;
    return key?.type === "shorthand_property_identifier_pattern" && key.text === name;
  });
}

const envObject = (n: Node | null): boolean => {
  const u = unwrap(n);
  return !!u && ENV_OBJECTS.has(u.text.replace(/\s/g, ""));
};

/** Where an expression's port comes from, following constants and wrappers; null when it cannot be told. */
export function portSource(node: Node | null | undefined, depth = 0): PortSource | null {
  const n = unwrap(node);
  if (!n || depth > MAX_DEPTH) return null;
  const fixed = portNumber(n);
  if (fixed !== null) return { env: null, value: fixed };
  const env = envRead(n);
  if (env) return { env, value: null };
  const step = STEPS[n.type];
  return step ? step(n, depth + 1) : null;
}

/** How each kind of expression leads to the port, one step further down. */
const STEPS: Record<string, (n: Node, depth: number) => PortSource | null> = {
  identifier: (n, depth) => portSource(declarationOf(n.text, n), depth),
  shorthand_property_identifier: (n, depth) => portSource(declarationOf(n.text, n), depth),
  // `const { PORT = 3000 } = process.env` / `const { PORT } = process.env`
  object_assignment_pattern: (n) => ({ env: n.childForFieldName("left")?.text ?? null, value: portNumber(n.childForFieldName("right")) }),
  shorthand_property_identifier_pattern: (n) => ({ env: n.text, value: null }),
  binary_expression: (n, depth) => {
    if (!["||", "??"].includes(n.childForFieldName("operator")?.text ?? "")) return null;
    const left = portSource(n.childForFieldName("left"), depth);
    if (!left?.env) return left;
    return { env: left.env, value: left.value ?? portSource(n.childForFieldName("right"), depth)?.value ?? null };
  },
  // `+process.env.PORT`
  unary_expression: (n, depth) => (n.childForFieldName("operator")?.text === "+" ? portSource(n.childForFieldName("argument"), depth) : null),
  // `Number(x)`, `parseInt(x, 10)`, `normalizePort(x)`: the value is x's.
  call_expression: (n, depth) => {
    const args = callArguments(n);
    return args.length >= 1 && args.length <= 2 ? portSource(args[0], depth) : null;
  },
  // `config.port`, `settings.server.port` where the object is a literal in the file.
  member_expression: (n, depth) => {
    const key = n.childForFieldName("property")?.text;
    const obj = objectValue(n.childForFieldName("object"), depth);
    return key && obj ? portSource(obj.get(key) ?? null, depth) : null;
  },
};

function objectValue(node: Node | null, depth: number): Map<string, Node> | null {
  const n = unwrap(node);
  if (!n || depth > MAX_DEPTH) return null;
  if (n.type === "object") return objectProperties(n);
  if (n.type === "identifier") return objectValue(declarationOf(n.text, n), depth + 1);
  if (n.type === "member_expression") {
    const key = n.childForFieldName("property")?.text;
    const outer = objectValue(n.childForFieldName("object"), depth + 1);
    return key && outer ? objectValue(outer.get(key) ?? null, depth + 1) : null;
  }
  return null;
}

/** The port of the first `.listen(...)` call the file makes whose port can be told. */
export function listenPort(root: Node): PortSource | null {
  for (const call of descendants(root, "call_expression")) {
    const fn = unwrap(call.childForFieldName("function"));
    if (fn?.type !== "member_expression" || calleeName(call) !== "listen") continue;
    const first = unwrap(callArguments(call)[0]);
    if (!first) continue;
    // Fastify and `server.listen({ port, host })`.
    const arg = first.type === "object" ? portProperty(first) : first;
    const found = arg ? portSource(arg) : null;
    if (found) return found;
  }
  return null;
}

function portProperty(obj: Node): Node | null {
  for (const p of obj.namedChildren) {
    if (p?.type === "pair" && propertyKey(p) === "port") return p.childForFieldName("value");
    if (p?.type === "shorthand_property_identifier" && p.text === "port") return p;
  }
  return null;
}

/** The `port` parameter of a server whose port the environment decides; null for a fixed or unknown port. */
export function portParameter(source: PortSource | null): Parameter | null {
  if (!source?.env || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(source.env)) return null;
  return {
    name: "port",
    value: source.value,
    category: "integer",
    cli_option: null,
    env_var: source.env,
    choices: null,
    description: `The port the server listens on (read from $${source.env})`,
    required: false,
  };
}

/**
 * Commands of frameworks that serve an application themselves, with the
 * option that sets the port and the port they use without it. The option
 * goes after the script's own words (`npm run dev -- --port 4000`); only the
 * first words of a script are matched.
 */
const FRAMEWORK_SERVERS: readonly { words: RegExp; option: string | null; env: string | null; port: number }[] = [
  { words: /^next (dev|start)\b/, option: "--port", env: null, port: 3000 },
  { words: /^nuxt (dev|start|preview)\b|^nuxi (dev|preview)\b/, option: "--port", env: null, port: 3000 },
  { words: /^vite(\s+(dev|serve))?(\s+-|\s*$)/, option: "--port", env: null, port: 5173 },
  { words: /^vite preview\b/, option: "--port", env: null, port: 4173 },
  { words: /^astro (dev|preview)\b/, option: "--port", env: null, port: 4321 },
  { words: /^react-scripts start\b/, option: null, env: "PORT", port: 3000 },
];

/** A framework's server command in a script body (`next start -p 8080`), as a `port` parameter; null otherwise. */
export function frameworkPort(body: string): Parameter | null {
  const text = body.trim().replace(/^(cross-env\s+)?([A-Za-z_][A-Za-z0-9_]*=\S*\s+)*/, "");
  if (/[&|;<>`$()]/.test(text)) return null;
  const server = FRAMEWORK_SERVERS.find((s) => s.words.test(text));
  if (!server) return null;
  const words = text.split(/\s+/);
  const at = words.findIndex((w) => w === "-p" || w === "--port" || w.startsWith("--port="));
  const given = at < 0 ? null : words[at]!.includes("=") ? words[at]!.slice(words[at]!.indexOf("=") + 1) : words[at + 1];
  const port = given && /^\d{1,5}$/.test(given) ? Number(given) : server.port;
  return {
    name: "port",
    value: port,
    category: "integer",
    cli_option: server.option,
    ...(server.env && { env_var: server.env }),
    choices: null,
    description: server.env ? `The port the server listens on (read from $${server.env})` : "The port the server listens on",
    required: false,
  };
}
