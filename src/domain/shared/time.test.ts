import { describe, expect, it } from "vitest";
import { iso, isoOrNull } from "./time.ts";

describe("iso", () => {
  it.each([
    ["1970-01-01T00:00:00.000Z"],
    ["1970-01-01T00:00:00.001Z"],
    ["1999-12-31T23:59:59.999Z"],
    ["2000-02-29T12:00:00.500Z"],
    ["2024-02-29T23:59:59.999Z"],
    ["2026-11-23T03:58:28.123Z"],
    ["2100-03-01T00:00:00.000Z"],
    ["9999-12-31T23:59:59.999Z"],
  ])("writes %s as toISOString does", (text) => {
    expect(iso(new Date(text))).toBe(text);
  });

  it.each([[-1], [-62_135_596_800_000], [253_402_300_800_000], [8.64e15]])("leaves %d ms (outside 1970 to 9999) to toISOString", (ms) => {
    expect(iso(new Date(ms))).toBe(new Date(ms).toISOString());
  });

  it("throws on an invalid Date, as toISOString does", () => {
    expect(() => iso(new Date(Number.NaN))).toThrow(RangeError);
  });

  it("agrees with toISOString on 100,000 random instants", () => {
    let seed = 11;
    for (let i = 0; i < 100_000; i++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 1;
      const d = new Date(Math.floor((seed / 2 ** 31) * 253_402_300_800_000));
      expect(iso(d)).toBe(d.toISOString());
    }
  });

  it("isoOrNull keeps null", () => {
    expect(isoOrNull(null)).toBeNull();
    expect(isoOrNull(undefined)).toBeNull();
    expect(isoOrNull(new Date(0))).toBe("1970-01-01T00:00:00.000Z");
  });
});
