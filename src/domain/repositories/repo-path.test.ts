import { describe, expect, it } from "vitest";
import { DomainValidationError } from "../errors.ts";
import { normalizeRepoPath, validateRef } from "./repo-path.ts";

function issueOf(fn: () => unknown) {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainValidationError);
    return (err as DomainValidationError).issues[0]!;
  }
  throw new Error("expected a refusal");
}

describe("normalizeRepoPath", () => {
  it.each([
    ["", ""],
    [".", ""],
    ["./", ""],
    ["README.md", "README.md"],
    ["a/b/c", "a/b/c"],
    ["a/b/c/", "a/b/c"],
    ["./a//b/./c//", "a/b/c"],
    ["a/.hidden/x", "a/.hidden/x"],
    ["a/..b/c..", "a/..b/c.."],
    ["dir with spaces/ünïcödé.txt", "dir with spaces/ünïcödé.txt"],
  ])("%j -> %j", (input, out) => {
    expect(normalizeRepoPath(input, ["query", "path"])).toBe(out);
  });

  it.each([
    ["../x", "'..'"],
    ["..", "'..'"],
    ["a/../../x", "'..'"],
    ["a/b/..", "'..'"],
    ["a/../b", "'..'"],
    ["/etc/passwd", "relative"],
    ["/", "relative"],
    ["//etc", "relative"],
    ["a\\..\\..\\x", "backslash"],
    ["..\\x", "backslash"],
    ["a\0b", "control"],
    ["a\nb", "control"],
    ["x".repeat(5000), "too long"],
  ])("refuses %j", (input, why) => {
    const issue = issueOf(() => normalizeRepoPath(input, ["path", "path"]));
    expect(issue.loc).toEqual(["path", "path"]);
    expect(issue.type).toBe("value_error");
    expect(issue.msg).toContain(why);
  });
});

describe("validateRef", () => {
  it.each(["main", "feature/login", "v1.0.0", "HEAD", "537f736", "537f7362e1ce65e00e67e2707785c832b2d62a4b", "refs/heads/main", "release-2024_01"])(
    "accepts %s",
    (ref) => {
      expect(validateRef(ref)).toBe(ref);
    },
  );

  it.each([
    "",
    "--upload-pack=touch /tmp/pwned",
    "-x",
    "main~1",
    "main^",
    "HEAD@{1}",
    "@{-1}",
    "@",
    ":/fix",
    "main:README.md",
    "a..b",
    "a b",
    "a\nb",
    "a*",
    "a?",
    "a[1]",
    "a\\b",
    "/main",
    "main/",
    "main.",
    "a//b",
    ".hidden",
    "a/.b",
    "main.lock",
    "x".repeat(300),
  ])("refuses %j", (ref) => {
    const issue = issueOf(() => validateRef(ref, ["body", "ref"]));
    expect(issue.loc).toEqual(["body", "ref"]);
    expect(issue.type).toBe("value_error");
  });
});
