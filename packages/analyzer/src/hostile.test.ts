import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { analyzeRepository } from "./analyze.ts";
import { Syntax } from "./syntax.ts";

// Repositories built to hurt: the analysis must finish (quickly, with the
// damage counted in repo_summary) and never throw or hang.

let syntax: Syntax;
const dirs: string[] = [];
beforeAll(async () => {
  syntax = await Syntax.load({ timeoutMsPerFile: 500 });
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function repo(build: (dir: string) => void): string {
  const dir = mkdtempSync(join(tmpdir(), "cp-hostile-"));
  dirs.push(dir);
  build(dir);
  return dir;
}

const analyse = (dir: string, timeBudgetMs?: number) => analyzeRepository(dir, { syntax, ...(timeBudgetMs !== undefined && { timeBudgetMs }) });

describe("the analyzer on hostile repositories", () => {
  it("an empty repository", async () => {
    const r = await analyse(repo(() => undefined));
    expect(r).toMatchObject({ experiments: [], primary_ids: [], env_vars: [], repo_summary: { file_count: 0, truncated: false } });
  });

  it("binary files only", async () => {
    const r = await analyse(
      repo((d) => {
        for (let i = 0; i < 5; i++) writeFileSync(join(d, `blob${i}.bin`), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, i, 0, 255]));
        // A binary file with a .py name is still binary.
        writeFileSync(join(d, "fake.py"), Buffer.from([0x69, 0x66, 0x20, 0, 0, 0]));
      }),
    );
    expect(r.experiments).toEqual([]);
    expect(r.repo_summary).toMatchObject({ file_count: 6, languages: [] });
    // Only files something wanted to read are sniffed; fake.py was, and is binary.
    expect(r.repo_summary.skipped.binary).toBe(1);
  });

  it("an enormous file is listed but not read", async () => {
    const r = await analyse(repo((d) => writeFileSync(join(d, "dump.py"), `if __name__ == "__main__":\n    pass\n${"x = 1\n".repeat(1_000_000)}`)));
    expect(r.repo_summary.skipped.too_large).toBe(1);
    expect(r.repo_summary.file_count).toBe(1);
    expect(r.experiments).toEqual([]);
  });

  it("a single-line file that takes the parser long", async () => {
    const r = await analyse(repo((d) => writeFileSync(join(d, "min.js"), `var a=${"[".repeat(200_000)}${"]".repeat(200_000)};\nconsole.log(process.env.X)\n`)));
    expect(r.repo_summary.file_count).toBe(1);
  });

  it("nesting deeper than the walk goes", async () => {
    const r = await analyse(
      repo((d) => {
        let p = d;
        for (let i = 0; i < 80; i++) {
          p = join(p, "d");
          mkdirSync(p);
        }
        writeFileSync(join(p, "deep.py"), 'if __name__ == "__main__":\n    print(1)\n');
        writeFileSync(join(d, "top.py"), 'if __name__ == "__main__":\n    print(1)\n');
      }),
    );
    expect(r.repo_summary.truncated).toBe(true);
    expect(r.repo_summary.file_count).toBe(1);
  });

  it("syntax errors in every language it parses", async () => {
    const r = await analyse(
      repo((d) => {
        writeFileSync(join(d, "a.py"), "def f(:\n  return [\n");
        writeFileSync(join(d, "b.js"), "function (( {\n");
        writeFileSync(join(d, "c.go"), "package main\nfunc main( {\n");
        writeFileSync(join(d, "d.sh"), "#!/bin/sh\nif then fi fi\n");
        writeFileSync(join(d, "e.ipynb"), "{ not json");
        writeFileSync(join(d, "package.json"), "{ nope");
        writeFileSync(join(d, "Makefile"), "\tno target\n:::\n");
      }),
    );
    expect(r.repo_summary.file_count).toBe(7);
    expect(r.repo_summary.skipped.unparsable).toBeGreaterThanOrEqual(1);
  });

  it("symlink loops and links out of the repository are not followed", async () => {
    const r = await analyse(
      repo((d) => {
        symlinkSync("b", join(d, "a"));
        symlinkSync("a", join(d, "b"));
        symlinkSync(".", join(d, "self"));
        symlinkSync("/etc", join(d, "etc"));
        symlinkSync("/etc/passwd", join(d, "passwd.py"));
        writeFileSync(join(d, "ok.txt"), "fine\n");
      }),
    );
    expect(r.repo_summary.skipped.symlinks).toBe(5);
    expect(r.repo_summary.file_count).toBe(1);
  });

  it("special files (a FIFO) are skipped rather than read", async () => {
    const dir = repo((d) => execFileSync("mkfifo", [join(d, "pipe.py")]));
    const r = await analyse(dir);
    expect(r.repo_summary.file_count).toBe(0);
  });

  it("stops at its time budget and says the result is partial", async () => {
    const r = await analyse(
      repo((d) => {
        for (let i = 0; i < 300; i++) writeFileSync(join(d, `s${i}.py`), `import os\nif __name__ == "__main__":\n    print(os.environ["V${i}"])\n`);
      }),
      1,
    );
    expect(r.repo_summary.truncated).toBe(true);
  });
});
