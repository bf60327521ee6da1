import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { analyzeRepository } from "./analyze.ts";
import type { AnalyzerResult } from "./model.ts";

// The worker thread is an implementation detail: the result must not depend on it.

const FIXTURES = join(import.meta.dirname, "../fixtures/golden");
const withoutTimings = ({ stats, ...rest }: AnalyzerResult) => ({ ...rest, stats: { files_scanned: stats.files_scanned, files_parsed: stats.files_parsed } });

describe("parallel analysis", () => {
  it.each(["mixed", "python-argparse", "notebook-papermill", "python-syntax-error"])("gives %s the same result in one thread and in two", async (name) => {
    const progress: string[] = [];
    const [one, two] = await Promise.all([
      analyzeRepository(join(FIXTURES, name, "repo"), { parallel: false }),
      analyzeRepository(join(FIXTURES, name, "repo"), { parallel: true, onProgress: (m) => progress.push(m) }),
    ]);
    expect(withoutTimings(two)).toEqual(withoutTimings(one));
    expect(progress.some((m) => m.startsWith("parallel analysis failed"))).toBe(false);
  });
});
