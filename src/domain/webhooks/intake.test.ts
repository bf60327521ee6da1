import { describe, expect, it } from "vitest";
import { storableJson } from "./intake.ts";

describe("storableJson", () => {
  it.each([
    { name: "NUL in a value", input: { a: "x\u0000y" }, stored: { a: "xy" } },
    { name: "a backslash before u0000 is text, kept", input: { p: "C:\\u0000" }, stored: { p: "C:\\u0000" } },
    { name: "an unpaired surrogate is replaced", input: { s: "x\ud800y" }, stored: { s: "x\ufffdy" } },
    { name: "NUL in a key", input: { "k\u0000ey": 1 }, stored: { key: 1 } },
    { name: "nested, in arrays", input: { a: [{ b: "\u0000" }, "\udc00"] }, stored: { a: [{ b: "" }, "\ufffd"] } },
    { name: "a paired surrogate (an emoji) is kept", input: { e: "\ud83d\ude00" }, stored: { e: "\ud83d\ude00" } },
  ])("$name", ({ input, stored }) => {
    const text = JSON.stringify(input, storableJson);
    expect(JSON.parse(text)).toEqual(stored);
  });
});
