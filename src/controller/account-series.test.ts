import { describe, expect, it } from "vitest";
import { accountSeries } from "./account-series.ts";

describe("accountSeries", () => {
  it("keeps the largest values by account, sums the rest as other, and leaves zeros out", () => {
    const values = new Map([
      ["a", 1],
      ["b", 3],
      ["c", 0],
      ["d", 2],
      ["e", 0.5],
    ]);
    expect(accountSeries(values, 2)).toEqual([
      ["b", 3],
      ["d", 2],
      ["other", 1.5],
    ]);
    expect(accountSeries(values, 10)).toEqual([
      ["b", 3],
      ["d", 2],
      ["a", 1],
      ["e", 0.5],
    ]);
  });

  it("breaks ties by account id, and has at most max + 1 series however many accounts", () => {
    const many = new Map(Array.from({ length: 1000 }, (_, i) => [`acc-${String(i).padStart(4, "0")}`, 1]));
    const series = accountSeries(many, 20);
    expect(series).toHaveLength(21);
    expect(series[0]).toEqual(["acc-0000", 1]);
    expect(series[20]).toEqual(["other", 980]);
    expect(accountSeries(new Map(), 20)).toEqual([]);
  });
});
