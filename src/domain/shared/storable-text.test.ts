import { describe, expect, it } from "vitest";
import { DomainValidationError } from "../errors.ts";
import { assertStorableText, MAX_LOC_DEPTH, MAX_TEXT_ISSUES, rejectUnstorableText, textProblem, unstorableTextIssues } from "./storable-text.ts";

const NUL = { msg: "Value error, must not contain NUL characters (U+0000)", type: "value_error" };
const SURROGATE = { msg: "Value error, must not contain unpaired UTF-16 surrogates", type: "value_error" };

describe("textProblem", () => {
  it.each([
    ["", null],
    ["plain", null],
    ["tab\tnewline\n\u0001\u007f", null],
    ["\ufffd", null],
    ["\ud83d\ude00 a pair (emoji)", null],
    ["\uffff\ue000", null],
    ["\u0000", "nul"],
    ["a\u0000b", "nul"],
    ["trailing\u0000", "nul"],
    ["\ud800", "surrogate"],
    ["\udc00", "surrogate"],
    ["a\ud800b", "surrogate"],
    ["\ude00\ud83d", "surrogate"],
    ["\ud83d\ude00\ud83d", "surrogate"],
    ["\ud800\u0000", "nul"],
  ])("%j is %s", (s, expected) => {
    expect(textProblem(s)).toBe(expected);
  });
});

describe("unstorableTextIssues", () => {
  it("finds nothing in clean values of any shape", () => {
    expect(unstorableTextIssues({ a: ["x", 1, true, null, { b: "\ud83d\ude00" }], "k\u00e9y": 2 }, ["body"])).toEqual([]);
    for (const v of [undefined, null, 0, false, "ok", [], {}]) expect(unstorableTextIssues(v, ["body"])).toEqual([]);
  });

  it("reports the value itself at the prefix", () => {
    expect(unstorableTextIssues("a\u0000", ["body"])).toEqual([{ loc: ["body"], ...NUL }]);
  });

  it("reports array elements by index and object values by key", () => {
    expect(unstorableTextIssues({ command: ["echo", "a\u0000b"], name: "\ud800" }, ["body"])).toEqual([
      { loc: ["body", "command", 1], ...NUL },
      { loc: ["body", "name"], ...SURROGATE },
    ]);
  });

  it("reports an object key at [..., key, '[key]'], and its value separately", () => {
    expect(unstorableTextIssues({ parameters: { "a\u0000": 1, ok: "b\u0000", "\udfff": "\ud800" } }, ["body"])).toEqual([
      { loc: ["body", "parameters", "a\u0000", "[key]"], ...NUL },
      { loc: ["body", "parameters", "ok"], ...NUL },
      { loc: ["body", "parameters", "\udfff", "[key]"], ...SURROGATE },
      { loc: ["body", "parameters", "\udfff"], ...SURROGATE },
    ]);
  });

  it("reports a flat object's keys and values (the shape of a query, checked without the walk when clean)", () => {
    expect(unstorableTextIssues({ "a\u0000": "1", b: "\ud800", c: 3 }, ["query"])).toEqual([
      { loc: ["query", "a\u0000", "[key]"], ...NUL },
      { loc: ["query", "b"], ...SURROGATE },
    ]);
    expect(unstorableTextIssues({ limit: "20", cursor: "abc", n: 1, none: null }, ["query"])).toEqual([]);
  });

  it("reports in document order, at any depth", () => {
    const input = { a: [{ b: ["x", "\u0000"] }, "\ud800"], c: { d: { e: "\u0000" } }, f: "\u0000" };
    expect(unstorableTextIssues(input, ["body"]).map((i) => i.loc)).toEqual([
      ["body", "a", 0, "b", 1],
      ["body", "a", 1],
      ["body", "c", "d", "e"],
      ["body", "f"],
    ]);
  });

  it("walks null-prototype objects (Koa's query) and a __proto__ key from JSON", () => {
    const query = Object.assign(Object.create(null) as object, { ref: "a\u0000", path: ["x", "\u0000"] });
    expect(unstorableTextIssues(query, ["query"]).map((i) => i.loc)).toEqual([
      ["query", "ref"],
      ["query", "path", 1],
    ]);
    expect(unstorableTextIssues(JSON.parse('{"__proto__": {"x": "\\u0000"}}'), ["body"]).map((i) => i.loc)).toEqual([["body", "__proto__", "x"]]);
  });

  it("survives nesting far deeper than the call stack, and reports a deep problem once, at its ancestor at the depth limit", () => {
    let deep: unknown = "\u0000";
    for (let i = 0; i < 200_000; i++) deep = ["\u0000", deep];
    const issues = unstorableTextIssues(deep, ["body"]);
    expect(issues.map((i) => i.loc.length)).toEqual([...Array.from({ length: MAX_LOC_DEPTH }, (_, i) => i + 2), MAX_LOC_DEPTH + 1]);
    expect(issues.at(-1)).toEqual({ loc: ["body", ...Array.from({ length: MAX_LOC_DEPTH }, () => 1)], ...NUL });
  });

  it("reports a key below the depth limit at that ancestor too", () => {
    let deep: unknown = { "k\u0000": 1 };
    for (let i = 0; i < MAX_LOC_DEPTH; i++) deep = { a: deep };
    expect(unstorableTextIssues(deep, ["body"])).toEqual([{ loc: ["body", ...Array.from({ length: MAX_LOC_DEPTH }, () => "a")], ...NUL }]);
  });

  it("lists at most MAX_TEXT_ISSUES problems, the first ones", () => {
    const issues = unstorableTextIssues(
      Array.from({ length: 100_000 }, () => "\u0000"),
      ["body"],
    );
    expect(MAX_TEXT_ISSUES).toBe(100);
    expect(issues.map((i) => i.loc)).toEqual(Array.from({ length: MAX_TEXT_ISSUES }, (_, i) => ["body", i]));
  });
});

describe("rejectUnstorableText", () => {
  it("passes clean parts", () => {
    expect(() => rejectUnstorableText({ path: { commit_hash: "main" }, body: { command: ["echo", "hi"] } })).not.toThrow();
  });

  it("throws one 422 with every issue of every part, at its loc", () => {
    let thrown: unknown;
    try {
      rejectUnstorableText({ path: { commit_hash: "ma\u0000in" }, body: { command: ["echo", "a\u0000b"], parameters: { "\ud800": 1 } } });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(DomainValidationError);
    expect((thrown as DomainValidationError).issues).toEqual([
      { loc: ["path", "commit_hash"], ...NUL },
      { loc: ["body", "command", 1], ...NUL },
      { loc: ["body", "parameters", "\ud800", "[key]"], ...SURROGATE },
    ]);
  });
});

describe("assertStorableText", () => {
  it("throws a plain error naming the places", () => {
    expect(() => assertStorableText({ command: ["a", "\u0000"] }, "the run's spec")).toThrow(
      /the run's spec holds text that cannot be stored, at \["command",1\]/,
    );
    expect(() => assertStorableText({ command: ["a"] }, "the run's spec")).not.toThrow();
  });
});
