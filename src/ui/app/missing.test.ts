import { describe, expect, it } from "vitest";
import { missingFor } from "./missing.ts";

describe("missingFor", () => {
  it.each<[string, string[] | undefined, string[] | null, string[]]>([
    ["its own missing ones only", ["API_TOKEN", "DB_URL"], ["API_TOKEN", "OTHER"], ["API_TOKEN"]],
    ["none missing of its own", ["DB_URL"], ["API_TOKEN"], []],
    ["it needs none", [], ["API_TOKEN"], []],
    ["an older analysis: every missing one", undefined, ["A", "B"], ["A", "B"]],
    ["all configured", ["A"], [], []],
    ["no result yet", ["A"], null, []],
  ])("%s", (_, required, missing, want) =>
    expect(missingFor({ ...(required && { required_env_vars: required }) }, { env_vars: missing && { missing_env_vars: missing } })).toEqual(want),
  );
});
