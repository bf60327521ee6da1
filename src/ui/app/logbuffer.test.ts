import { describe, expect, it } from "vitest";
import { parseAnsi } from "./ansi.ts";
import { LogBuffer } from "./logbuffer.ts";

describe("LogBuffer", () => {
  it("keeps the newest cap lines, each seq once", () => {
    const b = new LogBuffer(3);
    for (let seq = 1; seq <= 10; seq++) b.add({ seq, ts: "", stream: seq % 2 ? "stdout" : "stderr", line: `l${seq}` });
    expect(b.add({ seq: 9, ts: "", stream: "stdout", line: "again" })).toBe(false);
    expect(b.size).toBe(3);
    expect(b.dropped).toBe(7);
    expect(b.duplicates).toBe(1);
    expect(b.last(10, () => true).map((l) => l.seq)).toEqual([8, 9, 10]);
    expect(b.last(10, (l) => l.stream === "stderr").map((l) => l.seq)).toEqual([8, 10]);
    expect(b.lastSeq).toBe(10);
  });
});

describe("parseAnsi", () => {
  it("turns SGR codes into classes and drops other escapes", () => {
    expect(parseAnsi("a\u001b[1;31mred\u001b[0m b\u001b[2K\u001b]0;title\u0007c")).toEqual([
      { text: "a", classes: [] },
      { text: "red", classes: ["f31", "a-b"] },
      { text: " b", classes: [] },
      { text: "c", classes: [] },
    ]);
  });
  it("skips 256-colour and true-colour arguments", () => {
    expect(parseAnsi("\u001b[38;5;196;4mx\u001b[38;2;1;2;3my")).toEqual([
      { text: "x", classes: ["a-u"] },
      { text: "y", classes: ["a-u"] },
    ]);
  });
});
