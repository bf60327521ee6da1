import { describe, expect, it } from "vitest";
import { z } from "zod";
import { toValidationIssues, validatePart } from "./validation.ts";

const schema = z.strictObject({
  name: z.string().min(2).max(5),
  count: z.coerce.number().int().min(1).max(10).optional(),
  kind: z.enum(["a", "b", "c"]).optional(),
  id: z.uuid().optional(),
  tags: z.array(z.string()).max(2).optional(),
  flag: z.boolean().optional(),
});

const issues = (input: unknown, loc: "body" | "query" = "body") => {
  const r = schema.safeParse(input);
  if (r.success) throw new Error("expected a failure");
  return toValidationIssues(r.error, loc, input);
};

describe("toValidationIssues", () => {
  it.each([
    [{}, { loc: ["body", "name"], msg: "Field required", type: "missing" }],
    [{ name: 1 }, { loc: ["body", "name"], msg: "Input should be a valid string", type: "string_type" }],
    [{ name: "a" }, { loc: ["body", "name"], msg: "String should have at least 2 characters", type: "string_too_short" }],
    [{ name: "abcdef" }, { loc: ["body", "name"], msg: "String should have at most 5 characters", type: "string_too_long" }],
    [
      { name: "ab", kind: "d" },
      { loc: ["body", "kind"], msg: "Input should be 'a', 'b' or 'c'", type: "enum" },
    ],
    [
      { name: "ab", id: "x" },
      { loc: ["body", "id"], msg: "Input should be a valid UUID", type: "uuid_parsing" },
    ],
    [
      { name: "ab", tags: ["a", "b", "c"] },
      { loc: ["body", "tags"], msg: "List should have at most 2 items", type: "too_long" },
    ],
    [
      { name: "ab", tags: [1] },
      { loc: ["body", "tags", 0], msg: "Input should be a valid string", type: "string_type" },
    ],
    [
      { name: "ab", flag: "yes" },
      { loc: ["body", "flag"], msg: "Input should be a valid boolean", type: "bool_type" },
    ],
    [
      { name: "ab", extra: 1 },
      { loc: ["body", "extra"], msg: "Extra inputs are not permitted", type: "extra_forbidden" },
    ],
    [
      { name: "ab", count: 11 },
      { loc: ["body", "count"], msg: "Input should be less than or equal to 10", type: "less_than_equal" },
    ],
    [
      { name: "ab", count: 0 },
      { loc: ["body", "count"], msg: "Input should be greater than or equal to 1", type: "greater_than_equal" },
    ],
  ])("maps %j", (input, expected) => {
    expect(issues(input)).toEqual([expected]);
  });

  it("reports a number that does not parse in a query string as int_parsing", () => {
    expect(issues({ name: "ab", count: "abc" }, "query")).toEqual([
      { loc: ["query", "count"], msg: "Input should be a valid integer, unable to parse string as an integer", type: "int_parsing" },
    ]);
  });

  it("reports a missing body as missing at ['body']", () => {
    expect(issues(undefined)).toEqual([{ loc: ["body"], msg: "Field required", type: "missing" }]);
  });

  it("reports one issue per unknown key, and all problems together", () => {
    expect(issues({ x: 1, y: 2 }).map((i) => [i.loc.join("."), i.type])).toEqual([
      ["body.name", "missing"],
      ["body.x", "extra_forbidden"],
      ["body.y", "extra_forbidden"],
    ]);
  });
});

describe("validatePart: the text rule before the schema", () => {
  const NUL = { msg: "Value error, must not contain NUL characters (U+0000)", type: "value_error" };
  const SURROGATE = { msg: "Value error, must not contain unpaired UTF-16 surrogates", type: "value_error" };
  const part = z.strictObject({
    name: z.string().regex(/^[a-z]+$/, "must be lowercase letters"),
    id: z.uuid().optional(),
    tags: z.array(z.string()).optional(),
    params: z.record(z.string().min(1), z.union([z.string(), z.number()])).optional(),
    free: z.unknown().optional(),
    flag: z.boolean().optional(),
  });
  const issues = (input: unknown, loc: "body" | "query" | "path" = "body") => {
    const r = validatePart(part, input, loc);
    if (r.success) throw new Error("expected a failure");
    return r.issues;
  };

  it("passes clean input through the schema", () => {
    expect(validatePart(part, { name: "ok", tags: ["\ud83d\ude00"] }, "body")).toEqual({ success: true, data: { name: "ok", tags: ["\ud83d\ude00"] } });
  });

  it("refuses NUL and lone surrogates where the schema alone would accept them", () => {
    expect(issues({ name: "ok", tags: ["a", "b\u0000"] })).toEqual([{ loc: ["body", "tags", 1], ...NUL }]);
    expect(issues({ name: "ok", free: { deep: ["\ud800"] } })).toEqual([{ loc: ["body", "free", "deep", 0], ...SURROGATE }]);
    expect(issues({ name: "ok", params: { "a\u0000": 1, b: "\udc00" } })).toEqual([
      { loc: ["body", "params", "a\u0000", "[key]"], ...NUL },
      { loc: ["body", "params", "b"], ...SURROGATE },
    ]);
  });

  it("reports only the text issue for a field the schema refuses too (pattern, uuid, unknown key)", () => {
    expect(issues({ name: "ab\u0000", id: "\u0000" }, "query")).toEqual([
      { loc: ["query", "name"], ...NUL },
      { loc: ["query", "id"], ...NUL },
    ]);
    expect(issues({ name: "ok", "x\u0000": 1 })).toEqual([{ loc: ["body", "x\u0000", "[key]"], ...NUL }]);
  });

  it("keeps every other field's issues", () => {
    expect(issues({ name: "\u0000", flag: "yes", extra: 1 })).toEqual([
      { loc: ["body", "name"], ...NUL },
      { loc: ["body", "flag"], msg: "Input should be a valid boolean", type: "bool_type" },
      { loc: ["body", "extra"], msg: "Extra inputs are not permitted", type: "extra_forbidden" },
    ]);
  });

  it("checks a part that is a bare string", () => {
    expect(issues("\u0000")).toEqual([{ loc: ["body"], ...NUL }]);
  });
});

describe("validatePart at scale", () => {
  it("answers a body of 50,000 unknown keys holding NUL in linear time", () => {
    const body = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`k${i}\u0000`, 1]));
    const started = performance.now();
    const r = validatePart(z.strictObject({}), body, "body");
    expect(performance.now() - started).toBeLessThan(5_000); // quadratic would take minutes
    expect(r.success).toBe(false);
    // The first 100 keys are refused as text (MAX_TEXT_ISSUES), the rest as unknown fields.
    if (!r.success) expect(r.issues.map((i) => i.type)).toEqual([...Array(100).fill("value_error"), ...Array(49_900).fill("extra_forbidden")]);
  });
});
