import { execFile, spawn } from "node:child_process";
import { mkdtemp, mkdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";

// A small but awkward git repository for tests, built with `git fast-import`
// in one process (fast on a busy machine) with fixed identities and dates, so
// every object id is the same on every run and every machine.

const execFileP = promisify(execFile);

const IDENT = "Fixture Author <fixture@example.com>";
const BASE_TIME = 1_700_000_000; // 2023-11-14T22:13:20Z

/** Mode strings as git stores them in trees. */
const MODE = { file: "100644", exec: "100755", symlink: "120000", submodule: "160000" } as const;

export type FixtureFile = string | Buffer | { symlink: string } | { exec: string } | { submodule: string } | null; // null deletes the path in a follow-up commit

export interface FixtureRepo {
  /** Bare repository directory. */
  path: string;
  /** file:// URL of the repository (needs allowLocal). */
  url: string;
  /** Object ids, all 40-hex. */
  commits: {
    /** First commit on main: README.md only. Target of the lightweight tag. */
    initial: string;
    /** Tip of main (and HEAD). Target of the annotated tag v1.0.0. */
    main: string;
    /** Tip of feature: main plus feature.txt. */
    feature: string;
  };
  tags: {
    /** Lightweight tag `light` -> commits.initial. */
    light: string;
    /** Annotated tag `v1.0.0`: the tag object id and the commit it peels to. */
    annotated: { name: "v1.0.0"; object: string; commit: string };
  };
  /** The files on main, by path, as written (useful for comparing reads). */
  files: Record<string, FixtureFile>;
  /** Bytes of the large text file (300 KiB). */
  largeSize: number;
  /**
   * Adds a commit to `branch` (created from `from`, default main's tip, when it
   * does not exist) and returns its id. Dates keep increasing, so ids stay
   * deterministic for a given sequence of calls.
   */
  commit(branch: string, files: Record<string, FixtureFile>, opts?: { message?: string; from?: string }): Promise<string>;
  /** Runs git in the repository and returns trimmed stdout. */
  git(...args: string[]): Promise<string>;
  cleanup(): Promise<void>;
}

// 8-byte PNG signature, an IHDR chunk for a 1x1 image and some trailing bytes:
// enough NULs to be unmistakably binary.
const PNG = Buffer.from(
  "89504e470d0a1a0a0000000d4948445200000001000000010806000000" + "1f15c4890000000d49444154789c6300010000050001" + "0d0a2db40000000049454e44ae426082",
  "hex",
);

function largeText(): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 1; size < 300 * 1024; i++) {
    const line = `line ${String(i).padStart(6, "0")}: the quick brown fox jumps over the lazy dog\n`;
    lines.push(line);
    size += line.length;
  }
  return lines.join("").slice(0, 300 * 1024);
}

export const FIXTURE_UTF8 = "héllo wörld: 日本語のテキスト and an emoji 🎉 at the end\n";

function mainFiles(): Record<string, FixtureFile> {
  return {
    "README.md": "# Fixture\n\nA repository for codeplane tests.\n",
    "a/b/c/deep.txt": "deep inside a/b/c\n",
    "a/b/sibling.txt": "next to c\n",
    "a/top.txt": "top of a\n",
    "docs/guide.md": "# Guide\n\nSee [README](../README.md).\n",
    "image.png": PNG,
    "large.txt": largeText(),
    "link-to-readme": { symlink: "README.md" },
    "scripts/run.sh": { exec: "#!/bin/sh\necho run\n" },
    "utf8.txt": FIXTURE_UTF8,
    ".gitmodules": '[submodule "vendor/lib"]\n\tpath = vendor/lib\n\turl = https://example.com/lib.git\n',
    "vendor/lib": { submodule: "0123456789abcdef0123456789abcdef01234567" },
  };
}

function data(content: Buffer | string): Buffer[] {
  const buf = typeof content === "string" ? Buffer.from(content, "utf8") : content;
  return [Buffer.from(`data ${buf.length}\n`), buf, Buffer.from("\n")];
}

function fileCommand(path: string, file: FixtureFile): Buffer[] {
  if (file === null) return [Buffer.from(`D ${path}\n`)];
  if (typeof file === "string" || Buffer.isBuffer(file)) {
    return [Buffer.from(`M ${MODE.file} inline ${path}\n`), ...data(file)];
  }
  if ("symlink" in file) return [Buffer.from(`M ${MODE.symlink} inline ${path}\n`), ...data(file.symlink)];
  if ("exec" in file) return [Buffer.from(`M ${MODE.exec} inline ${path}\n`), ...data(file.exec)];
  return [Buffer.from(`M ${MODE.submodule} ${file.submodule} ${path}\n`)];
}

function commitCommand(ref: string, mark: number, time: number, message: string, from: string | null, files: Record<string, FixtureFile>): Buffer[] {
  const out: Buffer[] = [
    Buffer.from(`commit ${ref}\nmark :${mark}\n`),
    Buffer.from(`author ${IDENT} ${time} +0000\ncommitter ${IDENT} ${time} +0000\n`),
    ...data(message),
  ];
  if (from) out.push(Buffer.from(`from ${from}\n`));
  for (const [path, file] of Object.entries(files)) out.push(...fileCommand(path, file));
  out.push(Buffer.from("\n"));
  return out;
}

function gitEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    LC_ALL: "C",
  };
}

function fastImport(repo: string, env: NodeJS.ProcessEnv, stream: Buffer[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", ["fast-import", "--quiet", "--done"], { cwd: repo, env, stdio: ["pipe", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`git fast-import failed: ${stderr}`))));
    child.stdin.end(Buffer.concat([...stream, Buffer.from("done\n")]));
  });
}

/**
 * Builds the fixture repository. With `dir`, the bare repository is created
 * there (the directory must not exist or be empty); otherwise in a new
 * temporary directory. `cleanup()` removes it either way.
 */
export async function createFixtureRepo(dir?: string): Promise<FixtureRepo> {
  const root = dir ?? (await mkdtemp(join(tmpdir(), "codeplane-fixture-")));
  const path = dir ? root : join(root, "fixture.git");
  const home = join(root, dir ? ".fixture-home" : "home");
  await mkdir(path, { recursive: true });
  await mkdir(home, { recursive: true });
  const env = gitEnv(home);
  const git = async (...args: string[]) => (await execFileP("git", args, { cwd: path, env })).stdout.trim();

  await git("init", "--quiet", "--bare", "--initial-branch=main", "--object-format=sha1", ".");

  const files = mainFiles();
  const { "README.md": readme, ...rest } = files;
  await fastImport(path, env, [
    ...commitCommand("refs/heads/main", 1, BASE_TIME, "Initial commit\n", null, { "README.md": readme! }),
    ...commitCommand("refs/heads/main", 2, BASE_TIME + 60, "Add the awkward files\n", ":1", rest),
    ...commitCommand("refs/heads/feature", 3, BASE_TIME + 120, "Add a feature\n", ":2", {
      "feature.txt": "only on the feature branch\n",
    }),
    Buffer.from("reset refs/tags/light\nfrom :1\n\n"),
    Buffer.from(`tag v1.0.0\nfrom :2\ntagger ${IDENT} ${BASE_TIME + 180} +0000\n`),
    ...data("Release 1.0.0\n"),
  ]);

  const [initial, main, feature, light, tagObject, tagCommit] = (
    await git("rev-parse", "main~1", "main", "feature", "light", "v1.0.0", "v1.0.0^{commit}")
  ).split("\n") as [string, string, string, string, string, string];

  let clock = BASE_TIME + 3600;
  let marks = 100;
  const commit: FixtureRepo["commit"] = async (branch, changes, opts = {}) => {
    const ref = `refs/heads/${branch}`;
    const exists = await git("for-each-ref", "--format=%(objectname)", ref);
    const from = opts.from ?? (exists !== "" ? exists : main);
    clock += 60;
    marks += 1;
    await fastImport(path, env, commitCommand(ref, marks, clock, opts.message ?? `Update ${branch}\n`, from, changes));
    return git("rev-parse", ref);
  };

  return {
    path,
    url: pathToFileURL(path).href,
    commits: { initial, main, feature },
    tags: { light, annotated: { name: "v1.0.0", object: tagObject, commit: tagCommit } },
    files,
    largeSize: Buffer.byteLength(files["large.txt"] as string),
    commit,
    git,
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}
