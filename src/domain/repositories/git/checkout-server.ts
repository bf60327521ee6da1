import { randomBytes } from "node:crypto";
import { mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../../../logger.ts";
import { DomainError, DomainValidationError, notFound, unavailable } from "../../errors.ts";
import type { GitRepository } from "../git-port.ts";
import { FetchSlots } from "./fetch-slots.ts";
import type { MirrorCache } from "./mirror-cache.ts";
import type { MirrorReader } from "./mirror-reader.ts";
import { removeDirAtomically } from "./remove-dir.ts";
import { streamGit } from "./run.ts";

// Serving one commit to a workload's checkout (git's smart HTTP protocol,
// upload-pack side only). Each served commit gets a "view": a bare repository
// whose objects are the mirror's (through objects/info/alternates) and whose
// only ref points at that commit. upload-pack in a view advertises that one
// ref and, in stateless mode, accepts only wants reachable from it, so a token
// for one commit can fetch that commit's history and nothing else (not other
// branches, not unreachable objects), without copying a single object. Views
// are made once per repository and commit and shared by every workload that
// checks that commit out, so a mirror refresh happens once per commit rather
// than once per run.

const VIEW_REF = "refs/heads/codeplane";
const OID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

export interface CheckoutServerOptions {
  /** upload-pack processes at once (each is CPU heavy: it builds a pack). */
  maxConcurrentUploads: number;
  /** Longest wait for an upload slot before answering 503. */
  queueWaitMs: number;
  /** An exchange that moves no data this long is ended (a stalled client would hold its slot otherwise). */
  idleTimeoutMs: number;
  logger: Logger;
}

export interface UploadPackOptions {
  /** Whose share of the upload slots this takes. */
  account: string;
  /** The ref advertisement (GET info/refs) rather than a request/response exchange. */
  advertise: boolean;
  input: NodeJS.ReadableStream | null;
  output: NodeJS.WritableStream;
  timeoutMs: number;
  signal?: AbortSignal;
  /**
   * Called once a slot is granted, just before git starts: the caller commits
   * to answering (status, headers) only then, so a full server can still say 503.
   */
  onStart: () => void;
}

export class CheckoutServer {
  readonly #cache: MirrorCache;
  readonly #reader: MirrorReader;
  readonly #slots: FetchSlots;
  readonly #log: Logger;
  readonly #idleTimeoutSeconds: number;
  readonly #making = new Map<string, Promise<string>>();

  constructor(cache: MirrorCache, reader: MirrorReader, opts: CheckoutServerOptions) {
    this.#cache = cache;
    this.#reader = reader;
    this.#log = opts.logger;
    this.#idleTimeoutSeconds = Math.max(1, Math.ceil(opts.idleTimeoutMs / 1000));
    const total = Math.max(1, opts.maxConcurrentUploads);
    this.#slots = new FetchSlots({ total, perAccount: Math.max(1, Math.ceil(total / 2)), maxWaitMs: opts.queueWaitMs });
  }

  /**
   * The view that serves `commit` of `repo`, made if missing. The mirror is
   * fetched only when it lacks the commit (or is stale, as for any read).
   * Throws not found when the repository has no such commit.
   */
  async viewOf(repo: GitRepository, commit: string): Promise<string> {
    if (!OID.test(commit)) throw notFound(`Commit '${commit}'`);
    const dir = join(this.#cache.auxiliaryDir("views"), repo.id, `${commit}.git`);
    if (await isDir(dir)) return dir;
    const key = `${repo.id}/${commit}`;
    let making = this.#making.get(key);
    if (!making) {
      making = this.#make(repo, commit, dir).finally(() => this.#making.delete(key));
      this.#making.set(key, making);
    }
    return making;
  }

  /** Removes every view of a repository (with its mirror). */
  async remove(repoId: string): Promise<void> {
    const dir = join(this.#cache.auxiliaryDir("views"), repoId);
    await removeDirAtomically(dir, `${dir}.trash-${randomBytes(4).toString("hex")}`);
  }

  /**
   * Runs `git upload-pack --stateless-rpc` in a view: the ref advertisement
   * (`advertise`) or one request/response exchange. Output streams to
   * `output` with backpressure; `signal` stops git when the client goes away.
   * Resolves false when git failed (already logged), true otherwise; throws
   * GitBusyError (before onStart) when no slot became free in time.
   */
  async uploadPack(view: string, opts: UploadPackOptions): Promise<boolean> {
    const { binary, env } = this.#cache.localGit();
    return this.#slots.run(opts.account, async () => {
      opts.onStart();
      const res = await streamGit({
        gitBinary: binary,
        // Protocol v0 on purpose (GIT_PROTOCOL is not passed on): its stateless want check is what
        // limits a fetch to the view's one ref.
        args: [
          "-c",
          "uploadpack.allowAnySHA1InWant=false",
          "-c",
          "uploadpack.allowTipSHA1InWant=false",
          "-c",
          "uploadpack.allowReachableSHA1InWant=false",
          "-c",
          "uploadpack.allowFilter=true",
          "upload-pack",
          "--strict",
          `--timeout=${this.#idleTimeoutSeconds}`,
          "--stateless-rpc",
          ...(opts.advertise ? ["--advertise-refs"] : []),
          view,
        ],
        env,
        cwd: view,
        timeoutMs: opts.timeoutMs,
        input: opts.input,
        output: opts.output,
        signal: opts.signal,
      });
      if (res.aborted) return false;
      if (res.code !== 0 || res.timedOut) {
        this.#log.warn({ exit_code: res.code, timed_out: res.timedOut, stderr: res.stderr.slice(0, 2000) }, "git upload-pack failed");
        return false;
      }
      return true;
    });
  }

  async #make(repo: GitRepository, commit: string, dir: string): Promise<string> {
    // Resolving syncs the mirror when it is stale and fetches again once when the commit is missing.
    const resolved = await this.#reader.resolveCommit(repo, commit, ["path", "commit"]).catch((err: unknown) => {
      if ((err instanceof DomainError && err.kind === "not_found") || err instanceof DomainValidationError) throw notFound(`Commit '${commit}'`);
      throw err;
    });
    if (resolved !== commit) throw notFound(`Commit '${commit}'`);
    const mirror = this.#cache.mirrorPath(repo.id);
    const tmp = `${dir}.tmp-${randomBytes(4).toString("hex")}`;
    try {
      await mkdir(join(tmp, "objects", "info"), { recursive: true });
      await mkdir(join(tmp, "refs", "heads"), { recursive: true });
      await mkdir(join(tmp, "refs", "tags"), { recursive: true });
      const sha256 = commit.length === 64;
      await writeFile(
        join(tmp, "config"),
        `[core]\n\trepositoryformatversion = ${sha256 ? 1 : 0}\n\tbare = true\n${sha256 ? "[extensions]\n\tobjectformat = sha256\n" : ""}`,
      );
      await writeFile(join(tmp, "HEAD"), `ref: ${VIEW_REF}\n`);
      await writeFile(join(tmp, "objects", "info", "alternates"), `${join(mirror, "objects")}\n`);
      await writeFile(join(tmp, VIEW_REF), `${commit}\n`);
      await mkdir(join(dir, ".."), { recursive: true });
      await rename(tmp, dir).catch(async (err: NodeJS.ErrnoException) => {
        // Made meanwhile by another process sharing the cache: theirs is as good as ours.
        if (err.code !== "ENOTEMPTY" && err.code !== "EEXIST") throw err;
        await rm(tmp, { recursive: true, force: true });
      });
    } catch (err) {
      await rm(tmp, { recursive: true, force: true });
      this.#log.error({ err, repository_id: repo.id }, "could not prepare a checkout view");
      throw unavailable("Could not prepare the commit for checkout");
    }
    return dir;
  }
}

async function isDir(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory();
  } catch {
    return false;
  }
}
