import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { memoryContext } from "../testing/memory-context.ts";
import { resolveGo } from "./go.ts";

// The Go part of an environment: the module download that lets runs build
// without the network (through the operator's GOPROXY), and what it says when
// a repository could not build at all.

const resolve = (files: Record<string, string>) => resolveGo({ ctx: memoryContext(files), experiments: [] });
const COBRA = "module example.com/ledger\n\ngo 1.23.0\n\nrequire github.com/spf13/cobra v1.10.2\n";

describe("resolveGo", () => {
  it("downloads the modules go.mod requires, once, into the environment's module cache", () => {
    const part = resolve({ "go.mod": COBRA, "go.sum": "github.com/spf13/cobra v1.10.2 h1:x=\n" });
    expect(part.steps.map((s) => [s.name, s.ecosystem])).toEqual([["go mod download", "go"]]);
    expect(part.steps[0]!.run).toContain("go mod download");
    expect(part.manifests).toEqual(["go.mod", "go.sum"]);
    expect(part.notes).toEqual([]);
  });

  it("downloads nothing for a module of the standard library alone", () => {
    const part = resolve({ "go.mod": "module example.com/wordfreq\n\ngo 1.22\n" });
    expect(part.steps).toEqual([]);
    expect(part.notes).toEqual([]);
  });

  it("says why a module that requires others but has no go.sum cannot build", () => {
    const part = resolve({ "go.mod": COBRA });
    expect(part.steps.map((s) => s.name)).toEqual(["go mod download"]);
    expect(part.notes).toEqual([expect.stringMatching(/no go\.sum: go refuses to build it \(missing go\.sum entry\)/)]);
  });

  describe("its step, run by sh as the build runs it", () => {
    const dirs: string[] = [];
    afterEach(() => {
      for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    });

    /** The step in a checkout, with a `go` that records its arguments; what it printed and what go was asked. */
    function runStep(files: Record<string, string>): { out: string; goArgs: string | null } {
      const dir = mkdtempSync(join(tmpdir(), "go-step-"));
      dirs.push(dir);
      for (const [p, text] of Object.entries(files)) {
        mkdirSync(join(dir, p, ".."), { recursive: true });
        writeFileSync(join(dir, p), text);
      }
      const bin = join(dir, ".bin");
      mkdirSync(bin);
      writeFileSync(join(bin, "go"), `#!/bin/sh\necho "$*" > "${dir}/.go-args"\n`);
      chmodSync(join(bin, "go"), 0o755);
      const run = resolve({ "go.mod": COBRA, "go.sum": "" }).steps[0]!.run;
      const out = execFileSync("sh", ["-eu", "-c", run], { cwd: dir, encoding: "utf8", env: { PATH: `${bin}:/usr/bin:/bin` } });
      let goArgs: string | null = null;
      try {
        goArgs = readFileSync(join(dir, ".go-args"), "utf8").trim();
      } catch {
        // go was not run
      }
      return { out, goArgs };
    }

    it("runs go mod download", () => {
      expect(runStep({ "go.mod": COBRA }).goArgs).toBe("mod download");
    });

    it("leaves a repository that vendors its modules to build from vendor/", () => {
      const { out, goArgs } = runStep({ "go.mod": COBRA, "vendor/modules.txt": "# github.com/spf13/cobra v1.10.2\n" });
      expect(goArgs).toBeNull();
      expect(out).toMatch(/vendor\/modules\.txt: go builds from the vendored modules/);
    });
  });
});
