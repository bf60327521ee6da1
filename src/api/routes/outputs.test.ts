import { describe, expect, it } from "vitest";
import { contentDisposition, parseRange } from "./outputs.ts";

describe("ranges and downloads", () => {
  it("reads one byte range, ignores what it may ignore, and says when one cannot be served", () => {
    expect(parseRange(undefined, 100)).toBeNull();
    expect(parseRange("bytes=0-9", 100)).toEqual({ start: 0, end: 9 });
    expect(parseRange("bytes=90-", 100)).toEqual({ start: 90 });
    expect(parseRange("bytes=-10", 100)).toEqual({ start: 90 });
    expect(parseRange("bytes=-1000", 100)).toEqual({ start: 0 });
    expect(parseRange("bytes=100-", 100)).toBe("unsatisfiable");
    expect(parseRange("bytes=-0", 100)).toBe("unsatisfiable");
    expect(parseRange("bytes=0-1,5-6", 100)).toBeNull();
    expect(parseRange("bytes=9-2", 100)).toBeNull();
    expect(parseRange("items=0-1", 100)).toBeNull();
  });

  it("names the file for a download, safely", () => {
    expect(contentDisposition("plots/a.png")).toBe(`attachment; filename="a.png"; filename*=UTF-8''a.png`);
    expect(contentDisposition('x/"é".txt')).toBe(`attachment; filename="___.txt"; filename*=UTF-8''%22%C3%A9%22.txt`);
  });
});
