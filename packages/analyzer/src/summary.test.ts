import { describe, expect, it } from "vitest";
import type { Experiment } from "./model.ts";
import { repoSummarySchema } from "./model.ts";
import { buildRepoSummary } from "./summary.ts";
import { memoryContext } from "./testing/memory-context.ts";

const context = (files: Record<string, string>) => memoryContext(files);

const experiment = (id: string, path: string, entry: string): Experiment => ({
  id,
  title: path,
  description: null,
  entry_point: entry,
  command: entry.split(" "),
  language: "python",
  kind: "python-script",
  path,
  inputs: [],
  outputs: [],
  parameters: [],
});

const skipped = { binary: 1, too_large: 0, symlinks: 2, unparsable: 0 };

describe("buildRepoSummary", () => {
  const files = {
    "README.md": "# mnist-demo\n\n[![CI](b.svg)](ci)\n\nTrains a small CNN on [MNIST](http://yann.lecun.com).\n\nRun `python3 train.py`.\n",
    LICENSE: "Permission is hereby granted, free of charge, to any person obtaining a copy of this software",
    "requirements.txt": "torch\nnumpy\n",
    "train.py": "import torch\nprint(1)\n",
    "scripts/eval.py": "print(2)\n",
    "run.sh": "echo\n",
  };
  const experiments = [
    experiment("python:scripts/eval.py", "scripts/eval.py", "python3 scripts/eval.py"),
    experiment("python:train.py", "train.py", "python3 train.py"),
  ];

  it("puts the facts together and ranks the entry point the README names", () => {
    const summary = buildRepoSummary({ ctx: context(files), language: "en", frameworks: ["PyTorch", "Click"], experiments, truncated: false, skipped });
    expect(repoSummarySchema.parse(summary)).toEqual(summary);
    expect(summary).toEqual({
      language: "en",
      text: 'mnist-demo is a Python project (2 Python files, 3 lines; also Shell). Its README says: "Trains a small CNN on MNIST." It has 2 runnable experiments; the most likely entry point is `python3 train.py`. It uses Click, NumPy and PyTorch, and is licensed under MIT.',
      title: "mnist-demo",
      description: "Trains a small CNN on MNIST.",
      languages: [
        { name: "Markdown", files: 1, lines: 7, bytes: Buffer.byteLength(files["README.md"]) },
        { name: "Python", files: 2, lines: 3, bytes: 31 },
        { name: "Shell", files: 1, lines: 1, bytes: 5 },
      ],
      file_count: 6,
      total_bytes: Object.values(files).reduce((n, t) => n + Buffer.byteLength(t), 0),
      license: "MIT",
      manifests: ["requirements.txt"],
      frameworks: ["Click", "NumPy", "PyTorch"],
      truncated: false,
      skipped,
    });
  });

  it("writes Japanese when asked", () => {
    const summary = buildRepoSummary({ ctx: context(files), language: "ja", frameworks: [], experiments, truncated: true, skipped });
    expect(summary.language).toBe("ja");
    expect(summary.truncated).toBe(true);
    expect(summary.text).toBe(
      "mnist-demo は Python のプロジェクトです（Python ファイル 2 個、3 行。ほかに Shell も含みます）。README には「Trains a small CNN on MNIST.」と書かれています。実行可能なエクスペリメントが 2 件あり（解析は途中で打ち切られたため、ほかにもある可能性があります）、最も有力なエントリーポイントは `python3 train.py` です。NumPy、PyTorch を使用しており、ライセンスは MIT です。",
    );
  });

  it("counts files by name and size when out of time, and says the analysis was cut short", () => {
    const ctx = { ...context(files), outOfTime: () => true };
    const summary = buildRepoSummary({ ctx, language: "en", frameworks: [], experiments, truncated: false, skipped });
    expect(summary.truncated).toBe(true);
    expect(summary.languages.find((l) => l.name === "Python")).toEqual({ name: "Python", files: 2, lines: 0, bytes: 31 });
    expect(summary.text).toContain("It has at least 2 runnable experiments (the analysis stopped before the end)");
  });

  it("says an empty repository is empty", () => {
    const summary = buildRepoSummary({ ctx: context({ ".gitkeep": "" }), language: "en", frameworks: [], experiments: [], truncated: false, skipped });
    expect(summary).toMatchObject({
      text: "The repository is empty.",
      title: null,
      description: null,
      languages: [],
      file_count: 1,
      total_bytes: 0,
      license: null,
      manifests: [],
      frameworks: [],
    });
    expect(buildRepoSummary({ ctx: context({}), language: "ja", frameworks: [], experiments: [], truncated: false, skipped }).text).toBe(
      "リポジトリは空です。",
    );
  });
});
