import { posix } from "node:path";
import { NODE_SOURCE_EXTENSIONS } from "./entry.ts";

// Reading package.json scripts: which ones npm runs by itself around others
// (not experiments), and which file a `node <file>` style script runs, so
// that file's options can become the script's parameters.

// Scripts npm runs on its own during install, publish, pack and version.
const LIFECYCLE = new Set([
  "prepare",
  "install",
  "preinstall",
  "postinstall",
  "prepublish",
  "prepublishOnly",
  "publish",
  "postpublish",
  "prepack",
  "postpack",
  "preversion",
  "version",
  "postversion",
  "dependencies",
]);

export function isLifecycleScript(name: string, all: ReadonlySet<string>): boolean {
  if (LIFECYCLE.has(name) || name.startsWith("prepublish")) return true;
  for (const prefix of ["pre", "post"]) {
    if (name.length > prefix.length && name.startsWith(prefix) && all.has(name.slice(prefix.length))) return true;
  }
  return false;
}

const RUNNERS = new Set(["node", "tsx", "ts-node", "nodemon", "ts-node-dev"]);
// Runner options whose value is the next word.
const VALUE_OPTIONS = new Set([
  "-r",
  "--require",
  "--import",
  "--loader",
  "--experimental-loader",
  "-C",
  "--conditions",
  "--env-file",
  "--tsconfig",
  "-P",
  "--project",
  "-O",
  "--compiler-options",
  "--title",
]);
// Runner options after which there is no script file.
const NO_FILE_OPTIONS = new Set(["-e", "--eval", "-p", "--print", "-", "-i", "--interactive", "--test", "--check", "-c"]);
// Anything the shell would interpret makes it unclear where appended arguments go.
const SHELL_SYNTAX = /[&|;<>`$()'"\\*?{}]/;

/**
 * The repository path of the file a script like `node src/cli.js`,
 * `NODE_ENV=production tsx watch src/main.ts` or `cross-env X=1 ts-node app.ts`
 * runs, when that file exists; null for anything else.
 */
export function scriptEntryFile(command: string, packageDir: string, exists: (path: string) => boolean): string | null {
  if (SHELL_SYNTAX.test(command)) return null;
  const words = command.trim().split(/\s+/);
  let i = 0;
  while (i < words.length && (words[i] === "cross-env" || words[i] === "env" || /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!))) i++;
  if (words[i] === "npx" && (words[i + 1] === "tsx" || words[i + 1] === "ts-node")) i++;
  const runner = words[i];
  if (!runner || !RUNNERS.has(runner)) return null;
  i++;
  if (runner === "tsx" && words[i] === "watch") i++;
  for (; i < words.length; i++) {
    const w = words[i]!;
    if (NO_FILE_OPTIONS.has(w) || w.startsWith("--eval=") || w.startsWith("--print=")) return null;
    if (!w.startsWith("-")) return resolveFile(w, packageDir, exists);
    if (VALUE_OPTIONS.has(w)) i++;
  }
  return null;
}

function resolveFile(word: string, packageDir: string, exists: (path: string) => boolean): string | null {
  const joined = posix.normalize(packageDir === "" ? word : `${packageDir}/${word}`).replace(/\/+$/, "");
  if (joined === "." || joined === ".." || joined.startsWith("../") || joined.startsWith("/")) return null;
  const candidates = [joined, ...NODE_SOURCE_EXTENSIONS.map((e) => joined + e), ...NODE_SOURCE_EXTENSIONS.map((e) => `${joined}/index${e}`)];
  const found = candidates.find(exists);
  if (found) return found;
  // A build's output (`node dist/server.js`) is not in the repository; its source (src/server.ts) tells what it does.
  const built = /^((?:.*\/)?)(dist|build|out)\/(.+?)(\.(m|c)?js)?$/.exec(joined);
  if (!built) return null;
  const stem = `${built[1]}src/${built[3]}`;
  return NODE_SOURCE_EXTENSIONS.map((e) => stem + e).find(exists) ?? null;
}
