import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { expect, it } from "vitest";

// @codeplane/runner's entrypoint is copied alone into run pods, so it imports
// node:* only (it declares no dependencies), and nothing from the service's
// src/: the service depends on the package, never the reverse.

const PACKAGE = path.join(import.meta.dirname, "..");
const manifest = JSON.parse(readFileSync(path.join(PACKAGE, "package.json"), "utf8")) as Record<string, Record<string, string> | undefined>;
/** What the package's code may import besides node:* and itself; its tests may also use its devDependencies. */
const declared = (test: boolean) => new Set(Object.keys({ ...manifest.dependencies, ...(test ? manifest.devDependencies : {}) }));

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith(".ts") ? [path.join(dir, e.name)] : [],
  );
}

/** "<file> imports <specifier>" for every import that leaves the package other than by a declared dependency. */
function leaving(file: string): string[] {
  const test = file.endsWith(".test.ts");
  return ts
    .preProcessFile(readFileSync(file, "utf8"), true, true)
    .importedFiles.map((f) => f.fileName)
    .filter((specifier) => {
      if (specifier.startsWith(".")) return !path.resolve(path.dirname(file), specifier).startsWith(PACKAGE + path.sep);
      if (specifier.startsWith("node:")) return false;
      const name = specifier
        .split("/")
        .slice(0, specifier.startsWith("@") ? 2 : 1)
        .join("/");
      // Tests run with the repository's test tools (vitest, typescript); other packages of ours they must declare.
      if (test && !name.startsWith("@codeplane/")) return false;
      return !declared(test).has(name);
    })
    .map((specifier) => `${path.relative(PACKAGE, file)} imports ${specifier}`);
}

it("imports nothing from outside the package but node:* and its declared dependencies", () => {
  expect(["src"].flatMap((dir) => files(path.join(PACKAGE, dir))).flatMap(leaving)).toEqual([]);
});
