import { describe, expect, it } from "vitest";
import { DomainError, unavailable } from "../../errors.ts";
import {
  blobContent,
  entryType,
  MirrorReader,
  parseForEachRef,
  parseLsTree,
  utf8Boundary,
  type MirrorAccess,
} from "./mirror-reader.ts";
import type { RunGitResult } from "./run.ts";

// Parsing against git's output as recorded from git itself; the end-to-end
// behaviour against a real repository is in mirrors.test.ts.

const C1 = "34fbaa342911f01d89ba0c03bc7ca8a674d723c7";
const C2 = "587be6b4c3f93f93c489c0111bba5596147a26cb";
const T1 = "02b6c96142e1aaacf43d4b1097fc06f0fef773ac";
const T2 = "a8d7bd2c3babe0135ff357c36f651fb72a69d002";
const TREE = "df55a7dce59d040dc7819c1e241082965a80ebd9";

const ref = (...fields: string[]) => fields.join("\0");

describe("parseForEachRef", () => {
  it.each([
    ["nothing", "", { branches: [], tags: [], nested: [] }],
    [
      "branches in git's order",
      [ref("refs/heads/feature", C2, "commit", "", ""), ref("refs/heads/main", C1, "commit", "", ""), ""].join("\n"),
      { branches: [{ name: "feature", commit_hash: C2 }, { name: "main", commit_hash: C1 }], tags: [], nested: [] },
    ],
    [
      "a branch name with slashes",
      ref("refs/heads/release/1.x", C1, "commit", "", ""),
      { branches: [{ name: "release/1.x", commit_hash: C1 }], tags: [], nested: [] },
    ],
    [
      "a lightweight tag",
      ref("refs/tags/light", C1, "commit", "", ""),
      { branches: [], tags: [{ name: "light", commit_hash: C1 }], nested: [] },
    ],
    [
      "an annotated tag, peeled to its commit",
      ref("refs/tags/v1", T1, "tag", C1, "commit"),
      { branches: [], tags: [{ name: "v1", commit_hash: C1 }], nested: [] },
    ],
    [
      "a tag of a tag, left for a full peel",
      ref("refs/tags/t2", T2, "tag", T1, "tag"),
      { branches: [], tags: [], nested: ["t2"] },
    ],
    [
      "tags of trees and blobs, left out",
      [ref("refs/tags/tree", TREE, "tree", "", ""), ref("refs/tags/atree", T1, "tag", TREE, "tree"), ref("refs/tags/blob", C2, "blob", "", "")].join("\n"),
      { branches: [], tags: [], nested: [] },
    ],
    [
      "a branch that is not a commit, left out",
      ref("refs/heads/odd", TREE, "tree", "", ""),
      { branches: [], tags: [], nested: [] },
    ],
  ])("%s", (_, out, expected) => {
    expect(parseForEachRef(out)).toEqual(expected);
  });
});

describe("parseLsTree", () => {
  const rec = (mode: string, type: string, oid: string, size: string, path: string) => `${mode} ${type} ${oid} ${size.padStart(7)}\t${path}\0`;

  it.each([
    ["nothing", "", "", []],
    [
      "the root, with every kind of entry",
      rec("100644", "blob", C2, "2", "a") +
        rec("040000", "tree", TREE, "-", "d") +
        rec("120000", "blob", C1, "1", "l") +
        rec("160000", "commit", C1, "-", "sub") +
        rec("100755", "blob", C2, "1234567", "run.sh"),
      "",
      [
        { name: "a", path: "a", type: "file", size: 2 },
        { name: "d", path: "d", type: "dir", size: null },
        { name: "l", path: "l", type: "symlink", size: 1 },
        { name: "sub", path: "sub", type: "submodule", size: null },
        { name: "run.sh", path: "run.sh", type: "file", size: 1234567 },
      ],
    ],
    [
      "a nested directory, named by the last component",
      rec("100644", "blob", C2, "3", "d/e/f.txt") + rec("040000", "tree", TREE, "-", "d/e/g"),
      "d/e/",
      [
        { name: "f.txt", path: "d/e/f.txt", type: "file", size: 3 },
        { name: "g", path: "d/e/g", type: "dir", size: null },
      ],
    ],
    ["a submodule asked for as a directory: the gitlink itself, not a child", rec("160000", "commit", C1, "-", "vendor/lib"), "vendor/lib/", []],
    ["a file asked for as a directory", rec("100644", "blob", C2, "3", "README.md"), "README.md/", []],
    [
      "names with spaces and tabs",
      rec("100644", "blob", C2, "5", "a b\tc.txt"),
      "",
      [{ name: "a b\tc.txt", path: "a b\tc.txt", type: "file", size: 5 }],
    ],
  ])("%s", (_, out, prefix, expected) => {
    expect(parseLsTree(out, prefix)).toEqual(expected);
  });
});

describe("entryType", () => {
  it.each([
    ["040000", "dir"],
    ["120000", "symlink"],
    ["160000", "submodule"],
    ["100644", "file"],
    ["100755", "file"],
  ])("%s is a %s", (mode, type) => {
    expect(entryType(mode)).toBe(type);
  });
});

describe("blobContent", () => {
  const emoji = Buffer.from("ok 🎉");
  it.each([
    ["UTF-8 text", Buffer.from("héllo\n"), false, { encoding: "utf-8", content: "héllo\n" }],
    ["empty", Buffer.alloc(0), false, { encoding: "utf-8", content: "" }],
    ["a NUL byte makes it binary", Buffer.from("a\0b"), false, { encoding: "base64", content: Buffer.from("a\0b").toString("base64") }],
    ["invalid UTF-8 is binary", Buffer.from([0x61, 0xff, 0x62]), false, { encoding: "base64", content: "Yf9i" }],
    ["truncated text is cut back to a character boundary", emoji.subarray(0, emoji.length - 1), true, { encoding: "utf-8", content: "ok " }],
    [
      "a split character in a complete file is binary, all bytes kept",
      emoji.subarray(0, emoji.length - 1),
      false,
      { encoding: "base64", content: emoji.subarray(0, emoji.length - 1).toString("base64") },
    ],
    [
      "truncated binary keeps every byte",
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xe6]),
      true,
      { encoding: "base64", content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xe6]).toString("base64") },
    ],
  ])("%s", (_, body, truncated, expected) => {
    expect(blobContent(body, truncated)).toEqual(expected);
  });
});

describe("utf8Boundary", () => {
  it("never splits a sequence", () => {
    const s = Buffer.from("aé日🎉");
    const cuts = Array.from({ length: s.length + 1 }, (_, n) => utf8Boundary(s.subarray(0, n)));
    expect(cuts).toEqual([0, 1, 1, 3, 3, 3, 6, 6, 6, 6, 10]);
  });
});

// The reader against a stand-in cache: what it asks of the cache, not git.
describe("MirrorReader.resolveCommit", () => {
  function fakeCache(commits: Record<string, string>, opts: { sinceLastFetch: number; afterForce?: Record<string, string> }) {
    const syncs: { force: boolean }[] = [];
    let known = commits;
    const result = (stdout: string, code: number): RunGitResult => ({
      code,
      signal: null,
      stdout: Buffer.from(stdout),
      stderr: "",
      timedOut: false,
      limited: false,
    });
    const cache: MirrorAccess = {
      mirrorPath: (key) => `/cache/${key}.git`,
      sync: async (_key, _url, o) => {
        syncs.push({ force: o?.force === true });
        if (o?.force && opts.afterForce) known = { ...known, ...opts.afterForce };
      },
      sinceLastFetch: () => opts.sinceLastFetch,
      exec: async (_dir, args) => {
        const expr = args.at(-1)!;
        const hit = known[expr.slice(0, -"^{commit}".length)];
        return hit ? result(`${hit}\n`, 0) : result("", 1);
      },
      read: async () => Buffer.alloc(0),
      readFailure: () => unavailable("Reading the repository failed"),
    };
    return { cache, syncs };
  }

  it("answers from the mirror without a forced fetch", async () => {
    const { cache, syncs } = fakeCache({ main: C1 }, { sinceLastFetch: 0 });
    expect(await new MirrorReader(cache, { maxFileBytes: 10 }).resolveCommit("k", "u", "main")).toBe(C1);
    expect(syncs).toEqual([{ force: false }]);
  });

  it.each([
    ["a recent fetch: just a miss", 4_999, [{ force: false }], null],
    ["no recent fetch: one forced fetch, then found", 5_000, [{ force: false }, { force: true }], C2],
  ])("on a miss after %s", async (_, since, expectedSyncs, expected) => {
    const { cache, syncs } = fakeCache({}, { sinceLastFetch: since, afterForce: { hotfix: C2 } });
    const reader = new MirrorReader(cache, { maxFileBytes: 10 });
    const got = await reader.resolveCommit("k", "u", "hotfix").catch((err: unknown) => err);
    if (expected === null) expect((got as DomainError).kind).toBe("not_found");
    else expect(got).toBe(expected);
    expect(syncs).toEqual(expectedSyncs);
  });

  it("honours missRefreshMinIntervalMs", async () => {
    const { cache, syncs } = fakeCache({}, { sinceLastFetch: 1_000 });
    const err = await new MirrorReader(cache, { maxFileBytes: 10, missRefreshMinIntervalMs: 500 }).resolveCommit("k", "u", "nope").catch((e: unknown) => e);
    expect((err as DomainError).kind).toBe("not_found");
    expect(syncs).toEqual([{ force: false }, { force: true }]);
  });
});
