import { describe, expect, it } from "vitest";
import { checkKey, checkPrefix, keyProblem } from "./keys.ts";
import { InvalidKeyError } from "./object-store.ts";

describe("object keys", () => {
  it.each([
    ["envs/3f2a/env.tar.zst", null],
    ["a", null],
    ["_tmp-1.2/x_y", null],
    ["A/B/C/d.e-f_g", null],
    ["a".repeat(200), null],
    [`${Array(5).fill("a".repeat(200)).join("/")}/${"b".repeat(19)}`, null], // 1,024 characters
    ["", "must not be empty"],
    ["/etc/passwd", "must not start with '/'"],
    ["../x", "must not have '.' or '..' segments"],
    ["a/../../x", "must not have '.' or '..' segments"],
    ["a/./x", "must not have '.' or '..' segments"],
    ["a//b", "must not have an empty segment ('//' or a trailing '/')"],
    ["a/", "must not have an empty segment ('//' or a trailing '/')"],
    ["a/.hidden", "segments must be letters, digits, '.', '_' and '-', starting with a letter, a digit or '_'"],
    ["a/.tmp/x", "segments must be letters, digits, '.', '_' and '-', starting with a letter, a digit or '_'"],
    ["-rf", "segments must be letters, digits, '.', '_' and '-', starting with a letter, a digit or '_'"],
    ["a\0b", "segments must be letters, digits, '.', '_' and '-', starting with a letter, a digit or '_'"],
    ["a\\..\\b", "segments must be letters, digits, '.', '_' and '-', starting with a letter, a digit or '_'"],
    ["a b", "segments must be letters, digits, '.', '_' and '-', starting with a letter, a digit or '_'"],
    ["a~", "segments must be letters, digits, '.', '_' and '-', starting with a letter, a digit or '_'"],
    ["é", "segments must be letters, digits, '.', '_' and '-', starting with a letter, a digit or '_'"],
    ["a\nb", "segments must be letters, digits, '.', '_' and '-', starting with a letter, a digit or '_'"],
    ["a".repeat(201), "segments must be at most 200 characters"],
    [`${"a/".repeat(512)}a`, "must be at most 1024 characters"],
  ])("%j: %s", (key, problem) => {
    expect(keyProblem(key)).toBe(problem);
  });

  it("checkKey returns a valid key and throws InvalidKeyError naming the key otherwise", () => {
    expect(checkKey("envs/a")).toBe("envs/a");
    expect(() => checkKey("../a")).toThrow(InvalidKeyError);
    expect(() => checkKey("../a")).toThrow(/invalid object key "\.\.\/a": must not have/);
  });

  it.each([
    ["", true],
    ["envs/", true],
    ["envs/ab", true],
    ["envs", true],
    ["a-", true],
    ["a/b/", true],
    ["/", false],
    ["../", false],
    ["envs/.", false],
    ["envs//", false],
    ["a\0", false],
  ])("prefix %j is accepted: %s", (prefix, ok) => {
    if (ok) expect(checkPrefix(prefix)).toBe(prefix);
    else expect(() => checkPrefix(prefix)).toThrow(InvalidKeyError);
  });
});
