import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The workspace packages (packages/*) are programs and formats of their own:
// the analyzer runs alone in analysis pods, the runner's entrypoint is copied
// alone into run pods, and the frame format is shared by the programs that
// write frames and the service that reads them. The service depends on them,
// never the reverse: a package's files import node:*, each other and what its
// package.json declares, and nothing from the service's src/. (The other
// direction, the service reaching a package by its public entries only, is
// checked by the dependency rule.)

const PACKAGES = path.resolve(import.meta.dirname, "../packages");

/** The folders of a package whose files ship or run: its sources and, where it has them, its benchmark and launchers. */
const CHECKED = ["src", "bench", "bin"];

function files(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(path.join(dir, e.name)) : /\.(ts|mjs)$/.test(e.name) ? [path.join(dir, e.name)] : [],
  );
}

type Manifest = Record<string, Record<string, string> | undefined>;

/** "<file> imports <specifier>" for every import of `file` that leaves the package other than by a declared dependency. */
function leaving(pkg: string, manifest: Manifest, file: string, source: string): string[] {
  const test = file.endsWith(".test.ts");
  const declared = new Set(Object.keys({ ...manifest.dependencies, ...(test ? manifest.devDependencies : {}) }));
  return ts
    .preProcessFile(source, true, true)
    .importedFiles.map((f) => f.fileName)
    .filter((specifier) => {
      if (specifier.startsWith(".")) return !path.resolve(path.dirname(file), specifier).startsWith(pkg + path.sep);
      if (specifier.startsWith("node:")) return false;
      const name = specifier
        .split("/")
        .slice(0, specifier.startsWith("@") ? 2 : 1)
        .join("/");
      // Tests run with the repository's test tools (vitest, typescript); other packages of ours they must declare.
      if (test && !name.startsWith("@codeplane/")) return false;
      return !declared.has(name);
    })
    .map((specifier) => `${path.relative(pkg, file)} imports ${specifier}`);
}

describe("the workspace packages", () => {
  it.each(readdirSync(PACKAGES))("%s imports nothing from outside the package but node:* and its declared dependencies", (name) => {
    const pkg = path.join(PACKAGES, name);
    const manifest = JSON.parse(readFileSync(path.join(pkg, "package.json"), "utf8")) as Manifest;
    const found = CHECKED.flatMap((dir) => files(path.join(pkg, dir))).flatMap((file) => leaving(pkg, manifest, file, readFileSync(file, "utf8")));
    expect(found).toEqual([]);
  });

  // The user CLI (cpl) talks to the server over HTTP only: no dependency at all, so it
  // can never load the service's modules (or anything heavy) on start.
  it("the CLI package declares no dependencies: it imports node:* and its own files only", () => {
    const manifest = JSON.parse(readFileSync(path.join(PACKAGES, "cli", "package.json"), "utf8")) as Manifest;
    expect({ ...manifest.dependencies, ...manifest.devDependencies, ...manifest.peerDependencies }).toEqual({});
  });

  const pkg = path.join(PACKAGES, "example");
  it.each([
    ["src/a.ts", 'import { b } from "./b.ts";', false],
    ["src/a.ts", 'import { x } from "../../../src/logs/hub.ts";', true],
    ["src/a.ts", 'import { readFile } from "node:fs";', false],
    ["src/a.ts", 'import { z } from "zod";', false],
    ["src/a.ts", 'import pino from "pino";', true],
    ["src/a.ts", 'import { FrameWriter } from "@codeplane/frames";', true],
    ["src/a.test.ts", 'import { it } from "vitest";', false],
    ["src/a.test.ts", 'import { FrameReader } from "@codeplane/frames";', false],
    ["src/a.test.ts", 'import { analyze } from "@codeplane/analyzer";', true],
    ["bin/cpl.mjs", 'import { main } from "../src/main.ts";', false],
    ["bin/cpl.mjs", 'import { startService } from "../../../src/service.ts";', true],
  ])("%s with %s leaves the package: %s", (file, source, leaves) => {
    const manifest: Manifest = { dependencies: { zod: "^4" }, devDependencies: { "@codeplane/frames": "0.1.0" } };
    expect(leaving(pkg, manifest, path.join(pkg, file), source).length > 0).toBe(leaves);
  });
});
