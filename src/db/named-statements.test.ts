import { describe, expect, it } from "vitest";
import { statementMarker, statementName } from "./named-statements.ts";

describe("statementName", () => {
  it.each([
    ["/* statement: repositories_page */ select 1", "repositories_page"],
    [`${statementMarker("a1_b")}select 1`, "a1_b"],
    ["select 1", null],
    ["/* a comment */ select 1", null],
    [" /* statement: leading_space */ select 1", null],
    ["/* statement: Upper */ select 1", null],
    ["/* statement: semi;colon */ select 1", null],
    ["select 1 /* statement: trailing */", null],
  ])("%j -> %j", (text, name) => {
    expect(statementName(text)).toBe(name);
  });

  it("refuses to make a marker of a name it would not read back", () => {
    expect(() => statementMarker("drop table x")).toThrow(/not a statement name/);
    expect(() => statementMarker("x".repeat(64))).toThrow(/not a statement name/);
  });
});
