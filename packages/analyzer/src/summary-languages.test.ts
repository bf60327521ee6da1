import { describe, expect, it } from "vitest";
import { countLanguages, languageOfPath, languageOfShebang } from "./summary-languages.ts";
import { memoryContext, type MemoryFile } from "./testing/memory-context.ts";

const context = (files: Record<string, string | MemoryFile>, outOfTime: () => boolean = () => false) => memoryContext(files, { outOfTime });

describe("languageOfPath", () => {
  it.each([
    ["src/train.py", "Python"],
    ["web/app.tsx", "TypeScript"],
    ["lib/index.mjs", "JavaScript"],
    ["cmd/main.go", "Go"],
    ["src/lib.rs", "Rust"],
    ["App.java", "Java"],
    ["build.gradle.kts", "Kotlin"],
    ["x.c", "C"],
    ["x.hpp", "C++"],
    ["Program.cs", "C#"],
    ["Gemfile", "Ruby"],
    ["index.php", "PHP"],
    ["run.sh", "Shell"],
    ["nb/Analysis.ipynb", "Jupyter Notebook"],
    ["index.html", "HTML"],
    ["style.css", "CSS"],
    ["q.sql", "SQL"],
    ["analysis.R", "R"],
    ["model.jl", "Julia"],
    ["Main.scala", "Scala"],
    ["App.swift", "Swift"],
    ["README.md", "Markdown"],
    [".github/workflows/ci.yml", "YAML"],
    ["package.json", "JSON"],
    ["pyproject.toml", "TOML"],
    ["Makefile", "Makefile"],
    ["rules.mk", "Makefile"],
    ["docker/Dockerfile", "Dockerfile"],
    ["Dockerfile.gpu", "Dockerfile"],
    ["LICENSE", null],
    [".gitignore", null],
    ["data.bin", null],
  ])("%s → %s", (path, language) => expect(languageOfPath(path)).toBe(language));
});

describe("languageOfShebang", () => {
  it.each([
    ["#!/usr/bin/env python3\n", "Python"],
    ["#!/usr/bin/python3.11\n", "Python"],
    ["#!/bin/bash\n", "Shell"],
    ["#!/usr/bin/env node\n", "JavaScript"],
    ["#!/usr/bin/awk -f\n", null],
    ["plain text", null],
  ])("%j → %s", (text, language) => expect(languageOfShebang(text)).toBe(language));
});

describe("countLanguages", () => {
  it("counts files, lines and bytes per language, most lines first, then by name", () => {
    const out = countLanguages(
      context({
        "a.py": "import os\nprint(1)\n",
        "b.py": "x = 1",
        "run.sh": "echo 1\necho 2\necho 3\n",
        "bin/tool": { text: "#!/usr/bin/env python3\nprint()\n", executable: true },
        "bin/data": { text: "no shebang\n", executable: true },
        "notes.txt": "not counted\n",
        "x.go": "package x\n",
        "y.rs": "fn f() {}\n",
        "img.png": { text: null, size: 500 },
      }),
    );
    expect(out).toEqual({
      partial: false,
      languages: [
        { name: "Python", files: 3, lines: 5, bytes: 19 + 5 + 31 },
        { name: "Shell", files: 1, lines: 3, bytes: 21 },
        { name: "Go", files: 1, lines: 1, bytes: 10 },
        { name: "Rust", files: 1, lines: 1, bytes: 10 },
      ],
    });
  });

  it("counts an unreadable file with 0 lines", () => {
    expect(countLanguages(context({ "big.py": { text: null, size: 10_000_000 } })).languages).toEqual([
      { name: "Python", files: 1, lines: 0, bytes: 10_000_000 },
    ]);
  });

  it("keeps counting files by name and size, without reading, once out of time", () => {
    let reads = 0;
    const ctx = context({ "a.py": "1\n2\n", "b.py": "3\n", "c.py": "4\n" });
    const timed = { ...ctx, readText: (p: string) => (reads++, ctx.readText(p)), outOfTime: () => reads >= 1 };
    expect(countLanguages(timed)).toEqual({ partial: true, languages: [{ name: "Python", files: 3, lines: 2, bytes: 8 }] });
    expect(reads).toBe(1);
  });
});
