import type { AnalyzerContext } from "../detector.ts";

// The workspace packages of an npm, Yarn or pnpm monorepo: their folders get
// node_modules of their own at install, which must be kept with the root's.

/** package.json's "workspaces" (an array, or Yarn's { packages: [...] }). */
export function packageJsonWorkspaces(pkg: Record<string, unknown> | null): string[] {
  const ws = pkg?.workspaces;
  const list = Array.isArray(ws) ? ws : ws && typeof ws === "object" ? (ws as Record<string, unknown>).packages : undefined;
  return Array.isArray(list) ? list.filter((p): p is string => typeof p === "string") : [];
}

/**
 * pnpm-workspace.yaml's `packages:` list, read line by line (the analyzer
 * carries no YAML parser, and the list is always this simple form):
 *   packages:
 *     - 'apps/*'
 *     - "!**\/test/**"
 */
export function pnpmWorkspaces(text: string | null): string[] {
  if (text === null) return [];
  const out: string[] = [];
  let inPackages = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/\s+#.*$/, "");
    if (/^packages:\s*$/.test(line)) inPackages = true;
    else if (/^\S/.test(line)) inPackages = false;
    else if (inPackages) {
      const m = /^\s*-\s*(['"]?)(.+?)\1\s*$/.exec(line);
      if (m) out.push(m[2]!);
    }
  }
  return out;
}

function globToRegExp(glob: string): RegExp {
  const clean = glob.replace(/^\.\//, "").replace(/\/+$/, "");
  let re = "";
  for (let i = 0; i < clean.length; i++) {
    const c = clean[i]!;
    if (c === "*" && clean[i + 1] === "*") {
      re += ".*";
      i += 1;
      if (clean[i + 1] === "/") i += 1;
    } else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${re}$`);
}

/** The folders (other than the root) holding a package.json that the patterns take in, sorted. */
export function workspaceFolders(ctx: AnalyzerContext, patterns: readonly string[]): string[] {
  const include = patterns.filter((p) => !p.startsWith("!")).map(globToRegExp);
  const exclude = patterns.filter((p) => p.startsWith("!")).map((p) => globToRegExp(p.slice(1)));
  if (!include.length) return [];
  return ctx.files
    .map((f) => f.path)
    .filter((p) => p.endsWith("/package.json"))
    .map((p) => p.slice(0, -"/package.json".length))
    .filter((dir) => include.some((r) => r.test(dir)) && !exclude.some((r) => r.test(dir)))
    .sort();
}
