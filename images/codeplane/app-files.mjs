// What goes into the codeplane image's /app, decided once for both builds:
// ./Dockerfile runs this in a build stage, hack/cluster/images.sh on the host.
// The package manifests, the entrypoint, the CRDs and the sources (src/ and
// the workspace packages/, when there are any), without tests, test fakes,
// fixtures or benchmarks: the image runs them never. node_modules is installed apart
// (npm ci --omit=dev over the manifests).
//
//   node images/codeplane/app-files.mjs <repo> <dest>              copy /app's files
//   node images/codeplane/app-files.mjs --manifests <repo> <dest>  only what npm ci needs
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

/** Top-level files and folders of /app; a folder that does not exist is skipped. */
export const APP_ROOTS = ["package.json", "package-lock.json", "bin", "crds", "src", "packages"];

/** Paths (relative, with /) the image never ships: tests, what only tests use, and benchmarks. */
export function isTestPath(rel) {
  const parts = rel.split("/");
  const name = parts.at(-1);
  return (
    /\.test\.[cm]?[jt]sx?$/.test(name) ||
    /^vitest\.config\.[cm]?[jt]s$/.test(name) ||
    parts.some((p) => ["testing", "test", "tests", "__tests__", "fixtures", "bench", "node_modules"].includes(p))
  );
}

function walk(root, rel, out) {
  const abs = path.join(root, rel);
  if (!statSync(abs).isDirectory()) {
    out.push(rel);
    return;
  }
  for (const entry of readdirSync(abs).sort()) {
    const child = `${rel}/${entry}`;
    if (!isTestPath(child)) walk(root, child, out);
  }
}

/** The files of /app, relative to the repository, sorted. */
export function appFiles(root) {
  const out = [];
  for (const top of APP_ROOTS) if (existsSync(path.join(root, top))) walk(root, top, out);
  return out;
}

/** What `npm ci` needs: the root manifests and each workspace package's package.json. */
export function manifestFiles(root) {
  return appFiles(root).filter((f) => f === "package.json" || f === "package-lock.json" || /^packages\/[^/]+\/package\.json$/.test(f));
}

function copy(files, root, dest) {
  for (const f of files) {
    mkdirSync(path.dirname(path.join(dest, f)), { recursive: true });
    copyFileSync(path.join(root, f), path.join(dest, f));
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const manifests = args[0] === "--manifests";
  const [root, dest] = manifests ? args.slice(1) : args;
  if (!root || !dest) {
    process.stderr.write("usage: app-files.mjs [--manifests] <repo> <dest>\n");
    process.exit(2);
  }
  const files = manifests ? manifestFiles(root) : appFiles(root);
  if (!files.includes("package.json")) {
    process.stderr.write(`app-files.mjs: no package.json in ${root}\n`);
    process.exit(1);
  }
  copy(files, root, dest);
}
