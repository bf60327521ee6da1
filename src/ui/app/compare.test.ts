import { describe, expect, it } from "vitest";
import { alignSeries, columnsOf, describeSeries, shownValue, sortRuns, type ComparedRun } from "./compare.ts";

const run = (id: string, parameters: Record<string, unknown>, final_metrics: Record<string, number>, created_at = "2026-01-01T00:00:00Z"): ComparedRun => ({
  run_id: id,
  status: "completed",
  created_at,
  parameters,
  final_metrics,
});

describe("comparing an experiment's runs", () => {
  const runs = [
    run("a", { lr: 0.1, optimizer: "adam" }, { acc: 0.7, loss: 0.4 }),
    run("b", { lr: 0.01 }, { acc: 0.9 }),
    run("c", { lr: 1, optimizer: "sgd", layers: [1, 2] }, {}),
    run("d", { lr: "0.05" }, { acc: 0.8, loss: 0.2 }),
  ];

  it("has a column for every parameter and metric any run has, by name", () => {
    expect(columnsOf(runs)).toEqual({ parameters: ["layers", "lr", "optimizer"], metrics: ["acc", "loss"] });
    expect(shownValue([1, 2])).toBe("[1,2]");
    expect(shownValue(undefined)).toBe("");
    expect(shownValue(false)).toBe("false");
  });

  it("sorts numbers by value (numeric strings too), with runs missing the value last in both directions", () => {
    const ids = (r: ComparedRun[]) => r.map((x) => x.run_id);
    expect(ids(sortRuns(runs, { kind: "metric", name: "acc" }, "descending"))).toEqual(["b", "d", "a", "c"]);
    expect(ids(sortRuns(runs, { kind: "metric", name: "acc" }, "ascending"))).toEqual(["a", "d", "b", "c"]);
    expect(ids(sortRuns(runs, { kind: "metric", name: "loss" }, "ascending"))).toEqual(["d", "a", "b", "c"]);
    expect(ids(sortRuns(runs, { kind: "parameter", name: "lr" }, "ascending"))).toEqual(["b", "d", "a", "c"]);
    expect(ids(sortRuns(runs, { kind: "parameter", name: "optimizer" }, "descending"))).toEqual(["c", "a", "b", "d"]);
  });

  it("keeps the given order for ties", () => {
    const tied = [run("x", { k: 1 }, {}), run("y", { k: 1 }, {}), run("z", { k: 0 }, {})];
    expect(sortRuns(tied, { kind: "parameter", name: "k" }, "descending").map((r) => r.run_id)).toEqual(["x", "y", "z"]);
  });

  it("puts several series on one x axis, null where a series has no point", () => {
    expect(
      alignSeries([
        [
          { step: 0, value: 1 },
          { step: 2, value: 0.5 },
        ],
        [
          { step: 1, value: 3 },
          { step: 2, value: 2 },
          { step: 2, value: 1.5 },
        ],
      ]),
    ).toEqual([
      [0, 1, 2],
      [1, null, 0.5],
      [null, 3, 1.5],
    ]);
    expect(alignSeries([])).toEqual([[]]);
  });

  it("describes a series in words for its caption", () => {
    expect(
      describeSeries([
        { step: 0, value: 0.9 },
        { step: 1, value: 0.25 },
        { step: 4, value: 0.3333333333 },
      ]),
    ).toBe("3 points, steps 0–4; final 0.333333, lowest 0.25, highest 0.9");
    expect(describeSeries([{ step: 3, value: 2 }])).toBe("1 point, step 3; final 2, lowest 2, highest 2");
  });
});
