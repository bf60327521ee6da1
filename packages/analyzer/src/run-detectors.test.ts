import { describe, expect, it } from "vitest";
import { grammarsNeeded } from "./run-detectors.ts";

// A thread loads only the grammars its detectors will parse with on the listing.

const ALL = new Set(["python", "notebook", "node", "go", "make", "shell", "dotenv"]);
const file = (path: string, executable = false) => ({ path, size: 10, executable });

describe("grammarsNeeded", () => {
  it.each([
    { files: [], names: ALL, want: [] },
    { files: [file("README.md"), file("Makefile"), file(".env.example")], names: ALL, want: [] },
    { files: [file("train.py")], names: ALL, want: ["python"] },
    { files: [file("nb/explore.ipynb")], names: new Set(["notebook"]), want: ["python"] },
    { files: [file("train.py")], names: new Set(["shell", "go"]), want: [] },
    { files: [file("main.go"), file("web/app.TSX"), file("src/a.mts"), file("b.cjs")], names: ALL, want: ["go", "tsx", "typescript", "javascript"] },
    // An extensionless bin is JavaScript; the manifest is what says a package is there.
    { files: [file("package.json")], names: ALL, want: ["javascript"] },
    { files: [file("scripts/run.SH"), file("x.bash")], names: ALL, want: ["bash"] },
    // An executable may be a shell script whatever its name.
    { files: [file("bin/serve", true)], names: ALL, want: ["bash"] },
    { files: [file("bin/serve", true)], names: new Set(["python", "node"]), want: [] },
  ])("$files.length files, $want", ({ files, names, want }) => {
    expect([...grammarsNeeded(files, names)].sort()).toEqual([...want].sort());
  });
});
