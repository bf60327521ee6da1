import { beforeAll, describe, expect, it } from "vitest";
import type { Parameter } from "../../model.ts";
import { Syntax } from "../../syntax.ts";
import { detectNotebook } from "./detector.ts";
import { memoryContext } from "../../testing/memory-context.ts";

let syntax: Syntax;
beforeAll(async () => {
  syntax = await Syntax.load();
});

const context = (files: Record<string, string | null>, outOfTime = () => false) => memoryContext(files, { syntax, outOfTime });

interface CellSpec {
  type?: "code" | "markdown" | "raw";
  source: string;
  tags?: string[];
}

/** A notebook as Jupyter writes it: one JSON string per source line, indented. */
function notebook(cells: CellSpec[], language: string | null = "python"): string {
  const metadata = language ? { kernelspec: { name: language, display_name: language, language } } : {};
  return JSON.stringify(
    {
      cells: cells.map((c) => ({
        cell_type: c.type ?? "code",
        metadata: c.tags ? { tags: c.tags } : {},
        source: c.source.split(/(?<=\n)/),
        ...((c.type ?? "code") === "code" && { outputs: [], execution_count: null }),
      })),
      metadata,
      nbformat: 4,
      nbformat_minor: 5,
    },
    null,
    1,
  );
}

const param = (p: Partial<Parameter> & { name: string }): Parameter => ({
  value: null,
  category: "string",
  cli_option: `-p ${p.name}`,
  choices: null,
  description: null,
  required: false,
  ...p,
});

describe("notebooks", () => {
  it("reads the parameters cell", () => {
    const nb = notebook([
      { type: "markdown", source: "Intro text\n## Sales report ##\nWeekly numbers.\n" },
      { source: "import pandas as pd" },
      {
        source: [
          "# Parameters",
          'data_path = "data/sales.csv"  # where the sales are',
          "weeks = 4",
          "rate: float = 0.5",
          "verbose = False # print more",
          "limit = None",
          "ratio = -1e-2",
          'columns = ["a"]',
          "seed = int(3)",
          "a = b = 1",
          "%time x = 1",
          "weeks = 5",
        ].join("\n"),
        tags: ["injected", "parameters"],
      },
      { source: "df = pd.read_csv(data_path)\ndf.to_parquet('out/sales.parquet')" },
    ]);
    const [e] = detectNotebook(context({ "reports/sales.ipynb": nb })).experiments;
    expect(e).toEqual({
      id: "notebook:reports/sales.ipynb",
      title: "Sales report",
      description: "Intro text\nWeekly numbers.",
      entry_point: "papermill reports/sales.ipynb reports/sales.output.ipynb --stdout-file /dev/stdout --stderr-file /dev/stderr",
      command: ["papermill", "reports/sales.ipynb", "reports/sales.output.ipynb", "--stdout-file", "/dev/stdout", "--stderr-file", "/dev/stderr"],
      language: "python",
      kind: "notebook",
      path: "reports/sales.ipynb",
      inputs: ["data/sales.csv"],
      outputs: ["out/sales.parquet", "reports/sales.output.ipynb"],
      parameters: [
        param({ name: "data_path", value: "data/sales.csv", description: "where the sales are" }),
        param({ name: "weeks", value: 5, category: "integer" }),
        param({ name: "rate", value: 0.5, category: "number" }),
        param({ name: "verbose", value: "False", choices: ["True", "False"], description: "print more" }),
        param({ name: "limit" }),
        param({ name: "ratio", value: -0.01, category: "number" }),
      ],
    });
  });

  it.each([
    ["no markdown", [{ source: "x = 1" }], "plain.ipynb"],
    ["markdown without a heading", [{ type: "markdown" as const, source: "Some notes" }], "plain.ipynb"],
    [
      "heading in a later markdown cell",
      [
        { type: "markdown" as const, source: "notes" },
        { type: "markdown" as const, source: "# Later" },
      ],
      "plain.ipynb",
    ],
    ["first heading", [{ type: "markdown" as const, source: "#   Title  \n# Second" }], "Title"],
  ])("titles: %s", (_, cells, title) => {
    const [e] = detectNotebook(context({ "plain.ipynb": notebook(cells) })).experiments;
    expect(e!.title).toBe(title);
    expect(e!.parameters).toEqual([]);
  });

  it("skips what is not a readable notebook and keeps going", () => {
    const good = notebook([{ source: "x = 1", tags: ["parameters"] }]);
    const out = detectNotebook(
      context({
        "a.ipynb": '{"cells": [',
        "b.ipynb": "[]",
        "c.ipynb": null,
        "d.ipynb": '{"cells": "nope"}',
        "e.ipynb": good,
        "f.json": good,
        "my notes.ipynb": good,
      }),
    );
    expect(out.experiments.map((e) => e.id)).toEqual(["notebook:e.ipynb"]);
  });

  it("does not parse another language's parameters as Python", () => {
    const nb = notebook([{ source: 'alpha <- 0.1\nname = "x"', tags: ["parameters"] }], "R");
    const [e] = detectNotebook(context({ "r.ipynb": nb })).experiments;
    expect([e!.language, e!.parameters]).toEqual(["r", []]);
  });

  it("calls python3 kernels python", () => {
    const [e] = detectNotebook(context({ "p.ipynb": notebook([{ source: "n = 1", tags: ["parameters"] }], "Python3") })).experiments;
    expect([e!.language, e!.parameters.length]).toEqual(["python", 1]);
  });

  it("defaults the language to python and reads nbformat 3 worksheets", () => {
    const v3 = JSON.stringify({
      metadata: {},
      nbformat: 3,
      worksheets: [
        {
          cells: [
            { cell_type: "heading", level: 1, source: ["Old notebook"] },
            { cell_type: "code", input: ["n = 3"], metadata: { tags: ["parameters"] } },
          ],
        },
      ],
    });
    const [e] = detectNotebook(context({ "old.ipynb": v3 })).experiments;
    expect([e!.language, e!.title, e!.parameters]).toEqual(["python", "Old notebook", [param({ name: "n", value: 3, category: "integer" })]]);
  });

  it("leaves out a papermill result committed next to its notebook", () => {
    const nb = notebook([{ source: "x = 1" }]);
    const out = detectNotebook(context({ "a.ipynb": nb, "a.output.ipynb": nb, "b.output.ipynb": nb }));
    expect(out.experiments.map((e) => e.id)).toEqual(["notebook:a.ipynb", "notebook:b.output.ipynb"]);
  });

  it("reports environment variables at their line in the file, and the libraries imported", () => {
    const nb = notebook([
      { source: "import os\nimport torch\n!pip install x\n%%capture" },
      { source: "%%bash\necho $HOME" },
      { source: 'key = os.environ["API_KEY"]\nregion = os.getenv("REGION", "eu")' },
    ]);
    const out = detectNotebook(context({ "n.ipynb": nb, "tests/t.ipynb": nb }));
    const lines = nb.split("\n");
    const lineOf = (s: string) => lines.findIndex((l) => l.includes(s)) + 1;
    expect(out.envVars).toEqual([
      { name: "API_KEY", path: "n.ipynb", line: lineOf("API_KEY"), required: true },
      { name: "REGION", path: "n.ipynb", line: lineOf("REGION"), required: false },
    ]);
    expect(out.frameworks).toEqual(["PyTorch"]);
  });

  it("stops when the time budget is spent", () => {
    const nb = notebook([{ source: "x = 1" }]);
    expect(detectNotebook(context({ "a.ipynb": nb }, () => true)).experiments).toEqual([]);
  });
});
