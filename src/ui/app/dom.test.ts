import { describe, expect, it } from "vitest";
import { fmtAgo } from "./dom.ts";

describe("fmtAgo (the dashboard's relative times)", () => {
  const now = Date.parse("2026-11-27T12:00:00Z");
  const before = (seconds: number) => new Date(now - seconds * 1000).toISOString();
  const DAY = 86_400;
  it.each([
    [0, "just now"],
    [44, "just now"],
    [-30, "just now"], // a clock a little ahead of the server's never says "in the future"
    [90, "2 min ago"],
    [3599, "60 min ago"],
    [3 * 3600, "3 h ago"],
    [2 * DAY, "2 d ago"],
    [44 * DAY, "44 d ago"],
    [45 * DAY, "1 mo ago"],
    [200 * DAY, "7 mo ago"],
    [547 * DAY, "18 mo ago"],
    [548 * DAY, "2 y ago"],
    [1108 * DAY, "3 y ago"],
  ])("%i s before now reads %s", (seconds, words) => {
    expect(fmtAgo(before(seconds), now)).toBe(words);
  });
});
