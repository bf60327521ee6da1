import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The dependency rule written down in the README ("Layers"), checked: every
// relative import in src/ must point at a folder its layer may use. A new
// import that points the wrong way fails here, with the file and the import.

const SRC = import.meta.dirname;

/** Which parts each part of src/ may import (besides itself). Parts are top-level folders or files. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  "logger.ts": [],
  "version.ts": [],
  "server-node-flags.ts": [],
  "idle-memory-release.ts": ["logger.ts"],
  logs: ["logger.ts"],
  runner: [],
  analyzer: ["logs", "logger.ts"],
  k8s: ["logs", "logger.ts"],
  "config.ts": ["k8s"],
  integrations: ["config.ts", "logger.ts"],
  db: ["k8s", "analyzer", "logs", "logger.ts"],
  domain: ["db", "k8s", "integrations", "analyzer", "logs", "logger.ts", "config.ts"],
  controller: ["domain", "db", "k8s", "integrations", "analyzer", "logs", "logger.ts"],
  mcp: ["domain", "db", "logs", "logger.ts"],
  oauth: ["domain", "db", "config.ts", "logger.ts"],
  ui: ["domain", "db", "logger.ts", "oauth"],
  api: ["domain", "db", "logs", "logger.ts", "mcp", "oauth", "ui"],
  cli: ["main.ts", "config.ts", "version.ts", "logger.ts", "idle-memory-release.ts", "db", "domain", "k8s", "analyzer"],
  "main.ts": ["*"],
};

/** Tests may also reach what they test against (the runner's test parses its output with the frame reader). */
const TESTS_MAY_ALSO_IMPORT: Record<string, readonly string[]> = { runner: ["logs"] };

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith(".ts") ? [p] : [];
  });
}

const partOf = (file: string) => path.relative(SRC, file).split(path.sep)[0]!;
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

function importsOf(file: string): Edge[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
  return importedFiles
    .map((f) => f.fileName)
    .filter((s) => s.startsWith("."))
    .map((specifier) => ({ from: file, to: path.resolve(path.dirname(file), specifier), specifier }))
    .filter((e) => e.to.startsWith(SRC + path.sep));
}

const edges = sourceFiles(SRC).flatMap(importsOf);

/** The imports that break MAY_IMPORT, as "<file> imports <specifier>". */
function violations(list: readonly Edge[]): string[] {
  return list
    .filter((e) => {
      const from = partOf(e.from);
      const to = partOf(e.to);
      if (from === to || from.endsWith(".test.ts")) return false;
      const allowed = [...(MAY_IMPORT[from] ?? []), ...(e.from.endsWith(".test.ts") ? (TESTS_MAY_ALSO_IMPORT[from] ?? []) : [])];
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

  const edge = (from: string, specifier: string): Edge => {
    const file = path.join(SRC, from);
    return { from: file, to: path.resolve(path.dirname(file), specifier), specifier };
  };

  it.each([
    ["k8s/live-log-source.ts", "../domain/runs/runs.ts", true],
    ["logs/hub.ts", "../db/database.ts", true],
    ["domain/runs/runs.ts", "../../api/app.ts", true],
    ["db/schema.ts", "../controller/controller.ts", true],
    ["runner/entrypoint.ts", "../logs/frames.ts", true],
    ["runner/entrypoint.test.ts", "../logs/frames.ts", false],
    ["controller/controller.ts", "../domain/runs/run-rows.ts", false],
    ["api/app.ts", "../logs/hub.ts", false],
    ["main.ts", "./api/app.ts", false],
  ])("%s importing %s breaks the rule: %s", (from, specifier, breaks) => {
    expect(violations([edge(from, specifier)]).length > 0).toBe(breaks);
  });
});
