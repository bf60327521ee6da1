import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { analyzeRepository } from "./analyze.ts";
import { emptyScore, figures, report, scoreAnalysis, type CorpusLabels, type Score } from "./testing/corpus-score.ts";
import { Syntax } from "./syntax.ts";

// The corpus: repositories written in the style of real projects (research
// scripts, CLIs in Python, Node and Go, Makefiles, notebooks, shell, web
// services), several ways of writing each thing, each labelled by hand in
// labels.json from reading its code. The analyzer must find what a user would
// run (entries), each entry's parameters with their defaults and types, and
// only the environment variables a run cannot start without. The figures are
// printed; below the bars the test fails. See docs/developers/testing.md (The analyzer corpus).

const CORPUS = join(import.meta.dirname, "../fixtures/corpus");
const BARS = {
  entryRecall: 0.97,
  entryPrecision: 0.97,
  parameterRecall: 0.9,
  requiredPrecision: 0.9,
  requiredRecall: 0.9,
  entryRequiredPrecision: 0.9,
  entryRequiredRecall: 0.9,
  mainPick: 0.9,
  summaryRight: 0.9,
  ioRight: 0.9,
};

const repos = readdirSync(CORPUS, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(CORPUS, d.name, "labels.json")))
  .map((d) => d.name)
  .sort();

let syntax: Syntax;
beforeAll(async () => {
  syntax = await Syntax.load({ timeoutMsPerFile: 60_000 });
});

describe("analyzer corpus", () => {
  it("has repositories of every ecosystem", () => expect(repos.length).toBeGreaterThanOrEqual(10));

  it("finds the entries, parameters and required variables people labelled", async () => {
    const total: Score = emptyScore();
    for (const name of repos) {
      const labels = JSON.parse(readFileSync(join(CORPUS, name, "labels.json"), "utf8")) as CorpusLabels;
      const result = await analyzeRepository(join(CORPUS, name, "repo"), { syntax });
      scoreAnalysis(result, labels, total, `${name}: `);
    }
    const f = figures(total);
    process.stdout.write(`\nanalyzer corpus (${repos.length} repositories)\n${report(total)}\n`);
    expect.soft(f.entryRecall, "entry recall").toBeGreaterThanOrEqual(BARS.entryRecall);
    expect.soft(f.entryPrecision, "entry precision").toBeGreaterThanOrEqual(BARS.entryPrecision);
    expect.soft(f.parameterRecall, "parameter recall").toBeGreaterThanOrEqual(BARS.parameterRecall);
    expect.soft(f.requiredPrecision, "required-variable precision").toBeGreaterThanOrEqual(BARS.requiredPrecision);
    expect.soft(f.requiredRecall, "required-variable recall").toBeGreaterThanOrEqual(BARS.requiredRecall);
    expect.soft(f.entryRequiredPrecision, "required-variable precision per experiment").toBeGreaterThanOrEqual(BARS.entryRequiredPrecision);
    expect.soft(f.mainPick, "main pick").toBeGreaterThanOrEqual(BARS.mainPick);
    expect.soft(f.summaryRight, "summary title and description").toBeGreaterThanOrEqual(BARS.summaryRight);
    expect.soft(f.ioRight, "inputs and outputs").toBeGreaterThanOrEqual(BARS.ioRight);
    expect.soft(f.entryRequiredRecall, "required-variable recall per experiment").toBeGreaterThanOrEqual(BARS.entryRequiredRecall);
    // Twenty-odd analyses: seconds alone, more on a machine shared with other suites.
  }, 120_000);
});
