import { describe, expect, it } from "vitest";
import { renderDetail } from "./errors.ts";
import { ago, duration, fields, table } from "./output.ts";

describe("table", () => {
  it("aligns columns two spaces apart, upper-cases headers, shows nothing as -, does not pad the last column", () => {
    const rows = [
      { id: "a", status: "running", exit: null },
      { id: "bbbb", status: "failed", exit: 3 },
    ];
    expect(
      table(rows, [
        ["id", (r) => r.id],
        ["status", (r) => r.status],
        ["exit", (r) => r.exit],
      ]),
    ).toBe("ID    STATUS   EXIT\na     running  -\nbbbb  failed   3\n");
  });

  it("keeps a row on one line and measures colours as nothing", () => {
    const out = table(
      [
        { a: "x\ny", b: "\x1b[31mred\x1b[0m" },
        { a: "long value", b: "z" },
      ],
      [
        ["b", (r) => r.b],
        ["a", (r) => r.a],
      ],
    );
    expect(out.split("\n")).toEqual(["B    A", "\x1b[31mred\x1b[0m  x y", "z    long value", ""]);
  });

  it("lists and empty values", () => {
    expect(
      table(
        [{ s: ["a", "b"], e: [] }],
        [
          ["scopes", (r) => r.s],
          ["empty", (r) => r.e],
        ],
      ),
    ).toBe("SCOPES  EMPTY\na,b     -\n");
  });

  it("only headers when there are no rows", () => {
    expect(table([], [["id", () => 1]])).toBe("ID\n");
  });
});

describe("fields", () => {
  it("one aligned `key: value` line each", () => {
    expect(
      fields([
        ["id", "x"],
        ["exit code", null],
      ]),
    ).toBe("id:        x\nexit code: -\n");
  });
});

describe("renderDetail", () => {
  it("a 422 list as one `loc: msg` line per item, without the leading body", () => {
    const detail = [
      { loc: ["body", "parameters", "epochs"], msg: "should be an integer", type: "invalid" },
      { loc: ["query", "limit"], msg: "Too big", type: "too_big" },
      { loc: [], msg: "missing environment variables: API_TOKEN", type: "value_error" },
    ];
    expect(renderDetail(detail)).toBe("  parameters.epochs: should be an integer\n  query.limit: Too big\n  missing environment variables: API_TOKEN");
  });
  it("a string as it is", () => {
    expect(renderDetail("Repository not found")).toBe("Repository not found");
  });
});

describe("ago and duration", () => {
  const now = Date.parse("2026-01-01T12:00:00Z");
  it.each([
    ["2026-01-01T11:59:55Z", "5s ago"],
    ["2026-01-01T11:57:00Z", "3m ago"],
    ["2026-01-01T10:00:00Z", "2h ago"],
    ["2025-12-28T12:00:00Z", "4d ago"],
  ])("%s is %s", (iso, text) => expect(ago(iso, now)).toBe(text));
  it.each<[number | null, string]>([
    [null, "-"],
    [42.4, "42s"],
    [185, "3m05s"],
    [3720, "1h02m"],
  ])("%s s is %s", (s, text) => expect(duration(s)).toBe(text));
});
