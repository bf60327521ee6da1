import { describe, expect, it } from "vitest";
import { DomainValidationError } from "../errors.ts";
import { normalizeRepoPath, PATH_PATTERN, REF_PATTERN, validateRef } from "./repo-path.ts";

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

describe("REF_PATTERN (published for every ref and commit_hash parameter)", () => {
  const accepts = (ref: string) => {
    try {
      validateRef(ref);
      return true;
    } catch {
      return false;
    }
  };
  // Both the flagless and the unicode reading: JSON Schema validators compile patterns with "u".
  const patterns = [new RegExp(REF_PATTERN), new RegExp(REF_PATTERN, "u")];

  it.each([
    "main",
    "feature/x.y",
    "v1.2.3",
    "HEAD",
    "@x",
    "Ð",
    "a".repeat(256),
    "-x",
    "@",
    "a@{1}",
    "a..b",
    "a//b",
    "/a",
    "a/",
    "a.",
    "a/.b",
    ".a",
    "a.lock",
    "x.lock/b",
    "a b",
    "a~1",
    "a[b",
    "a\\b",
    "a:b",
    "",
    "a".repeat(257),
  ])("agrees with validateRef on %j", (ref) => {
    for (const re of patterns) expect(re.test(ref)).toBe(accepts(ref));
  });

  it("agrees with validateRef on 20,000 strings made of the characters the rules are about", () => {
    const alphabet = [
      "a",
      "b",
      "0",
      ".",
      "/",
      "-",
      "@",
      "{",
      "}",
      "~",
      "^",
      ":",
      "?",
      "*",
      "[",
      "\\",
      " ",
      "\t",
      "\x7f",
      "\0",
      "l",
      "o",
      "c",
      "k",
      "Ð",
      "\u2028",
      "\n",
    ];
    let seed = 29;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let i = 0; i < 20_000; i++) {
      const length = 1 + (next() % 9);
      let ref = "";
      for (let j = 0; j < length; j++) ref += alphabet[next() % alphabet.length];
      for (const re of patterns) expect([ref, re.test(ref)]).toEqual([ref, accepts(ref)]);
    }
  });
});

describe("PATH_PATTERN (published for every path parameter)", () => {
  const accepts = (path: string) => {
    try {
      normalizeRepoPath(path);
      return true;
    } catch {
      return false;
    }
  };
  const patterns = [new RegExp(PATH_PATTERN), new RegExp(PATH_PATTERN, "u")];

  it("agrees with normalizeRepoPath on 20,000 strings made of the characters its rules are about", () => {
    const alphabet = ["a", ".", "/", "\\", "\0", "\x1f", "\x7f", "\n", "\u2028", "Ð", " "];
    let seed = 29;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (const path of ["", "src/a.ts", "../x", "a/../b", "a/..", "..a/b", "a/b..", "/abs", "a\\b", "a".repeat(4097)]) {
      for (const re of patterns) expect([path.slice(0, 9), re.test(path)]).toEqual([path.slice(0, 9), accepts(path)]);
    }
    for (let i = 0; i < 20_000; i++) {
      const length = next() % 9;
      let path = "";
      for (let j = 0; j < length; j++) path += alphabet[next() % alphabet.length];
      for (const re of patterns) expect([path, re.test(path)]).toEqual([path, accepts(path)]);
    }
  });
});
