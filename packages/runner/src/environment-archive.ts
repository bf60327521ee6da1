/**
 * Moves an installed environment between a pod and codeplane's internal endpoint, in codeplane's image:
 *
 *   node environment-archive.ts save      (the build Job's last container)
 *   node environment-archive.ts restore   (a run's `environment` init container)
 *
 * The archive is a gzipped tar of /workspace/env and the checkout-relative folders the install wrote
 * (CODEPLANE_CACHE_PATHS, e.g. node_modules), relative to /workspace, so a restore puts everything back
 * at the path it was installed at (a venv's scripts name their interpreter by absolute path).
 * The pod holds no storage credential: it presents CODEPLANE_ARCHIVE_TOKEN (the build's upload token,
 * or the run's checkout token) to CODEPLANE_ARCHIVE_URL, and codeplane decides what it may read or write.
 *
 * Streams end to end (tar | HTTP and HTTP | tar): an archive of any size passes through in bounded memory.
 * Network failures and 5xx answers are tried again (three attempts); a 4xx is final.
 * Imports only node:*: it runs from the codeplane image as it is.
 */
import { spawn } from "node:child_process";
import { closeSync, constants as fsConstants, existsSync, fstatSync, openSync, readSync } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";

// The pod's workspace volume; CODEPLANE_WORKSPACE moves it (the tests use a temporary directory).
const WORKSPACE = process.env.CODEPLANE_WORKSPACE ?? "/workspace";
const ATTEMPTS = 3;
const LOG_MAX_BYTES = 256 * 1024;

class Final extends Error {}

function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Final(`${name} is not set`);
  return v;
}

const say = (line: string) => process.stdout.write(`${line}\n`);
const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What to archive: env, and the cache paths that exist (relative, inside the checkout). */
export function archiveEntries(workspace: string, cachePaths: readonly string[], exists: (p: string) => boolean): string[] {
  const entries = ["env"];
  for (const p of cachePaths) {
    const clean = p.replace(/^\.\/+/, "").replace(/\/+$/, "");
    if (!clean || clean.startsWith("/") || clean.split("/").some((part) => part === ".." || part === "")) continue;
    if (exists(`${workspace}/src/${clean}`)) entries.push(`src/${clean}`);
  }
  return entries;
}

/** tar, its stderr passed through, or kept for the error when quiet (in a warm pod, stderr is the run's log). */
function tar(args: string[], quiet = false) {
  // By absolute path: the workspace (which the repository's install wrote) is never searched for it.
  const child = spawn("/bin/tar", args, { stdio: ["pipe", "pipe", "pipe"] });
  let tail = "";
  child.stderr.on("data", (c: Buffer) => {
    if (!quiet) process.stderr.write(c);
    tail = (tail + c.toString("utf8")).slice(-1000);
  });
  const done = new Promise<void>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve() : reject(new Final(`tar ${args[0]} exited with code ${code}${tail.trim() ? `: ${tail.trim()}` : ""}`)),
    );
  });
  return { child, done };
}

/**
 * The install's last LOG_MAX_BYTES bytes, read without trusting the file: the install wrote
 * it, so a symlink (to /proc/self/environ, say, where this container's token is) is refused
 * (O_NOFOLLOW), only a regular file is read, and only its tail, whatever its size.
 */
export function readSetupLog(file: string): Buffer | null {
  let fd: number;
  try {
    fd = openSync(file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return null;
    const length = Math.min(st.size, LOG_MAX_BYTES);
    const buf = Buffer.alloc(length);
    const read = readSync(fd, buf, 0, length, st.size - length);
    return buf.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

/** The install's output, handed in before the archive (which makes the environment ready): at most its last 256 KiB. */
async function saveLog(url: string, token: string): Promise<void> {
  const file = process.env.CODEPLANE_SETUP_LOG;
  const body = file ? readSetupLog(file) : null;
  if (!body) return;
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await fetch(url.replace(/\/archive$/, "/log"), {
        method: "PUT",
        headers: { authorization: `Bearer ${token}`, "content-type": "text/plain; charset=utf-8" },
        body,
      });
      if (res.ok) return;
      const answer = (await res.text()).slice(0, 500);
      if (res.status < 500) throw new Final(`codeplane refused the install's log (${res.status}): ${answer}`);
      throw new Error(`codeplane answered ${res.status}: ${answer}`);
    } catch (err) {
      if (err instanceof Final || attempt >= ATTEMPTS) throw err;
      await sleep(1000 * attempt);
    }
  }
}

async function save(): Promise<void> {
  const url = env("CODEPLANE_ARCHIVE_URL");
  const token = env("CODEPLANE_ARCHIVE_TOKEN");
  await saveLog(url, token);
  const cachePaths = JSON.parse(process.env.CODEPLANE_CACHE_PATHS ?? "[]") as string[];
  const entries = archiveEntries(WORKSPACE, cachePaths, existsSync);
  say(`saving the environment: ${entries.join(", ")}`);
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    const t = tar(["-C", WORKSPACE, "-czf", "-", "--numeric-owner", ...entries]);
    t.child.stdin.end();
    try {
      const res = await fetch(url, {
        method: "PUT",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/gzip" },
        body: Readable.toWeb(t.child.stdout) as ReadableStream<Uint8Array>,
        duplex: "half",
      });
      const text = await res.text();
      await t.done;
      if (res.ok) {
        const size = (JSON.parse(text) as { size?: number }).size ?? 0;
        say(`stored the environment: ${mib(size)} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
        return;
      }
      if (res.status < 500) throw new Final(`codeplane refused the environment (${res.status}): ${text.slice(0, 500)}`);
      throw new Error(`codeplane answered ${res.status}: ${text.slice(0, 200)}`);
    } catch (err) {
      t.child.kill();
      if (err instanceof Final || attempt >= ATTEMPTS) throw err;
      say(`storing the environment failed (${err instanceof Error ? err.message : String(err)}); trying again`);
      await sleep(1000 * attempt);
    }
  }
}

export interface RestoreOptions {
  url: string;
  token: string;
  warnings: readonly string[];
  workspace: string;
  /** Where the restore's lines go: stdout in an init container, the agent's diagnostics in a warm pod. */
  say: (line: string) => void;
  /** tar's complaints only in the error, never on stderr. */
  quiet?: boolean;
}

/**
 * Fetches the run's environment and unpacks it into the workspace. Exported for the warm agent, which
 * calls it in its own process (warm.ts): a node process of its own cost a second of a warm run's start.
 */
export async function restoreEnvironment(o: RestoreOptions): Promise<void> {
  for (const w of o.warnings) o.say(`warning: ${w}`);
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await fetch(o.url, { headers: { authorization: `Bearer ${o.token}` } });
      if (!res.ok || !res.body) {
        const text = (await res.text()).slice(0, 500);
        if (res.status < 500) throw new Final(`the environment could not be fetched (${res.status}): ${text}`);
        throw new Error(`codeplane answered ${res.status}: ${text}`);
      }
      const size = Number(res.headers.get("content-length") ?? 0);
      const answered = Date.now();
      const t = tar(["-C", o.workspace, "-xzf", "-", "--no-same-owner"], o.quiet);
      await Promise.all([pipeline(Readable.fromWeb(res.body), t.child.stdin), t.done]);
      // The split says where a slow restore's time went: codeplane's answer, or the transfer and unpacking.
      o.say(
        `restored the environment: ${mib(size)} in ${((Date.now() - started) / 1000).toFixed(3)} s (answered after ${((answered - started) / 1000).toFixed(3)} s, attempt ${attempt})`,
      );
      return;
    } catch (err) {
      if (err instanceof Final || attempt >= ATTEMPTS) throw err;
      o.say(`restoring the environment failed (${err instanceof Error ? err.message : String(err)}); trying again`);
      await sleep(1000 * attempt);
    }
  }
}

function restore(): Promise<void> {
  return restoreEnvironment({
    url: env("CODEPLANE_ARCHIVE_URL"),
    token: env("CODEPLANE_ARCHIVE_TOKEN"),
    warnings: JSON.parse(process.env.CODEPLANE_ENVIRONMENT_WARNINGS ?? "[]") as string[],
    workspace: WORKSPACE,
    say,
  });
}

async function main(): Promise<void> {
  const verb = process.argv[2];
  try {
    if (verb === "save") await save();
    else if (verb === "restore") await restore();
    else throw new Final("usage: environment-archive.ts save|restore");
  } catch (err) {
    process.stderr.write(`codeplane: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}

if (import.meta.main) await main();
