import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The dependency rule written down in the README ("Layers"), checked: every
// relative import in src/ must point at a folder its layer may use. A new
// import that points the wrong way fails here, with the file and the import.
// The workspace packages (packages/*: the analyzer, the run pods' entrypoint,
// the log frame format they share with the service) are parts too, named by
// package, and the service reaches them by their public entries only.

const SRC = import.meta.dirname;
const ROOT = path.dirname(SRC);
const PACKAGES = path.join(ROOT, "packages");

/**
 * Which parts each part of src/ may import (besides itself). Parts are top-level folders or files,
 * and workspace packages (@codeplane/...). Packages never import the service (each package's
 * boundary test), so the direction is always service -> packages.
 */
const MAY_IMPORT: Record<string, readonly string[]> = {
  "logger.ts": [],
  "version.ts": [],
  "server-node-flags.ts": [],
  "idle-memory-release.ts": ["logger.ts"],
  logs: ["@codeplane/frames", "logger.ts"],
  k8s: ["@codeplane/frames", "logs", "logger.ts"],
  "config.ts": ["k8s"],
  integrations: ["config.ts", "logger.ts"],
  db: ["k8s", "@codeplane/analyzer", "logs", "logger.ts"],
  domain: ["db", "k8s", "integrations", "@codeplane/analyzer", "logs", "logger.ts", "config.ts"],
  controller: ["domain", "db", "k8s", "integrations", "@codeplane/analyzer", "@codeplane/frames", "logs", "logger.ts"],
  mcp: ["domain", "db", "logs", "logger.ts"],
  oauth: ["domain", "db", "config.ts", "logger.ts"],
  ui: ["domain", "db", "logger.ts", "oauth"],
  api: ["domain", "db", "logs", "logger.ts", "mcp", "oauth", "ui"],
  "main.ts": ["*"],
};

/** How the service may import each workspace package: its name, and its name + subpath for its other "exports". */
const PUBLIC_ENTRIES = new Set(
  readdirSync(PACKAGES).flatMap((dir) => {
    const pkg = JSON.parse(readFileSync(path.join(PACKAGES, dir, "package.json"), "utf8")) as { name: string; exports: Record<string, string> };
    return Object.keys(pkg.exports).map((key) => (key === "." ? pkg.name : `${pkg.name}${key.slice(1)}`));
  }),
);
const isPackageImport = (specifier: string) => specifier.startsWith("@codeplane/");

function sourceFiles(dir: string, extension = /\.ts$/): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p, extension);
    return extension.test(e.name) ? [p] : [];
  });
}

/** The part a file of src/ belongs to, or the package an import of @codeplane/<name>[/<subpath>] reaches. */
const partOf = (target: string) => (isPackageImport(target) ? target.split("/").slice(0, 2).join("/") : path.relative(SRC, target).split(path.sep)[0]!);
/** domain/<feature>, for the check that features do not depend on each other in a circle. */
const featureOf = (file: string) => {
  const [top, feature, rest] = path.relative(SRC, file).split(path.sep);
  return top === "domain" && rest !== undefined ? feature! : null;
};

interface Edge {
  from: string;
  /** The imported file, or the specifier when it imports a workspace package. */
  to: string;
  specifier: string;
}

const edgeOf = (from: string, specifier: string): Edge => ({ from, to: isPackageImport(specifier) ? specifier : path.resolve(path.dirname(from), specifier), specifier });

/** Every import of a file that is relative or of a workspace package (node:* and npm packages are not parts). */
function allImportsOf(file: string): Edge[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  return importedFiles
    .map((f) => f.fileName)
    .filter((s) => s.startsWith(".") || isPackageImport(s))
    .map((specifier) => edgeOf(file, specifier));
}

/** The imports the layer table speaks about: of src/ itself and of workspace packages. */
const importsOf = (file: string) => allImportsOf(file).filter((e) => isPackageImport(e.specifier) || e.to.startsWith(SRC + path.sep));

const edges = sourceFiles(SRC).flatMap(importsOf);

/** The imports that reach a workspace package other than by a public entry: a path into packages/, or an undeclared subpath. */
function deepImports(list: readonly Edge[]): string[] {
  return list
    .filter((e) => (isPackageImport(e.specifier) ? !PUBLIC_ENTRIES.has(e.specifier) : e.to.startsWith(PACKAGES + path.sep)))
    .map((e) => `${path.relative(ROOT, e.from)} imports ${e.specifier}`);
}

/** The imports that break MAY_IMPORT, as "<file> imports <specifier>". */
function violations(list: readonly Edge[]): string[] {
  return list
    .filter((e) => {
      const from = partOf(e.from);
      const to = partOf(e.to);
      if (from === to || from.endsWith(".test.ts")) return false;
      const allowed = MAY_IMPORT[from] ?? [];
      return !allowed.includes("*") && !allowed.includes(to);
    })
    .map((e) => `${path.relative(SRC, e.from)} imports ${e.specifier}`);
}

describe("the dependency rule", () => {
  it("knows every part of src/", () => {
    const parts = new Set(sourceFiles(SRC).map(partOf));
    parts.delete(path.basename(import.meta.filename));
    const unknown = [...parts].filter((p) => !(p in MAY_IMPORT) && !p.endsWith(".test.ts"));
    expect(unknown, "add the new folder to MAY_IMPORT here and to the README's layer table").toEqual([]);
  });

  it("every import points at a part its layer may use", () => {
    expect(violations(edges)).toEqual([]);
  });

  it("the service, its tests, benchmarks and launcher import workspace packages by their public entries only", () => {
    const files = ["src", "test", "bench", "bin"].flatMap((dir) => sourceFiles(path.join(ROOT, dir), /\.(ts|mjs)$/));
    expect(deepImports(files.flatMap(allImportsOf))).toEqual([]);
  });

  it("domain features do not depend on each other in a circle", () => {
    const graph = new Map<string, Set<string>>();
    for (const e of edges) {
      const a = featureOf(e.from);
      const b = featureOf(e.to);
      if (a && b && a !== b) graph.set(a, (graph.get(a) ?? new Set()).add(b));
    }
    const cycles: string[] = [];
    const visit = (node: string, trail: string[]) => {
      if (trail.includes(node)) {
        cycles.push([...trail.slice(trail.indexOf(node)), node].join(" -> "));
        return;
      }
      for (const next of graph.get(node) ?? []) visit(next, [...trail, node]);
    };
    for (const node of graph.keys()) visit(node, []);
    expect(cycles).toEqual([]);
  });

  const edge = (from: string, specifier: string): Edge => edgeOf(path.join(SRC, from), specifier);

  it.each([
    ["k8s/live-log-source.ts", "../domain/runs/runs.ts", true],
    ["logs/hub.ts", "../db/database.ts", true],
    ["domain/runs/runs.ts", "../../api/app.ts", true],
    ["db/schema.ts", "../controller/controller.ts", true],
    ["db/schema.ts", "@codeplane/analyzer", false],
    ["k8s/pod-log.ts", "@codeplane/frames", false],
    ["k8s/pod-log.ts", "@codeplane/analyzer", true],
    ["api/app.ts", "@codeplane/runner", true],
    ["controller/controller.ts", "../domain/runs/run-rows.ts", false],
    ["api/app.ts", "../logs/hub.ts", false],
    ["main.ts", "./api/app.ts", false],
  ])("%s importing %s breaks the rule: %s", (from, specifier, breaks) => {
    expect(violations([edge(from, specifier)]).length > 0).toBe(breaks);
  });

  it.each([
    ["@codeplane/analyzer", false],
    ["@codeplane/analyzer/cli", false],
    ["@codeplane/analyzer/src/model.ts", true],
    ["@codeplane/frames", false],
    ["@codeplane/frames/src/frames.ts", true],
    ["@codeplane/runner", false],
    ["@codeplane/unknown", true],
    ["../../packages/analyzer/src/model.ts", true],
    ["../../packages/frames/src/frames.ts", true],
    ["../logs/hub.ts", false],
  ])("controller/analysis-workload.ts importing %s reaches a package behind its public entry: %s", (specifier, deep) => {
    expect(deepImports([edge("controller/analysis-workload.ts", specifier)]).length > 0).toBe(deep);
  });
});
