import { describe, expect, it } from "vitest";
import { nestsDeeperThan } from "./json-depth.ts";

const b = (s: string) => Buffer.from(s, "utf8");

describe("nestsDeeperThan", () => {
  it.each([
    { text: "{}", max: 1, deeper: false },
    { text: "[[]]", max: 1, deeper: true },
    { text: '{"a":{"b":[1,{"c":2}]}}', max: 4, deeper: false },
    { text: '{"a":{"b":[1,{"c":2}]}}', max: 3, deeper: true },
    // Brackets in strings, escaped quotes included, are text.
    { text: '{"s":"[[[[{{{{"}', max: 1, deeper: false },
    { text: '{"s":"\\"[[[["}', max: 1, deeper: false },
    { text: '{"s":"\\\\","t":[[1]]}', max: 2, deeper: true },
  ])("$text within $max: deeper $deeper", ({ text, max, deeper }) => {
    expect(nestsDeeperThan(b(text), max)).toBe(deeper);
  });

  it("scans 100,000 levels without recursion", () => {
    expect(nestsDeeperThan(b("[".repeat(100_000) + "]".repeat(100_000)), 100)).toBe(true);
  });
});
