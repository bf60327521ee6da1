/**
 * Sends a run's output files to codeplane when its command has ended (success, failure, timeout or
 * cancellation): loaded by entrypoint.ts, copied beside it into the pod, only when the run has an
 * output directory ($CODEPLANE_OUTPUT_DIR), so a pod whose Job predates outputs never needs it.
 *
 * What is sent: every regular file under $CODEPLANE_OUTPUT_DIR, named by its path inside it, then
 * the experiment's analysed output paths ($CODEPLANE_OUTPUT_PATHS, JSON) that are relative paths
 * inside the checkout (a file, or a folder's files), named by their path in the checkout; a name
 * already sent is not sent again. Symlinks are never followed (a link in the folder is skipped
 * with a note, so nothing outside it can be sent through one), each file is opened with O_NOFOLLOW
 * and checked to be the regular file that was listed; special files are skipped.
 *
 * How: one PUT per file to $CODEPLANE_OUTPUT_URL/<path> with the run's output token
 * ($CODEPLANE_OUTPUT_TOKEN; no storage credential), the body streamed from the file (bounded
 * memory for any size) and its size in X-Codeplane-Size, so a file over a limit is refused before
 * it is read. A refusal (413) is final and said on the run's stderr; network failures and 5xx
 * answers are tried again (three attempts); everything stops at the deadline it is given.
 * Imports only node:*.
 */
import { closeSync, constants as fsConstants, createReadStream, fstatSync, lstatSync, openSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";

export interface CollectOptions {
  /** $CODEPLANE_OUTPUT_DIR. */
  dir: string;
  /** The checkout, which the analysed output paths are relative to. */
  checkout: string;
  /** The analysed output paths ($CODEPLANE_OUTPUT_PATHS). */
  paths: readonly string[];
  /** $CODEPLANE_OUTPUT_URL: the run's upload door, without a trailing slash. */
  url: string;
  token: string;
  /** Give up (and say so) at this time, ms since the epoch. */
  deadlineMs: number;
  /** A line for the run's stderr. */
  say(line: string): void;
  fetch?: typeof fetch;
}

export interface Found {
  /** The name it is sent under. */
  name: string;
  /** Where it is on disk. */
  file: string;
  size: number;
}

const ATTEMPTS = 3;
const MAX_FILES_LISTED = 100_000;

/** A relative path inside the checkout with no "..", "." or empty segment, without a leading "./" or trailing "/"; null otherwise. */
export function cleanRelative(p: string): string | null {
  const clean = p.replace(/^(\.\/)+/, "").replace(/\/+$/, "");
  if (!clean || clean.startsWith("/") || clean.includes("\0")) return null;
  if (clean.split("/").some((s) => s === "" || s === "." || s === "..")) return null;
  return clean;
}

/** Regular files under root/rel (root itself when rel is ""), depth first in name order, never through a symlink. */
function walk(root: string, rel: string, prefix: string, out: Found[], skipped: string[]): void {
  const here = rel ? join(root, rel) : root;
  let st;
  try {
    st = lstatSync(here);
  } catch {
    return;
  }
  const name = prefix + rel;
  if (st.isSymbolicLink()) {
    skipped.push(`${name} (a symlink, not followed)`);
    return;
  }
  if (st.isFile()) {
    if (out.length < MAX_FILES_LISTED) out.push({ name, file: here, size: st.size });
    return;
  }
  if (!st.isDirectory()) {
    if (rel) skipped.push(`${name} (not a regular file)`);
    return;
  }
  let entries: string[];
  try {
    entries = readdirSync(here).sort();
  } catch {
    skipped.push(`${name || "."} (unreadable folder)`);
    return;
  }
  for (const e of entries) walk(root, rel ? `${rel}/${e}` : e, prefix, out, skipped);
}

/** The files to send, in order, and what was passed by with why. */
export function findOutputs(dir: string, checkout: string, paths: readonly string[]): { files: Found[]; skipped: string[] } {
  const files: Found[] = [];
  const skipped: string[] = [];
  walk(dir, "", "", files, skipped);
  for (const p of paths) {
    const clean = cleanRelative(p);
    if (clean === null) continue;
    // Each segment on the way is checked too: a symlinked folder in the checkout is not entered.
    const parts = clean.split("/");
    let safe = true;
    for (let i = 1; i < parts.length; i++) {
      try {
        if (lstatSync(join(checkout, ...parts.slice(0, i))).isSymbolicLink()) safe = false;
      } catch {
        safe = false;
      }
    }
    if (!safe) continue;
    const found: Found[] = [];
    walk(checkout, clean, "", found, skipped);
    const seen = new Set(files.map((f) => f.name));
    for (const f of found) if (!seen.has(f.name)) files.push(f);
  }
  return { files, skipped };
}

const mib = (n: number) => `${(n / 1048576).toFixed(1)} MiB`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function sendOne(f: Found, o: CollectOptions): Promise<"stored" | "refused" | "failed"> {
  const doFetch = o.fetch ?? fetch;
  const url = `${o.url}/${f.name.split("/").map(encodeURIComponent).join("/")}`;
  for (let attempt = 1; ; attempt++) {
    const left = o.deadlineMs - Date.now();
    if (left <= 0) {
      o.say(`codeplane: output ${f.name} was not sent: no time left before the run's deadline`);
      return "failed";
    }
    let fd: number;
    try {
      fd = openSync(f.file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
    } catch (err) {
      o.say(`codeplane: output ${f.name} could not be opened (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
      return "failed";
    }
    const st = fstatSync(fd);
    if (!st.isFile()) {
      closeSync(fd);
      o.say(`codeplane: output ${f.name} is not a regular file any more; not sent`);
      return "failed";
    }
    // The size it has now: a file still growing is sent as it is when read, and the server checks the count.
    const stream = createReadStream("", { fd, autoClose: true });
    try {
      const res = await doFetch(url, {
        method: "PUT",
        headers: { authorization: `Bearer ${o.token}`, "content-type": "application/octet-stream", "x-codeplane-size": String(st.size) },
        body: Readable.toWeb(stream) as ReadableStream<Uint8Array>,
        duplex: "half",
        signal: AbortSignal.timeout(left),
      });
      const text = await res.text();
      if (res.ok) return "stored";
      let detail = text.slice(0, 500);
      try {
        const parsed = JSON.parse(text) as { detail?: unknown };
        if (typeof parsed.detail === "string") detail = parsed.detail;
      } catch {
        // not JSON: the text itself
      }
      if (res.status === 413) {
        o.say(`codeplane: ${detail}`);
        return "refused";
      }
      if (res.status < 500) {
        o.say(`codeplane: output ${f.name} was refused (${res.status}): ${detail}`);
        return "failed";
      }
      throw new Error(`codeplane answered ${res.status}: ${detail.slice(0, 200)}`);
    } catch (err) {
      stream.destroy();
      if (attempt >= ATTEMPTS || Date.now() >= o.deadlineMs) {
        o.say(`codeplane: output ${f.name} was not sent: ${err instanceof Error ? err.message : String(err)}`);
        return "failed";
      }
      await sleep(1000 * attempt);
    }
  }
}

/** Finds and sends the run's outputs, saying on stderr what was sent and what was not. */
export async function collectOutputs(o: CollectOptions): Promise<{ stored: number; refused: number; failed: number }> {
  const { files, skipped } = findOutputs(o.dir, o.checkout, o.paths);
  for (const s of skipped) o.say(`codeplane: output ${s} skipped`);
  const counts = { stored: 0, refused: 0, failed: 0 };
  let bytes = 0;
  for (const f of files) {
    const r = await sendOne(f, o);
    counts[r] += 1;
    if (r === "stored") bytes += f.size;
  }
  if (files.length > 0) {
    const notStored = counts.refused + counts.failed;
    o.say(`codeplane: sent ${counts.stored} output file${counts.stored === 1 ? "" : "s"} (${mib(bytes)})${notStored ? `; ${notStored} not stored` : ""}`);
  }
  return counts;
}

/** The collection as the entrypoint runs it, from the environment; null when the run collects none. */
export function collectFromEnv(checkout: string, deadlineMs: number, say: (line: string) => void): Promise<unknown> | null {
  const dir = process.env.CODEPLANE_OUTPUT_DIR;
  const url = process.env.CODEPLANE_OUTPUT_URL;
  const token = process.env.CODEPLANE_OUTPUT_TOKEN;
  if (!dir || !url || !token) return null;
  let paths: string[] = [];
  try {
    const parsed = JSON.parse(process.env.CODEPLANE_OUTPUT_PATHS ?? "[]") as unknown;
    if (Array.isArray(parsed)) paths = parsed.filter((p): p is string => typeof p === "string");
  } catch {
    // no analysed paths
  }
  return collectOutputs({ dir, checkout, paths, url: url.replace(/\/+$/, ""), token, deadlineMs, say });
}
