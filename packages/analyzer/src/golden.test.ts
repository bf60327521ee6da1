import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { analyzeRepository } from "./analyze.ts";
import type { AnalyzerResult } from "./model.ts";
import { Syntax } from "./syntax.ts";

// Golden tests: each folder under fixtures/golden/ is a small
// repository (in repo/) with what the analyzer must find written out in
// expected.json. Timing figures are left out of the comparison.
// UPDATE_GOLDEN=1 rewrites expected.json from the current output; review the diff.

const FIXTURES = join(import.meta.dirname, "../fixtures/golden");
const cases = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(FIXTURES, d.name, "repo")))
  .map((d) => d.name)
  .sort();

function comparable(r: AnalyzerResult) {
  const { stats, ...rest } = r;
  return { ...rest, stats: { files_scanned: stats.files_scanned } };
}

let syntax: Syntax;
beforeAll(async () => {
  // A generous per-file parse budget: golden output must not depend on how busy the machine is.
  syntax = await Syntax.load({ timeoutMsPerFile: 60_000 });
});

describe("analyzer golden fixtures", () => {
  it("has fixtures", () => expect(cases.length).toBeGreaterThan(0));
  it.each(cases)("%s", async (name) => {
    const dir = join(FIXTURES, name);
    const options = existsSync(join(dir, "options.json")) ? JSON.parse(readFileSync(join(dir, "options.json"), "utf8")) : {};
    const result = comparable(await analyzeRepository(join(dir, "repo"), { ...options, syntax }));
    const expectedPath = join(dir, "expected.json");
    if (process.env.UPDATE_GOLDEN === "1") {
      writeFileSync(expectedPath, `${JSON.stringify(result, null, 2)}\n`);
    }
    if (!existsSync(expectedPath)) throw new Error(`${name}: no expected.json (write it with UPDATE_GOLDEN=1 and review it)`);
    expect(result).toEqual(JSON.parse(readFileSync(expectedPath, "utf8")));
  });
});
