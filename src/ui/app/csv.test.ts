import { describe, expect, it } from "vitest";
import { parseDelimited } from "./csv.ts";

describe("delimited text for an output's preview", () => {
  it("reads quoted fields with commas, doubled quotes and line breaks, CRLF and LF lines", () => {
    const text = 'name,note\r\n"a, b","say ""hi"""\n"two\nlines",x\n';
    expect(parseDelimited(text, ",", 10)).toEqual({
      rows: [
        ["name", "note"],
        ["a, b", 'say "hi"'],
        ["two\nlines", "x"],
      ],
      truncated: false,
    });
  });

  it("keeps a last line without a line break, and empty fields", () => {
    expect(parseDelimited("a,,c\n1,2,", ",", 10)).toEqual({
      rows: [
        ["a", "", "c"],
        ["1", "2", ""],
      ],
      truncated: false,
    });
  });

  it("reads tabs", () => {
    expect(parseDelimited("a\tb\n1\t2\n", "\t", 10).rows).toEqual([
      ["a", "b"],
      ["1", "2"],
    ]);
  });

  it("keeps the first rows and says more follow", () => {
    const text = Array.from({ length: 50 }, (_, i) => `${i},${i * 2}`).join("\n");
    const t = parseDelimited(text, ",", 5);
    expect(t.rows).toEqual([
      ["0", "0"],
      ["1", "2"],
      ["2", "4"],
      ["3", "6"],
      ["4", "8"],
    ]);
    expect(t.truncated).toBe(true);
    expect(parseDelimited("a\nb\n", ",", 2).truncated).toBe(false);
  });

  it("drops the partial last line of a text cut at the file's start", () => {
    expect(parseDelimited("a,b\n1,2\n3,", ",", 10, true)).toEqual({
      rows: [
        ["a", "b"],
        ["1", "2"],
      ],
      truncated: true,
    });
    expect(parseDelimited('a\n"open\nquote', ",", 10, true).rows).toEqual([["a"]]);
  });
});
