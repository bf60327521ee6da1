// go.mod read line by line (it has no grammar among ours): the module path
// and the required modules, which is all the Go detector needs.

export interface GoMod {
  module: string | null;
  requires: string[];
}

export function parseGoMod(text: string): GoMod {
  let module: string | null = null;
  const requires: string[] = [];
  let block: string | null = null;
  for (const raw of text.split(/\r?\n/)) {
    const line = stripComment(raw).trim();
    if (!line) continue;
    if (block !== null) {
      if (line === ")") block = null;
      else if (block === "require") pushPath(requires, line);
      continue;
    }
    const [verb = "", ...rest] = line.split(/\s+/);
    const tail = rest.join(" ");
    if (tail === "(") {
      block = verb;
    } else if (verb === "module") {
      module = unquote(rest[0] ?? "") || null;
    } else if (verb === "require") {
      pushPath(requires, tail);
    }
  }
  return { module, requires };
}

function stripComment(line: string): string {
  const i = line.indexOf("//");
  return i === -1 ? line : line.slice(0, i);
}

function unquote(s: string): string {
  return s.length >= 2 && (s[0] === '"' || s[0] === "`") && s.endsWith(s[0]) ? s.slice(1, -1) : s;
}

function pushPath(into: string[], entry: string): void {
  const path = unquote(entry.split(/\s+/)[0] ?? "");
  if (path) into.push(path);
}

const FRAMEWORKS: readonly [string, string][] = [
  ["github.com/gin-gonic/gin", "Gin"],
  ["github.com/labstack/echo", "Echo"],
  ["github.com/spf13/cobra", "Cobra"],
  ["github.com/gofiber/fiber", "Fiber"],
  ["google.golang.org/grpc", "gRPC"],
  ["k8s.io/client-go", "client-go"],
];

/** Frameworks named by required modules; `github.com/labstack/echo/v4` counts as echo. */
export function goFrameworks(requires: Iterable<string>): string[] {
  const paths = [...requires];
  const matches = (prefix: string) => paths.some((p) => p === prefix || (p.startsWith(`${prefix}/`) && /^v\d+$/.test(p.slice(prefix.length + 1))));
  return FRAMEWORKS.filter(([prefix]) => matches(prefix)).map(([, name]) => name);
}

/** A module's short name: `github.com/acme/tool/v2` → tool. */
export function moduleName(path: string): string {
  const parts = path.split("/").filter(Boolean);
  if (parts.length > 1 && /^v\d+$/.test(parts[parts.length - 1]!)) parts.pop();
  return parts[parts.length - 1] ?? path;
}
