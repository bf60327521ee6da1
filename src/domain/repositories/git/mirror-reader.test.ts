import { describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { DomainError, DomainValidationError, unavailable } from "../../errors.ts";
import {
  blobContent,
  entryType,
  keepSmallest,
  MirrorReader,
  parseForEachRef,
  parseTreeRecord,
  refusedForReads,
  utf8Boundary,
  type MirrorAccess,
  type TreeRecord,
} from "./mirror-reader.ts";
import { GitRemoteError } from "./errors.ts";
import type { RunGitResult } from "./run.ts";
import { decodeTreeCursor, encodeTreeCursor } from "./tree-cursor.ts";

// Parsing against git's output as recorded from git itself; the end-to-end
// behaviour against a real repository is in mirrors.test.ts.

const C1 = "34fbaa342911f01d89ba0c03bc7ca8a674d723c7";
const C2 = "587be6b4c3f93f93c489c0111bba5596147a26cb";
const T1 = "02b6c96142e1aaacf43d4b1097fc06f0fef773ac";
const T2 = "a8d7bd2c3babe0135ff357c36f651fb72a69d002";
const TREE = "df55a7dce59d040dc7819c1e241082965a80ebd9";

const ref = (...fields: string[]) => fields.join("\0");
const result = (stdout: string, code: number): RunGitResult => ({
  code,
  signal: null,
  stdout: Buffer.from(stdout),
  stderr: "",
  timedOut: false,
  limited: false,
  stopped: false,
});

describe("parseForEachRef", () => {
  it.each([
    ["nothing", "", { branches: [], tags: [], nested: [] }],
    [
      "branches in git's order",
      [ref("refs/heads/feature", C2, "commit", "", ""), ref("refs/heads/main", C1, "commit", "", ""), ""].join("\n"),
      {
        branches: [
          { name: "feature", commit_hash: C2 },
          { name: "main", commit_hash: C1 },
        ],
        tags: [],
        nested: [],
      },
    ],
    [
      "a branch name with slashes",
      ref("refs/heads/release/1.x", C1, "commit", "", ""),
      { branches: [{ name: "release/1.x", commit_hash: C1 }], tags: [], nested: [] },
    ],
    ["a lightweight tag", ref("refs/tags/light", C1, "commit", "", ""), { branches: [], tags: [{ name: "light", commit_hash: C1 }], nested: [] }],
    [
      "an annotated tag, peeled to its commit",
      ref("refs/tags/v1", T1, "tag", C1, "commit"),
      { branches: [], tags: [{ name: "v1", commit_hash: C1 }], nested: [] },
    ],
    ["a tag of a tag, left for a full peel", ref("refs/tags/t2", T2, "tag", T1, "tag"), { branches: [], tags: [], nested: ["t2"] }],
    [
      "tags of trees and blobs, left out",
      [ref("refs/tags/tree", TREE, "tree", "", ""), ref("refs/tags/atree", T1, "tag", TREE, "tree"), ref("refs/tags/blob", C2, "blob", "", "")].join("\n"),
      { branches: [], tags: [], nested: [] },
    ],
    ["a branch that is not a commit, left out", ref("refs/heads/odd", TREE, "tree", "", ""), { branches: [], tags: [], nested: [] }],
  ])("%s", (_, out, expected) => {
    expect(parseForEachRef(out)).toEqual(expected);
  });
});

describe("parseTreeRecord", () => {
  // `ls-tree -z` records (default format), without their NUL.
  const rec = (mode: string, type: string, oid: string, path: string) => Buffer.from(`${mode} ${type} ${oid}\t${path}`);
  const parsed = (r: Buffer, prefix: string) => {
    const e = parseTreeRecord(r, Buffer.from(prefix));
    return e && { name: e.name.toString("utf8"), type: e.type, oid: e.oid };
  };

  it.each([
    ["a file", rec("100644", "blob", C2, "a"), "", { name: "a", type: "file", oid: C2 }],
    ["an executable", rec("100755", "blob", C2, "run.sh"), "", { name: "run.sh", type: "file", oid: C2 }],
    ["a directory", rec("040000", "tree", TREE, "d"), "", { name: "d", type: "dir", oid: TREE }],
    ["a symlink", rec("120000", "blob", C1, "l"), "", { name: "l", type: "symlink", oid: C1 }],
    ["a submodule", rec("160000", "commit", C1, "sub"), "", { name: "sub", type: "submodule", oid: C1 }],
    ["a nested entry, named by its last component", rec("100644", "blob", C2, "d/e/f.txt"), "d/e/", { name: "f.txt", type: "file", oid: C2 }],
    ["a submodule asked for as a directory: the gitlink itself, not a child", rec("160000", "commit", C1, "vendor/lib"), "vendor/lib/", null],
    ["a file asked for as a directory", rec("100644", "blob", C2, "README.md"), "README.md/", null],
    ["outside the directory", rec("100644", "blob", C2, "other/x"), "d/", null],
    ["a grandchild (never listed without -r)", rec("100644", "blob", C2, "d/e/f"), "d/", null],
    ["names with spaces and tabs", rec("100644", "blob", C2, "a b\tc.txt"), "", { name: "a b\tc.txt", type: "file", oid: C2 }],
    ["no tab: not a record", Buffer.from("garbage"), "", null],
  ])("%s", (_, record, prefix, expected) => {
    expect(parsed(record, prefix)).toEqual(expected);
  });

  it("keeps a name's bytes as git stores them (not necessarily UTF-8)", () => {
    const record = Buffer.concat([Buffer.from(`100644 blob ${C2}\t`), Buffer.from([0x66, 0xff, 0x67])]);
    expect(parseTreeRecord(record, Buffer.alloc(0))!.name).toEqual(Buffer.from([0x66, 0xff, 0x67]));
  });
});

describe("keepSmallest", () => {
  it("keeps the n smallest names in byte order, whatever order they come in", () => {
    const kept: TreeRecord[] = [];
    for (const name of ["foo", "b", "foo-bar", "a", "Z", "é", "c"]) keepSmallest(kept, { name: Buffer.from(name), type: "dir", oid: TREE }, 4);
    // Byte order: uppercase before lowercase, "foo" before "foo-bar" (git itself lists "foo-bar" first).
    expect(kept.map((e) => e.name.toString())).toEqual(["Z", "a", "b", "c"]);
  });
});

describe("tree cursors", () => {
  it("round-trips, and refuses anything this server did not write", () => {
    const cursor = { commit: C1, kind: "f" as const, name: Buffer.from([0x66, 0xff]) };
    const text = encodeTreeCursor(cursor);
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeTreeCursor(text)).toEqual(cursor);
    const enc = (raw: string | Buffer) => Buffer.from(raw).toString("base64url");
    for (const bad of [
      "",
      "not a cursor",
      "a/b",
      `${text}=`,
      enc(`t2\0${C1}\0f\0x`), // another version
      enc(`t1\0${C1.slice(1)}\0f\0x`), // not a full hash
      enc(`t1\0${C1.toUpperCase()}\0f\0x`),
      enc(`t1\0${C1}\0x\0x`), // no such kind
      enc(`t1\0${C1}\0f\0`), // no name
      enc(`t1\0${C1}\0f\0a/b`), // a path, not a name
      enc(`t1\0${C1}\0f\0${"x".repeat(4097)}`),
      enc(`v1:0190a1b2-0000-7000-8000-000000000001`), // a list cursor
    ]) {
      expect(decodeTreeCursor(bad), JSON.stringify(bad)).toBeNull();
    }
  });
});

// listTree against a stand-in cache: which git commands it runs, when it stops
// them, and how it pages; the same against real git is in mirrors.test.ts.
describe("MirrorReader.listTree", () => {
  // A directory "d" as ls-tree lists it, in git's order (a directory's name
  // sorts as if it ended in "/": "foo-bar" before "foo").
  const DIRS = ["a", "foo-bar", "foo", "zz"];
  const FILES = Array.from({ length: 50 }, (_, i) => `f${String(i).padStart(3, "0")}`);
  const ORDER = [...DIRS, ...FILES].sort((x, y) => {
    const k = (n: string) => (DIRS.includes(n) ? `${n}/` : n);
    return k(x) < k(y) ? -1 : k(x) > k(y) ? 1 : 0;
  });
  const oid = (n: string) => createHash("sha1").update(n).digest("hex");

  function fakeCache() {
    const scans: { args: string[]; emitted: number }[] = [];
    const cache: MirrorAccess = {
      mirrorPath: (key) => `/cache/${key}.git`,
      sync: async () => {},
      sinceLastFetch: () => 0,
      exec: async (_dir, args, o) => {
        if (args[0] === "rev-parse") return result(`${C1}\n`, 0);
        if (args[0] === "cat-file" && o?.input?.endsWith(":d\0")) return result("tree\n", 0);
        return result("missing\n", 0);
      },
      read: async (_dir, args, input) => {
        if (args[0] !== "cat-file") throw new Error(`unexpected ${args.join(" ")}`);
        const oids = (input ?? "").split("\0").filter(Boolean);
        return Buffer.from(oids.map((o) => `${o} ${parseInt(o.slice(0, 2), 16)}\n`).join(""));
      },
      scan: async (_dir, args, onRecord) => {
        const onlyDirs = args.includes("-d");
        const names = ORDER.filter((n) => !onlyDirs || DIRS.includes(n));
        const entry = { args, emitted: 0 };
        scans.push(entry);
        for (const n of names) {
          entry.emitted++;
          const dir = DIRS.includes(n);
          const record = Buffer.from(`${dir ? "040000 tree" : "100644 blob"} ${oid(n)}\td/${n}`);
          if (onRecord(record) === false) return;
        }
      },
      readFailure: () => unavailable("Reading the repository failed"),
    };
    return { cache, scans };
  }
  const repo = { id: "k", url: "u", account_id: "acct" };

  it("pages directories first, then files, in byte order, each entry once", async () => {
    const { cache } = fakeCache();
    const reader = new MirrorReader(cache, { maxFileBytes: 10 });
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await reader.listTree(repo, "main", "d", { limit: 3, cursor });
      expect(page.entries.length).toBeLessThanOrEqual(3);
      expect(page.commit_hash).toBe(C1);
      seen.push(...page.entries.map((e) => e.name));
      cursor = page.next_cursor ?? undefined;
      pages++;
    } while (cursor);
    expect(seen).toEqual([...[...DIRS].sort(), ...FILES]);
    expect(pages).toBe(Math.ceil(54 / 3));
  });

  it("gives sizes for files and null for directories, and full paths", async () => {
    const { cache } = fakeCache();
    const page = await new MirrorReader(cache, { maxFileBytes: 10 }).listTree(repo, "main", "d", { limit: 5 });
    expect(page.entries).toEqual([
      { name: "a", path: "d/a", type: "dir", size: null },
      { name: "foo", path: "d/foo", type: "dir", size: null },
      { name: "foo-bar", path: "d/foo-bar", type: "dir", size: null },
      { name: "zz", path: "d/zz", type: "dir", size: null },
      { name: "f000", path: "d/f000", type: "file", size: parseInt(oid("f000").slice(0, 2), 16) },
    ]);
  });

  it("stops git once a page of files is full, and skips the directory pass past the directories", async () => {
    const { cache, scans } = fakeCache();
    const reader = new MirrorReader(cache, { maxFileBytes: 10 });
    const first = await reader.listTree(repo, "main", "d", { limit: 10 });
    // ls-tree -d (all 4 directories), then ls-tree until 6 files + 1 more were seen.
    expect(scans.map((s) => [s.args.includes("-d"), s.emitted])).toEqual([
      [true, 4],
      [false, ORDER.indexOf("f006") + 1],
    ]);
    scans.length = 0;
    await reader.listTree(repo, "main", "d", { limit: 10, cursor: first.next_cursor! });
    expect(scans.map((s) => [s.args.includes("-d"), s.emitted])).toEqual([[false, ORDER.indexOf("f016") + 1]]);
  });

  it("keeps the cursor's commit, whatever the ref says", async () => {
    const { cache } = fakeCache();
    const reader = new MirrorReader(cache, { maxFileBytes: 10 });
    const first = await reader.listTree(repo, "main", "d", { limit: 2 });
    const execs: string[][] = [];
    const spy: MirrorAccess = { ...cache, exec: (dir, args, o) => (execs.push(args), cache.exec(dir, args, o)) };
    await new MirrorReader(spy, { maxFileBytes: 10 }).listTree(repo, "other-branch", "d", { limit: 2, cursor: first.next_cursor! });
    expect(execs[0]).toEqual(["rev-parse", "--verify", "--quiet", "--end-of-options", `${C1}^{commit}`]);
  });

  it("answers a repeated read from memory, and resolves the ref again once the mirror has fetched", async () => {
    const { cache, scans } = fakeCache();
    let stamp = 1;
    const execs: string[][] = [];
    const spy: MirrorAccess = { ...cache, fetchStamp: () => stamp, exec: (dir, args, o) => (execs.push(args), cache.exec(dir, args, o)) };
    const reader = new MirrorReader(spy, { maxFileBytes: 10 });
    const first = await reader.listTree(repo, "main", "d", { limit: 5 });
    const [execsBefore, scansBefore] = [execs.length, scans.length];
    expect(await reader.listTree(repo, "main", "d", { limit: 5 })).toEqual(first);
    expect([execs.length, scans.length]).toEqual([execsBefore, scansBefore]);
    stamp = 2; // a fetch finished: the branch may point elsewhere now; the commit's tree is still the same
    expect(await reader.listTree(repo, "main", "d", { limit: 5 })).toEqual(first);
    expect(execs.slice(execsBefore).map((a) => a[0])).toEqual(["rev-parse"]);
    expect(scans.length).toBe(scansBefore);
  });

  it("reads git every time with the read cache off", async () => {
    const { cache, scans } = fakeCache();
    const reader = new MirrorReader({ ...cache, fetchStamp: () => 1 }, { maxFileBytes: 10, readCacheEntries: 0 });
    await reader.listTree(repo, "main", "d", { limit: 5 });
    const once = scans.length;
    await reader.listTree(repo, "main", "d", { limit: 5 });
    expect(scans.length).toBe(2 * once);
  });

  it("refuses a malformed cursor with a 422 at query.cursor", async () => {
    const { cache } = fakeCache();
    const err = await new MirrorReader(cache, { maxFileBytes: 10 }).listTree(repo, "main", "d", { limit: 2, cursor: "nope" }).catch((e: unknown) => e);
    expect((err as DomainValidationError).issues[0]!.loc).toEqual(["query", "cursor"]);
  });

  it("answers 404 for a path that lists nothing", async () => {
    const { cache } = fakeCache();
    const err = await new MirrorReader(cache, { maxFileBytes: 10 }).listTree(repo, "main", "nope", { limit: 2 }).catch((e: unknown) => e);
    expect((err as DomainError).kind).toBe("not_found");
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
const REPO = { id: "k", url: "u", account_id: "acct" };
describe("MirrorReader.resolveCommit", () => {
  function fakeCache(commits: Record<string, string>, opts: { sinceLastFetch: number; afterForce?: Record<string, string> }) {
    const syncs: { force: boolean }[] = [];
    let known = commits;
    const cache: MirrorAccess = {
      mirrorPath: (key) => `/cache/${key}.git`,
      sync: async (_repo, o) => {
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
      scan: async () => {},
      readFailure: () => unavailable("Reading the repository failed"),
    };
    return { cache, syncs };
  }

  it("answers from the mirror without a forced fetch", async () => {
    const { cache, syncs } = fakeCache({ main: C1 }, { sinceLastFetch: 0 });
    expect(await new MirrorReader(cache, { maxFileBytes: 10 }).resolveCommit(REPO, "main")).toBe(C1);
    expect(syncs).toEqual([{ force: false }]);
  });

  it.each([
    ["a recent fetch: just a miss", 4_999, [{ force: false }], null],
    ["no recent fetch: one forced fetch, then found", 5_000, [{ force: false }, { force: true }], C2],
  ])("on a miss after %s", async (_, since, expectedSyncs, expected) => {
    const { cache, syncs } = fakeCache({}, { sinceLastFetch: since, afterForce: { hotfix: C2 } });
    const reader = new MirrorReader(cache, { maxFileBytes: 10 });
    const got = await reader.resolveCommit(REPO, "hotfix").catch((err: unknown) => err);
    if (expected === null) expect((got as DomainError).kind).toBe("not_found");
    else expect(got).toBe(expected);
    expect(syncs).toEqual(expectedSyncs);
  });

  it("honours missRefreshMinIntervalMs", async () => {
    const { cache, syncs } = fakeCache({}, { sinceLastFetch: 1_000 });
    const err = await new MirrorReader(cache, { maxFileBytes: 10, missRefreshMinIntervalMs: 500 }).resolveCommit(REPO, "nope").catch((e: unknown) => e);
    expect((err as DomainError).kind).toBe("not_found");
    expect(syncs).toEqual([{ force: false }, { force: true }]);
  });
});

describe("refusedForReads", () => {
  it("turns a policy refusal into a conflict that says why, and leaves other errors alone", () => {
    const policy = new DomainValidationError([{ loc: ["body", "url"], msg: "file:// clone URLs are not allowed; use an https:// URL", type: "value_error" }]);
    const conflict = refusedForReads(policy)!;
    expect(conflict.kind).toBe("conflict");
    expect(conflict.message).toMatch(/not allowed by the server's clone URL policy: file:\/\/ clone URLs are not allowed/);
    expect(refusedForReads(new GitRemoteError("refused", "The clone URL uses a transport that is not allowed"))!.kind).toBe("conflict");
    expect(refusedForReads(new GitRemoteError("timeout", "slow"))).toBeNull();
    expect(refusedForReads(new DomainValidationError([{ loc: ["query", "ref"], msg: "bad", type: "value_error" }]))).toBeNull();
    expect(refusedForReads(unavailable("x"))).toBeNull();
  });
});
