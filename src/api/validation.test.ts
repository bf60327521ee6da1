import { describe, expect, it } from "vitest";
import { z } from "zod";
import { toValidationIssues } from "./validation.ts";

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
    [{ name: "ab", kind: "d" }, { loc: ["body", "kind"], msg: "Input should be 'a', 'b' or 'c'", type: "enum" }],
    [{ name: "ab", id: "x" }, { loc: ["body", "id"], msg: "Input should be a valid UUID", type: "uuid_parsing" }],
    [{ name: "ab", tags: ["a", "b", "c"] }, { loc: ["body", "tags"], msg: "List should have at most 2 items", type: "too_long" }],
    [{ name: "ab", tags: [1] }, { loc: ["body", "tags", 0], msg: "Input should be a valid string", type: "string_type" }],
    [{ name: "ab", flag: "yes" }, { loc: ["body", "flag"], msg: "Input should be a valid boolean", type: "bool_type" }],
    [{ name: "ab", extra: 1 }, { loc: ["body", "extra"], msg: "Extra inputs are not permitted", type: "extra_forbidden" }],
    [{ name: "ab", count: 11 }, { loc: ["body", "count"], msg: "Input should be less than or equal to 10", type: "less_than_equal" }],
    [{ name: "ab", count: 0 }, { loc: ["body", "count"], msg: "Input should be greater than or equal to 1", type: "greater_than_equal" }],
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
