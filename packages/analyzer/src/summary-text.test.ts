import { describe, expect, it } from "vitest";
import { formatCount, summaryText, type SummaryFacts } from "./summary-text.ts";

const base: SummaryFacts = {
  language: "en",
  title: "codeplane-demo",
  description: "A tiny project that trains a classifier on MNIST",
  languages: [
    { name: "Python", files: 12, lines: 1234, bytes: 40_000 },
    { name: "Markdown", files: 2, lines: 300, bytes: 9_000 },
    { name: "Shell", files: 2, lines: 40, bytes: 800 },
    { name: "Makefile", files: 1, lines: 20, bytes: 400 },
  ],
  fileCount: 20,
  empty: false,
  experimentCount: 3,
  entryPoint: "python3 train.py",
  frameworks: ["NumPy", "PyTorch"],
  license: "MIT",
  truncated: false,
};

describe("summaryText (English)", () => {
  it.each<[string, Partial<SummaryFacts>, string]>([
    [
      "everything known",
      {},
      'codeplane-demo is a Python project (12 Python files, 1,234 lines; also Shell and Makefile). Its README says: "A tiny project that trains a classifier on MNIST." It has 3 runnable experiments; the most likely entry point is `python3 train.py`. It uses NumPy and PyTorch, and is licensed under MIT.',
    ],
    [
      "no README, one experiment, no frameworks",
      { title: null, description: null, experimentCount: 1, frameworks: [], languages: [{ name: "Go", files: 1, lines: 1, bytes: 10 }] },
      "This repository is a Go project (1 Go file, 1 line). It has 1 runnable experiment: `python3 train.py`. It is licensed under MIT.",
    ],
    [
      "nothing runnable, no licence, many frameworks",
      { experimentCount: 0, entryPoint: null, license: null, frameworks: ["A", "B", "C", "D", "E", "F", "G"], description: "Ends with a question?" },
      'codeplane-demo is a Python project (12 Python files, 1,234 lines; also Shell and Makefile). Its README says: "Ends with a question?" No runnable entry point was found. It uses A, B, C, D, E and 2 more.',
    ],
    [
      "no source code",
      {
        title: "A very long README title that is a sentence rather than a name of anything",
        languages: [{ name: "Markdown", files: 3, lines: 10, bytes: 100 }],
        fileCount: 5,
        experimentCount: 0,
        entryPoint: null,
        frameworks: [],
        license: null,
        description: null,
      },
      "This repository holds 5 files, mostly Markdown, and no source code in a language the analyzer recognises. No runnable entry point was found.",
    ],
    [
      "a cut-short analysis",
      { truncated: true, frameworks: [], license: null, description: null },
      "codeplane-demo is a Python project (12 Python files, 1,234 lines; also Shell and Makefile). It has at least 3 runnable experiments (the analysis stopped before the end); the most likely entry point is `python3 train.py`.",
    ],
    [
      "a Makefile is not what a project is written in while there is other code",
      {
        title: null,
        description: null,
        frameworks: ["Flask"],
        languages: [
          { name: "Makefile", files: 2, lines: 90, bytes: 10 },
          { name: "Jupyter Notebook", files: 3, lines: 80, bytes: 10 },
          { name: "JSON", files: 9, lines: 70, bytes: 10 },
        ],
      },
      "This repository is a Jupyter Notebook project (3 notebooks, 80 lines; also Makefile). It has 3 runnable experiments; the most likely entry point is `python3 train.py`. It uses Flask and is licensed under MIT.",
    ],
    [
      "unless there is nothing else",
      { title: null, description: null, license: null, frameworks: [], languages: [{ name: "Makefile", files: 1, lines: 9, bytes: 10 }] },
      "This repository is a Makefile project (1 Makefile, 9 lines). It has 3 runnable experiments; the most likely entry point is `python3 train.py`.",
    ],
    ["empty", { empty: true }, "The repository is empty."],
  ])("%s", (_, overrides, text) => expect(summaryText({ ...base, ...overrides })).toBe(text));
});

describe("summaryText (Japanese)", () => {
  const ja: SummaryFacts = { ...base, language: "ja", description: "MNIST で分類器を学習する小さなプロジェクト" };
  it.each<[string, Partial<SummaryFacts>, string]>([
    [
      "everything known",
      {},
      "codeplane-demo は Python のプロジェクトです（Python ファイル 12 個、1,234 行。ほかに Shell、Makefile も含みます）。README には「MNIST で分類器を学習する小さなプロジェクト」と書かれています。実行可能なエクスペリメントが 3 件あり、最も有力なエントリーポイントは `python3 train.py` です。NumPy、PyTorch を使用しており、ライセンスは MIT です。",
    ],
    [
      "no README title, one experiment, licence only",
      { title: null, description: null, experimentCount: 1, frameworks: [], languages: [{ name: "Go", files: 1, lines: 1, bytes: 10 }] },
      "このリポジトリは Go のプロジェクトです（Go ファイル 1 個、1 行）。実行可能なエクスペリメントは 1 件で、エントリーポイントは `python3 train.py` です。ライセンスは MIT です。",
    ],
    [
      "nothing runnable, frameworks only",
      { title: "データ分析", experimentCount: 0, entryPoint: null, license: null, description: null, frameworks: ["A", "B", "C", "D", "E", "F"] },
      "データ分析は Python のプロジェクトです（Python ファイル 12 個、1,234 行。ほかに Shell、Makefile も含みます）。実行できるエントリーポイントは見つかりませんでした。A、B、C、D、E ほか 1 件を使用しています。",
    ],
    [
      "no source code, cut short",
      { title: null, languages: [], fileCount: 2, experimentCount: 0, entryPoint: null, frameworks: [], license: null, description: null, truncated: true },
      "このリポジトリにはファイルが 2 個ありますが、解析できる言語のソースコードは見つかりませんでした。実行できるエントリーポイントは見つかりませんでした（解析は途中で打ち切られたため、ほかにもある可能性があります）。",
    ],
    ["empty", { empty: true }, "リポジトリは空です。"],
  ])("%s", (_, overrides, text) => expect(summaryText({ ...ja, ...overrides })).toBe(text));
});

describe("formatCount", () => {
  it.each([
    [0, "0"],
    [999, "999"],
    [1000, "1,000"],
    [1234567, "1,234,567"],
  ])("%d → %s", (n, s) => expect(formatCount(n)).toBe(s));
});
