import { createServer, type Server } from "node:http";
import { mkdir, mkdtemp, readdir, rm, stat, utimes } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFixtureRepo, FIXTURE_UTF8, type FixtureRepo } from "../../../../test/helpers/git-fixture.ts";
import { DomainError, DomainValidationError } from "../../errors.ts";
import { GitRemoteError } from "./errors.ts";
import { GitMirrors, type GitMirrorsOptions, type GitRepository } from "./mirrors.ts";

// Real git against a real (local, file://) repository: the mirror is only as
// good as its handling of git's actual behaviour, so none of it is mocked.

interface LogLine {
  msg: string;
  repository_id?: string;
  [k: string]: unknown;
}

function capture() {
  const lines: LogLine[] = [];
  const logger = pino({ level: "debug" }, { write: (s: string) => void lines.push(JSON.parse(s) as LogLine) });
  const fetches = (key: string) => lines.filter((l) => l.msg === "git mirror fetched" && l.repository_id === key).length;
  return { lines, logger, fetches };
}

let root: string;
let fixture: FixtureRepo;
let seq = 0;
const newKey = () => `0190a1b2-0000-7000-8000-${String(++seq).padStart(12, "0")}`;
/** A repository of one account (fairness between accounts is tested in fetch-slots.test.ts). */
const r = (id: string, url: string, account_id = "acct-1"): GitRepository => ({ id, url, account_id });
const PAGE = { limit: 1000 };

async function setup(over: Partial<GitMirrorsOptions> = {}) {
  const log = capture();
  let clock = 1_000_000;
  const cacheDir = over.cacheDir ?? (await mkdtemp(join(root, "cache-")));
  const mirrors = new GitMirrors({
    cacheDir,
    refreshIntervalSeconds: 60,
    maxFileBytes: 64 * 1024,
    commandTimeoutMs: 20_000,
    allowLocal: true,
    logger: log.logger,
    now: () => clock,
    ...over,
  });
  return { mirrors, cacheDir, ...log, advance: (ms: number) => (clock += ms) };
}

async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected a rejection");
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "codeplane-mirrors-"));
  fixture = await createFixtureRepo();
});

afterAll(async () => {
  await fixture?.cleanup();
  await rm(root, { recursive: true, force: true });
});

describe("sync", () => {
  it("clones on first use, skips while fresh, fetches when stale or forced", async () => {
    const t = await setup();
    const key = newKey();
    await t.mirrors.sync(r(key, fixture.url));
    expect(t.fetches(key)).toBe(1);
    expect((await stat(join(t.cacheDir, `${key}.git`))).isDirectory()).toBe(true);

    await t.mirrors.sync(r(key, fixture.url));
    await t.mirrors.listRefs(r(key, fixture.url));
    expect(t.fetches(key)).toBe(1);

    t.advance(59_000);
    await t.mirrors.sync(r(key, fixture.url));
    expect(t.fetches(key)).toBe(1);

    t.advance(2_000);
    await t.mirrors.sync(r(key, fixture.url));
    expect(t.fetches(key)).toBe(2);

    await t.mirrors.sync(r(key, fixture.url), { force: true });
    expect(t.fetches(key)).toBe(3);
  });

  it("shares one fetch between concurrent callers", async () => {
    const t = await setup();
    const key = newKey();
    await Promise.all([
      t.mirrors.sync(r(key, fixture.url)),
      t.mirrors.sync(r(key, fixture.url)),
      t.mirrors.listTree(r(key, fixture.url), "main", "", PAGE),
      t.mirrors.readFile(r(key, fixture.url), "main", "README.md"),
    ]);
    expect(t.fetches(key)).toBe(1);
  });

  it("runs one more fetch for forced callers that arrive while a fetch is running", async () => {
    const t = await setup();
    const key = newKey();
    const first = t.mirrors.sync(r(key, fixture.url));
    await Promise.all([first, t.mirrors.sync(r(key, fixture.url), { force: true }), t.mirrors.sync(r(key, fixture.url), { force: true })]);
    expect(t.fetches(key)).toBe(2);
  });

  it("leaves no mirror and no temporary directory behind when the first fetch fails, with a clear error", async () => {
    const t = await setup();
    const key = newKey();
    const err = await caught(t.mirrors.sync(r(key, `file://${join(root, "does-not-exist.git")}`)));
    expect(err).toBeInstanceOf(GitRemoteError);
    expect((err as GitRemoteError).kind).toBe("bad_request");
    expect((err as GitRemoteError).reason).toBe("not_a_repository");
    expect((err as Error).message).toMatch(/No git repository found/);
    expect(await readdir(t.cacheDir)).toEqual([".home"]);
    // The raw git message goes to the log for operators.
    expect(t.lines.some((l) => l.msg === "git fetch failed" && String(l.stderr).includes("does not appear to be a git repository"))).toBe(true);
  });

  it("applies the clone URL policy before running git", async () => {
    const t = await setup({ allowLocal: false });
    const key = newKey();
    const err = await caught(t.mirrors.sync(r(key, fixture.url)));
    expect(err).toBeInstanceOf(DomainValidationError);
    expect((err as DomainValidationError).issues[0]!.loc).toEqual(["body", "url"]);
    expect((await readdir(t.cacheDir)).filter((n) => !n.startsWith("."))).toEqual([]);
  });

  it("limits concurrent fetches without losing any", async () => {
    const t = await setup({ maxConcurrentFetches: 1 });
    const keys = [newKey(), newKey(), newKey()];
    await Promise.all(keys.map((k) => t.mirrors.sync(r(k, fixture.url))));
    for (const k of keys) expect(t.fetches(k)).toBe(1);
  });

  it("clears stale leftovers of interrupted clones on first use, but not fresh ones", async () => {
    const cacheDir = await mkdtemp(join(root, "cache-"));
    await mkdir(join(cacheDir, ".tmp-old-1234"));
    await mkdir(join(cacheDir, ".trash-old-5678"));
    await mkdir(join(cacheDir, ".tmp-young-9abc"));
    const past = new Date(Date.now() - 3_600_000);
    await utimes(join(cacheDir, ".tmp-old-1234"), past, past);
    await utimes(join(cacheDir, ".trash-old-5678"), past, past);
    const t = await setup({ cacheDir });
    await t.mirrors.sync(r(newKey(), fixture.url));
    const names = await readdir(cacheDir);
    expect(names).toContain(".tmp-young-9abc");
    expect(names).not.toContain(".tmp-old-1234");
    expect(names).not.toContain(".trash-old-5678");
  });

  it("refuses repository keys that are not plain identifiers", async () => {
    const t = await setup();
    for (const key of ["../escape", "a/b", "", ".hidden", "-x"]) {
      const err = await caught(t.mirrors.sync(r(key, fixture.url)));
      expect(err).toBeInstanceOf(DomainError);
      expect((err as DomainError).kind).toBe("bad_request");
    }
  });
});

describe("reading a mirror", () => {
  let t: Awaited<ReturnType<typeof setup>>;
  const key = "0190a1b2-0000-7000-8000-ffffffffffff";
  beforeAll(async () => {
    t = await setup();
    await t.mirrors.sync(r(key, fixture.url));
  });

  describe("listRefs", () => {
    it("lists branches and tags, with the annotated tag peeled to its commit", async () => {
      expect(await t.mirrors.listRefs(r(key, fixture.url))).toEqual({
        head: "main",
        branches: [
          { name: "feature", commit_hash: fixture.commits.feature },
          { name: "main", commit_hash: fixture.commits.main },
        ],
        tags: [
          { name: "light", commit_hash: fixture.commits.initial },
          { name: "v1.0.0", commit_hash: fixture.commits.main },
        ],
      });
      expect(fixture.tags.annotated.object).not.toBe(fixture.commits.main);
    });
  });

  describe("resolveCommit", () => {
    it.each([
      ["main", "main"],
      ["feature", "feature"],
      ["HEAD", "main"],
      ["refs/heads/feature", "feature"],
      ["light", "initial"],
      ["v1.0.0", "main"],
    ] as const)("%s", async (ref, which) => {
      expect(await t.mirrors.resolveCommit(r(key, fixture.url), ref)).toBe(fixture.commits[which]);
    });

    it("resolves full and short hashes", async () => {
      expect(await t.mirrors.resolveCommit(r(key, fixture.url), fixture.commits.feature)).toBe(fixture.commits.feature);
      expect(await t.mirrors.resolveCommit(r(key, fixture.url), fixture.commits.feature.slice(0, 7))).toBe(fixture.commits.feature);
    });

    it("answers 404 for unknown refs and hashes", async () => {
      for (const ref of ["nope", "0000000000000000000000000000000000000000", "deadbee"]) {
        const err = await caught(t.mirrors.resolveCommit(r(key, fixture.url), ref));
        expect(err).toBeInstanceOf(DomainError);
        expect((err as DomainError).kind).toBe("not_found");
        expect((err as Error).message).toBe(`Ref '${ref}' not found`);
      }
    });

    it("refuses refs that git would read as options or revision syntax", async () => {
      for (const ref of ["--upload-pack=touch /tmp/pwned", "-n", "main~1", "HEAD@{1}", ":/Add", "main:README.md"]) {
        const err = await caught(t.mirrors.resolveCommit(r(key, fixture.url), ref));
        expect(err).toBeInstanceOf(DomainValidationError);
        expect((err as DomainValidationError).issues[0]!.loc).toEqual(["query", "ref"]);
      }
      const err = await caught(t.mirrors.listTree(r(key, fixture.url), "--output=/tmp/x", "", PAGE));
      expect(err).toBeInstanceOf(DomainValidationError);
    });
  });

  describe("listTree", () => {
    it("lists the root: directories first, then files by name, with types and sizes", async () => {
      const tree = await t.mirrors.listTree(r(key, fixture.url), "main", "", PAGE);
      expect(tree.commit_hash).toBe(fixture.commits.main);
      expect(tree.path).toBe("");
      expect(tree.entries.map((e) => [e.name, e.type, e.size])).toEqual([
        ["a", "dir", null],
        ["docs", "dir", null],
        ["scripts", "dir", null],
        ["vendor", "dir", null],
        [".gitmodules", "file", 79],
        ["README.md", "file", 45],
        ["image.png", "file", (fixture.files["image.png"] as Buffer).length],
        ["large.txt", "file", fixture.largeSize],
        ["link-to-readme", "symlink", "README.md".length],
        ["utf8.txt", "file", Buffer.byteLength(FIXTURE_UTF8)],
      ]);
      expect(tree.entries.every((e) => e.path === e.name)).toBe(true);
    });

    it("lists nested directories with full paths, and normalises the path", async () => {
      const tree = await t.mirrors.listTree(r(key, fixture.url), "main", "./a//b/", PAGE);
      expect(tree.path).toBe("a/b");
      expect(tree.entries).toEqual([
        { name: "c", path: "a/b/c", type: "dir", size: null },
        { name: "sibling.txt", path: "a/b/sibling.txt", type: "file", size: 10 },
      ]);
      const deep = await t.mirrors.listTree(r(key, fixture.url), "main", "a/b/c", PAGE);
      expect(deep.entries).toEqual([{ name: "deep.txt", path: "a/b/c/deep.txt", type: "file", size: 18 }]);
    });

    it("reports submodules and honours the ref", async () => {
      const vendor = await t.mirrors.listTree(r(key, fixture.url), "main", "vendor", PAGE);
      expect(vendor.entries).toEqual([{ name: "lib", path: "vendor/lib", type: "submodule", size: null }]);
      const feature = await t.mirrors.listTree(r(key, fixture.url), "feature", "", PAGE);
      expect(feature.commit_hash).toBe(fixture.commits.feature);
      expect(feature.entries.some((e) => e.name === "feature.txt")).toBe(true);
      const initial = await t.mirrors.listTree(r(key, fixture.url), "light", "", PAGE);
      expect(initial.entries.map((e) => e.name)).toEqual(["README.md"]);
    });

    // "*" and ":(glob)" would match real directories if git read them as pathspec magic.
    it.each(["missing", "a/missing", "README.md", "a/b/c/deep.txt", "link-to-readme", "*", "a/*", ":(glob)a", "vendor/lib"])(
      "answers 404 for %s",
      async (path) => {
        const err = await caught(t.mirrors.listTree(r(key, fixture.url), "main", path, PAGE));
        expect(err).toBeInstanceOf(DomainError);
        expect((err as DomainError).kind).toBe("not_found");
      },
    );

    it.each(["../x", "/etc", "a/../../x", "a\\..\\x"])("refuses path %j", async (path) => {
      const err = await caught(t.mirrors.listTree(r(key, fixture.url), "main", path, PAGE));
      expect(err).toBeInstanceOf(DomainValidationError);
      expect((err as DomainValidationError).issues[0]!.loc).toEqual(["query", "path"]);
    });
  });

  describe("readFile", () => {
    it("reads UTF-8 text", async () => {
      expect(await t.mirrors.readFile(r(key, fixture.url), "main", "README.md")).toEqual({
        commit_hash: fixture.commits.main,
        path: "README.md",
        size: 45,
        encoding: "utf-8",
        content: fixture.files["README.md"],
        truncated: false,
      });
      const utf8 = await t.mirrors.readFile(r(key, fixture.url), "main", "utf8.txt");
      expect(utf8.content).toBe(FIXTURE_UTF8);
      expect(utf8.encoding).toBe("utf-8");
      const deep = await t.mirrors.readFile(r(key, fixture.url), "v1.0.0", "./a/b/c/deep.txt");
      expect(deep.path).toBe("a/b/c/deep.txt");
      expect(deep.content).toBe("deep inside a/b/c\n");
    });

    it("reads binary files as base64", async () => {
      const png = await t.mirrors.readFile(r(key, fixture.url), "main", "image.png");
      expect(png.encoding).toBe("base64");
      expect(Buffer.from(png.content, "base64")).toEqual(fixture.files["image.png"]);
      expect(png.size).toBe((fixture.files["image.png"] as Buffer).length);
      expect(png.truncated).toBe(false);
    });

    it("truncates large files to maxFileBytes and reports the full size", async () => {
      const large = await t.mirrors.readFile(r(key, fixture.url), "main", "large.txt");
      expect(large.truncated).toBe(true);
      expect(large.size).toBe(fixture.largeSize);
      expect(large.encoding).toBe("utf-8");
      expect(large.content).toBe((fixture.files["large.txt"] as string).slice(0, 64 * 1024));
    });

    it("reads a symlink as its target", async () => {
      const link = await t.mirrors.readFile(r(key, fixture.url), "main", "link-to-readme");
      expect(link).toMatchObject({ content: "README.md", encoding: "utf-8", size: 9, truncated: false });
    });

    it("answers 400 for a directory and 404 for a missing file or a submodule", async () => {
      for (const path of ["a", "a/b/", ""]) {
        const err = await caught(t.mirrors.readFile(r(key, fixture.url), "main", path));
        expect((err as DomainError).kind).toBe("bad_request");
        expect((err as Error).message).toMatch(/is a directory/);
      }
      for (const path of ["missing.txt", "a/b/c/deep.txt/x", "vendor/lib", "feature.txt"]) {
        const err = await caught(t.mirrors.readFile(r(key, fixture.url), "main", path));
        expect((err as DomainError).kind).toBe("not_found");
      }
    });

    it.each(["../x", "/etc/passwd", "a/../../x", "a/b/../c"])("refuses path %j", async (path) => {
      const err = await caught(t.mirrors.readFile(r(key, fixture.url), "main", path));
      expect(err).toBeInstanceOf(DomainValidationError);
      expect((err as DomainValidationError).issues[0]!.loc).toEqual(["path", "path"]);
    });
  });
});

describe("readFile truncation on character boundaries", () => {
  const bytes = Buffer.from(FIXTURE_UTF8);
  const emojiAt = bytes.indexOf(Buffer.from("🎉"));

  it.each([
    ["inside a 2-byte character", 2, "h"],
    ["after a 2-byte character", 3, "hé"],
    ["inside a 4-byte character", emojiAt + 3, bytes.subarray(0, emojiAt).toString()],
    ["after a 4-byte character", emojiAt + 4, bytes.subarray(0, emojiAt + 4).toString()],
  ])("cuts %s", async (_, max, expected) => {
    const t = await setup({ maxFileBytes: max });
    const key = newKey();
    const file = await t.mirrors.readFile(r(key, fixture.url), "main", "utf8.txt");
    expect(file).toMatchObject({ encoding: "utf-8", content: expected, truncated: true, size: bytes.length });
  });
});

describe("a repository that changes", () => {
  let moving: FixtureRepo;
  beforeAll(async () => {
    moving = await createFixtureRepo(join(root, "moving.git"));
  });

  it("sees new commits after the refresh interval or a forced sync, not before", async () => {
    const t = await setup();
    const key = newKey();
    await t.mirrors.sync(r(key, moving.url));
    const before = (await t.mirrors.listRefs(r(key, moving.url))).branches.find((b) => b.name === "main")!.commit_hash;
    const next = await moving.commit("main", { "CHANGELOG.md": "1.1\n" });

    expect((await t.mirrors.listRefs(r(key, moving.url))).branches.find((b) => b.name === "main")!.commit_hash).toBe(before);
    await t.mirrors.sync(r(key, moving.url), { force: true });
    expect((await t.mirrors.listRefs(r(key, moving.url))).branches.find((b) => b.name === "main")!.commit_hash).toBe(next);

    const later = await moving.commit("main", { "CHANGELOG.md": "1.2\n" });
    t.advance(61_000);
    expect((await t.mirrors.listRefs(r(key, moving.url))).branches.find((b) => b.name === "main")!.commit_hash).toBe(later);
  });

  it("finds a ref pushed after the last fetch with one forced refresh, rate-limited", async () => {
    const t = await setup({ missRefreshMinIntervalMs: 5_000 });
    const key = newKey();
    await t.mirrors.sync(r(key, moving.url));
    const hotfix = await moving.commit("hotfix-1", { "fix.txt": "fixed\n" });

    // Right after a fetch, a miss is just a miss.
    expect(((await caught(t.mirrors.resolveCommit(r(key, moving.url), "hotfix-1"))) as DomainError).kind).toBe("not_found");
    expect(t.fetches(key)).toBe(1);

    t.advance(5_000);
    expect(await t.mirrors.resolveCommit(r(key, moving.url), "hotfix-1")).toBe(hotfix);
    expect(t.fetches(key)).toBe(2);
  });

  it("pages a directory at the first page's commit while the branch moves", async () => {
    const t = await setup();
    const key = newKey();
    await t.mirrors.sync(r(key, moving.url));
    const first = await t.mirrors.listTree(r(key, moving.url), "main", "", { limit: 3 });
    await moving.commit("main", { "zzz-new.txt": "new\n" });
    await t.mirrors.sync(r(key, moving.url), { force: true });
    const names = first.entries.map((e) => e.name);
    let cursor = first.next_cursor;
    while (cursor) {
      const page = await t.mirrors.listTree(r(key, moving.url), "main", "", { limit: 3, cursor });
      expect(page.commit_hash).toBe(first.commit_hash);
      names.push(...page.entries.map((e) => e.name));
      cursor = page.next_cursor;
    }
    expect(names).not.toContain("zzz-new.txt");
    expect(new Set(names).size).toBe(names.length);
    const fresh = await t.mirrors.listTree(r(key, moving.url), "main", "", PAGE);
    expect(fresh.commit_hash).not.toBe(first.commit_hash);
    expect(fresh.entries.map((e) => e.name)).toEqual([...names, "zzz-new.txt"]);
  });

  it("prunes deleted branches", async () => {
    const t = await setup();
    const key = newKey();
    await moving.commit("short-lived", { "tmp.txt": "x\n" });
    await t.mirrors.sync(r(key, moving.url));
    expect((await t.mirrors.listRefs(r(key, moving.url))).branches.map((b) => b.name)).toContain("short-lived");
    await moving.git("update-ref", "-d", "refs/heads/short-lived");
    await t.mirrors.sync(r(key, moving.url), { force: true });
    expect((await t.mirrors.listRefs(r(key, moving.url))).branches.map((b) => b.name)).not.toContain("short-lived");
  });

  it("re-clones when the repository's URL changes", async () => {
    const t = await setup();
    const key = newKey();
    await t.mirrors.sync(r(key, moving.url));
    await t.mirrors.sync(r(key, fixture.url));
    expect(t.fetches(key)).toBe(2);
    expect((await t.mirrors.listRefs(r(key, fixture.url))).branches.map((b) => b.name)).toEqual(["feature", "main"]);
    // A trailing slash is the same repository.
    await t.mirrors.sync(r(key, `${fixture.url}/`));
    expect(t.fetches(key)).toBe(2);
  });

  it("keeps serving the last fetch when a refresh fails, but not to forced callers", async () => {
    const gone = await createFixtureRepo(join(root, "gone.git"));
    const t = await setup();
    const key = newKey();
    await t.mirrors.sync(r(key, gone.url));
    await gone.cleanup();
    t.advance(61_000);
    const tree = await t.mirrors.listTree(r(key, gone.url), "main", "", PAGE);
    expect(tree.commit_hash).toBe(gone.commits.main);
    expect(t.lines.some((l) => l.msg.includes("serving the previous fetch"))).toBe(true);
    const err = await caught(t.mirrors.sync(r(key, gone.url), { force: true }));
    expect(err).toBeInstanceOf(GitRemoteError);
  });

  it("removes a mirror; the next read fetches again", async () => {
    const t = await setup();
    const key = newKey();
    await t.mirrors.sync(r(key, moving.url));
    await t.mirrors.remove(key);
    expect(await readdir(t.cacheDir)).toEqual([".home"]);
    await t.mirrors.remove(key); // idempotent
    await t.mirrors.listRefs(r(key, moving.url));
    expect(t.fetches(key)).toBe(2);
  });
});

describe("the clone URL policy on reads of a cached mirror", () => {
  // Each read is tried twice: a refusal must hold for every read, not only the
  // first one after the setting changed.
  const reads = (m: GitMirrors, key: string, url: string): [string, () => Promise<unknown>][] => [
    ["listRefs", () => m.listRefs(r(key, url))],
    ["resolveCommit", () => m.resolveCommit(r(key, url), "main")],
    ["listTree", () => m.listTree(r(key, url), "main", "", PAGE)],
    ["readFile", () => m.readFile(r(key, url), "main", "README.md")],
  ];
  const readTwice = async (m: GitMirrors, key: string, url: string) => {
    const outcomes: { name: string; served: boolean; err: unknown }[] = [];
    for (const round of [1, 2]) {
      for (const [name, read] of reads(m, key, url)) {
        const err = await read().then(
          () => null,
          (e: unknown) => e,
        );
        outcomes.push({ name: `${name} #${round}`, served: err === null, err });
      }
    }
    return outcomes;
  };

  it("refuses a file:// mirror on every read once local repositories are turned off (fresh mirror, new process)", async () => {
    const allowed = await setup();
    const key = newKey();
    await allowed.mirrors.sync(r(key, fixture.url));
    // The operator turns local repositories off and restarts: same cache, fresh mirror.
    const strict = await setup({ cacheDir: allowed.cacheDir, allowLocal: false, now: Date.now });
    const outcomes = await readTwice(strict.mirrors, key, fixture.url);
    expect(outcomes.filter((o) => o.served).map((o) => o.name)).toEqual([]);
    for (const o of outcomes) {
      expect(o.err, o.name).toBeInstanceOf(DomainError);
      expect((o.err as DomainError).kind, o.name).toBe("conflict");
      expect((o.err as DomainError).message, o.name).toMatch(/not allowed/);
    }
    expect(strict.fetches(key)).toBe(0);
  });

  it("keeps refusing a mirror whose host now resolves to a private address until a fetch succeeds again", async () => {
    // A mirror fetched from an https host (made from the fixture: no network).
    const allowed = await setup();
    const key = newKey();
    const url = "https://git.example.com/acme/widgets.git";
    await allowed.mirrors.sync(r(key, fixture.url));
    const { writeFile } = await import("node:fs/promises");
    await writeFile(join(allowed.cacheDir, `${key}.git`, "codeplane-url"), `${url}\n`);
    const past = new Date(Date.now() - 3_600_000);
    await utimes(join(allowed.cacheDir, `${key}.git`, "codeplane-synced"), past, past);

    // DNS now answers with a private address: the refresh is refused before git
    // starts (nothing connects anywhere), and so is every read after it, although
    // the refused attempt made the mirror "fresh" again.
    const strict = await setup({ cacheDir: allowed.cacheDir, allowLocal: false, now: Date.now, lookup: async () => ["10.0.0.7"] });
    const outcomes = await readTwice(strict.mirrors, key, url);
    expect(outcomes.filter((o) => o.served).map((o) => o.name)).toEqual([]);
    for (const o of outcomes) {
      expect(o.err, o.name).toBeInstanceOf(DomainError);
      expect((o.err as DomainError).kind, o.name).toBe("conflict");
    }
  });
});

describe("remote failures over http", () => {
  let server: Server;
  let base: string;
  const seen: { url: string; authorization: string | undefined }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ url: req.url ?? "", authorization: req.headers.authorization });
      const path = req.url ?? "";
      if (path.startsWith("/hang/")) return; // never answers
      if (path.startsWith("/moved/")) {
        res.writeHead(301, { Location: "http://169.254.169.254/latest/meta-data/" });
      } else if (path.startsWith("/private/")) {
        res.writeHead(401, { "WWW-Authenticate": 'Basic realm="git"' });
      } else {
        res.writeHead(404);
      }
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it.each([
    ["moved", "redirect", "bad_request"],
    ["private", "auth_required", "bad_request"],
    ["missing", "not_a_repository", "bad_request"],
  ])("%s -> %s", async (path, reason, kind) => {
    const t = await setup();
    const err = await caught(t.mirrors.sync(r(newKey(), `${base}/${path}/x.git`)));
    expect(err).toBeInstanceOf(GitRemoteError);
    expect((err as GitRemoteError).reason).toBe(reason);
    expect((err as GitRemoteError).kind).toBe(kind);
    expect(await readdir(t.cacheDir)).toEqual([".home"]);
  });

  it("does not follow redirects", async () => {
    const t = await setup();
    seen.length = 0;
    await caught(t.mirrors.sync(r(newKey(), `${base}/moved/y.git`)));
    expect(seen.every((r) => r.url.startsWith("/moved/"))).toBe(true);
  });

  it("sends credentials as a header, never in the URL or the log", async () => {
    const t = await setup({ credentials: async () => ({ username: "x-access-token", password: "s3cret-token" }) });
    seen.length = 0;
    await caught(t.mirrors.sync(r(newKey(), `${base}/private/z.git`)));
    expect(seen.at(-1)!.authorization).toBe(`Basic ${Buffer.from("x-access-token:s3cret-token").toString("base64")}`);
    expect(JSON.stringify(t.lines)).not.toContain("s3cret-token");
    expect(JSON.stringify(t.lines)).not.toContain(Buffer.from("x-access-token:s3cret-token").toString("base64"));
  });

  it("gives up after commandTimeoutMs", async () => {
    const t = await setup({ commandTimeoutMs: 700 });
    const err = await caught(t.mirrors.sync(r(newKey(), `${base}/hang/x.git`)));
    expect((err as GitRemoteError).reason).toBe("timeout");
    expect((err as GitRemoteError).kind).toBe("unavailable");
    expect(await readdir(t.cacheDir)).toEqual([".home"]);
  });
});
