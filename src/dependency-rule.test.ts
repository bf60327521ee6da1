import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The dependency rule written down in docs/developers/architecture.md
// ("Layers"), checked: every relative import in src/ must point at a folder its
// layer may use. A new import that points the wrong way fails here, with the
// file and the import; a table that says otherwise than MAY_IMPORT fails too.
// The workspace packages (packages/*: the analyzer, the run pods' entrypoint,
// the log frame format they share with the service) are parts too, named by
// package, and the service reaches them by their public entries only.

const SRC = import.meta.dirname;
const ROOT = path.dirname(SRC);
const PACKAGES = path.join(ROOT, "packages");

/**
 * Which parts each part of src/ may import (besides itself). Parts are top-level folders or files,
 * and workspace packages (@codeplane/...). Packages never import the service (the package
 * boundaries, src/package-boundaries.test.ts), so the direction is always service -> packages.
 */
const MAY_IMPORT: Record<string, readonly string[]> = {
  "logger.ts": [],
  "version.ts": [],
  "server-node-flags.ts": [],
  "idle-memory-release.ts": ["logger.ts"],
  logs: ["@codeplane/frames", "logger.ts"],
  resources: [],
  k8s: ["resources", "@codeplane/frames", "logs", "logger.ts"],
  "config.ts": ["resources"],
  "config-reference.ts": [],
  "config-doc.ts": ["config.ts", "config-reference.ts"],
  integrations: ["config.ts", "logger.ts"],
  storage: ["config.ts", "logger.ts"],
  db: ["resources", "@codeplane/analyzer", "logs", "logger.ts"],
  domain: ["db", "resources", "integrations", "storage", "@codeplane/analyzer", "logs", "logger.ts", "config.ts"],
  controller: ["domain", "db", "k8s", "resources", "integrations", "@codeplane/analyzer", "@codeplane/frames", "logs", "logger.ts"],
  mcp: ["domain", "db", "logs", "logger.ts"],
  oauth: ["domain", "db", "config.ts", "logger.ts"],
  ui: ["domain", "db", "logger.ts", "oauth"],
  api: ["domain", "db", "logs", "logger.ts", "mcp", "oauth", "ui"],
  cli: ["service.ts", "config.ts", "version.ts", "logger.ts", "idle-memory-release.ts", "db", "domain", "storage", "k8s", "@codeplane/analyzer"],
  "service.ts": ["*"],
  "main.ts": ["cli"],
};

/**
 * What a part must never import, whatever MAY_IMPORT grows to: a part, or a
 * folder inside one. The API types live in resources/, so the cluster adapter
 * (k8s/) is the controller's and main.ts's alone; the ways in (api, mcp) reach
 * git through the domain's services, never through the git adapter itself.
 */
const MUST_NOT_IMPORT: Record<string, readonly string[]> = {
  "config.ts": ["k8s"],
  db: ["k8s"],
  domain: ["k8s"],
  mcp: ["k8s", "domain/repositories/git"],
  api: ["k8s", "domain/repositories/git"],
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

/** A file's path inside src/, with forward slashes. */
const inSrc = (file: string) => path.relative(SRC, file).split(path.sep).join("/");
/** The part a file of src/ belongs to, or the package an import of @codeplane/<name>[/<subpath>] reaches. */
const partOf = (target: string) => (isPackageImport(target) ? target.split("/").slice(0, 2).join("/") : inSrc(target).split("/")[0]!);
/** domain/<feature>, for the check that features do not depend on each other in a circle. */
const featureOf = (file: string) => {
  const [top, feature, rest] = path.relative(SRC, file).split(path.sep);
  return top === "domain" && rest !== undefined ? feature! : null;
};

interface Edge {
  from: string;
  to: string;
  specifier: string;
}

/** The imported file, or the specifier when it imports a workspace package. */
const edgeOf = (from: string, specifier: string): Edge => ({
  from,
  to: isPackageImport(specifier) ? specifier : path.resolve(path.dirname(from), specifier),
  specifier,
});

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

type Graph = ReadonlyMap<string, ReadonlySet<string>>;

/** The graph of `key` over the edges where both ends have one (and differ). */
function graphOf(list: readonly Edge[], key: (file: string) => string | null): Graph {
  const graph = new Map<string, Set<string>>();
  for (const e of list) {
    const a = key(e.from);
    const b = key(e.to);
    if (a && b && a !== b) graph.set(a, (graph.get(a) ?? new Set()).add(b));
  }
  return graph;
}

/** Every circle in a graph, as "a -> b -> a" (once per node it starts from). */
function cyclesIn(graph: Graph): string[] {
  const cycles = new Set<string>();
  const visit = (node: string, trail: string[]) => {
    if (trail.includes(node)) {
      cycles.add([...trail.slice(trail.indexOf(node)), node].join(" -> "));
      return;
    }
    for (const next of graph.get(node) ?? []) visit(next, [...trail, node]);
  };
  for (const node of graph.keys()) visit(node, []);
  return [...cycles];
}

/** The part a file belongs to; none for a test file at the top (config.test.ts), which no rule binds. */
const layerOf = (file: string) => (partOf(file).endsWith(".test.ts") ? null : partOf(file));

const isUnder = (file: string, folder: string) => inSrc(file) === folder || inSrc(file).startsWith(`${folder}/`);

/** The imports that break MAY_IMPORT or MUST_NOT_IMPORT, as "<file> imports <specifier>". */
function violations(list: readonly Edge[]): string[] {
  return list
    .filter((e) => {
      const from = partOf(e.from);
      const to = partOf(e.to);
      if (from.endsWith(".test.ts")) return false;
      if ((MUST_NOT_IMPORT[from] ?? []).some((folder) => isUnder(e.to, folder))) return true;
      if (from === to) return false;
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
    expect(unknown, "add the new folder to MAY_IMPORT here and to the layer table of docs/developers/architecture.md").toEqual([]);
  });

  it("every import points at a part its layer may use", () => {
    expect(violations(edges)).toEqual([]);
  });

  it("the service, its tests, benchmarks and launcher import workspace packages by their public entries only", () => {
    const files = ["src", "test", "bench", "bin"].flatMap((dir) => sourceFiles(path.join(ROOT, dir), /\.(ts|mjs)$/));
    expect(deepImports(files.flatMap(allImportsOf))).toEqual([]);
  });

  it("domain features do not depend on each other in a circle", () => {
    expect(cyclesIn(graphOf(edges, featureOf))).toEqual([]);
  });

  it("parts do not depend on each other in a circle", () => {
    expect(cyclesIn(graphOf(edges, layerOf))).toEqual([]);
  });

  it("the layer table has no circle and allows nothing MUST_NOT_IMPORT forbids", () => {
    const table = new Map(Object.entries(MAY_IMPORT).map(([part, may]) => [part, new Set(may.filter((p) => p !== "*"))]));
    expect(cyclesIn(table)).toEqual([]);
    const contradictions = Object.entries(MUST_NOT_IMPORT).flatMap(([part, never]) =>
      never.filter((p) => MAY_IMPORT[part]?.includes(p)).map((p) => `${part} -> ${p}`),
    );
    expect(contradictions).toEqual([]);
  });

  it.each<[string, Record<string, string[]>, boolean]>([
    ["a chain", { a: ["b"], b: ["c"] }, false],
    ["a diamond", { a: ["b", "c"], b: ["d"], c: ["d"] }, false],
    ["two parts importing each other", { a: ["b"], b: ["a"] }, true],
    ["a circle of three", { a: ["b"], b: ["c"], c: ["a"] }, true],
    ["a circle below an entry point", { main: ["a"], a: ["b"], b: ["c"], c: ["b"] }, true],
  ])("the cycle check finds a circle in %s: %s", (_, graph, found) => {
    expect(cyclesIn(new Map(Object.entries(graph).map(([k, v]) => [k, new Set(v)]))).length > 0).toBe(found);
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
    ["service.ts", "./api/app.ts", false],
    ["main.ts", "./cli/index.ts", false],
    ["main.ts", "./api/app.ts", true],
    // The API types are a leaf; everything that needs them may import them.
    ["resources/labels.ts", "../k8s/client.ts", true],
    ["resources/run.ts", "../logger.ts", true],
    ["k8s/run-job.ts", "../resources/run.ts", false],
    ["domain/runs/runs.ts", "../../resources/labels.ts", false],
    ["db/workload-tables.ts", "../resources/lifecycle.ts", false],
    ["config.ts", "./resources/egress-settings.ts", false],
    // The object store is a leaf below the domain: it knows no rows, no cluster and no HTTP.
    ["domain/runs/runs.ts", "../../storage/object-store.ts", false],
    ["storage/s3-store.ts", "../config.ts", false],
    ["storage/s3-store.ts", "../db/database.ts", true],
    ["storage/directory-store.ts", "../domain/errors.ts", true],
    ["api/routes/runs.ts", "../../storage/object-store.ts", true],
    // Only the controller and main.ts touch the cluster adapter.
    ["controller/controller.ts", "../k8s/client.ts", false],
    ["domain/runs/runs.ts", "../../k8s/run-resources.ts", true],
    ["db/workload-tables.ts", "../k8s/client.ts", true],
    ["config.ts", "./k8s/network-policy.ts", true],
    ["api/routes/runs.ts", "../../k8s/client.ts", true],
    ["mcp/tools.ts", "../k8s/labels.ts", true],
    // The ways in use the domain, but not the git adapter inside it (a folder rule: domain itself is allowed).
    ["api/routes/repositories.ts", "../../domain/repositories/repositories.ts", false],
    ["api/routes/repositories.ts", "../../domain/repositories/repo-path.ts", false],
    ["api/routes/repositories.ts", "../../domain/repositories/git/index.ts", true],
    ["mcp/tools.ts", "../domain/repositories/git/mirror-reader.ts", true],
    ["api/routes/repositories.test.ts", "../../domain/repositories/git/index.ts", true],
    ["domain/checkout/checkout.ts", "../repositories/git/checkout-server.ts", false],
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

// The table people read (docs/developers/architecture.md, "Layers") against
// MAY_IMPORT: the parts in its first column, and in the second the parts named
// outside parentheses ("everything", "nothing"). `logger` names logger.ts,
// `api/` names api.
const LAYERS_PAGE = path.resolve(SRC, "../docs/developers/architecture.md");

function layerTable(markdown: string): Record<string, string[]> {
  const section = markdown.slice(markdown.indexOf("\n## Layers\n"));
  const rows = section.split("\n").filter((l) => l.startsWith("| `"));
  const names = (text: string) => [...text.replace(/\([^)]*\)/g, "").matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\/$/, ""));
  const part = (name: string) => (name in MAY_IMPORT || !(`${name}.ts` in MAY_IMPORT) ? name : `${name}.ts`);
  const table: Record<string, string[]> = {};
  for (const row of rows) {
    const [, first = "", second = ""] = row.split("|");
    const allowed = second.trim() === "everything" ? ["*"] : names(second).map(part);
    for (const p of names(first).map(part)) table[p] = allowed;
  }
  return table;
}

describe("the layer table of docs/developers/architecture.md", () => {
  it("lists exactly the parts of MAY_IMPORT, each with the same imports", () => {
    const sorted = (o: Record<string, readonly string[]>) =>
      Object.fromEntries(
        Object.entries(o)
          .map(([k, v]) => [k, [...v].sort()])
          .sort(([a], [b]) => (a! < b! ? -1 : 1)),
      );
    expect(sorted(layerTable(readFileSync(LAYERS_PAGE, "utf8")))).toEqual(sorted(MAY_IMPORT));
  });

  it.each([
    ["| `api/` | `domain`, `db` (the `Db` type), `logger` | why |", { api: ["domain", "db", "logger.ts"] }],
    ["| `main.ts` | everything | it wires |", { "main.ts": ["*"] }],
    ["| `logger.ts`, `version.ts` | nothing | `x` |", { "logger.ts": [], "version.ts": [] }],
    ["| `oauth/` | `config.ts` (types, `Config`), `logger` | |", { oauth: ["config.ts", "logger.ts"] }],
  ])("reads %s", (row, want) => {
    expect(layerTable(`# t\n\n## Layers\n\n| part | may import | why |\n| --- | --- | --- |\n${row}\n`)).toEqual(want);
  });
});
