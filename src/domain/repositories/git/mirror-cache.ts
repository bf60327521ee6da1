import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../../../logger.ts";
import { badRequest, DomainError, DomainValidationError, unavailable } from "../../errors.ts";
import { checkCloneUrlWithoutDns, inspectCloneUrl, type CloneUrlPolicyOptions, type HostLookup, type InspectedCloneUrl } from "../clone-url-policy.ts";
import type { GitAuth, GitRepository } from "../git-port.ts";
import { classifyGitFailure, gitRemoteError, GitRemoteError, redactUrls } from "./errors.ts";
import { FetchSlots } from "./fetch-slots.ts";
import { removeDirAtomically } from "./remove-dir.ts";
import { runGit, type RunGitResult } from "./run.ts";

export type { GitAuth } from "../git-port.ts";

export interface MirrorCacheOptions {
  /** Directory holding one bare mirror per repository (<repoKey>.git) and git's empty HOME. */
  cacheDir: string;
  /** A mirror older than this is fetched again before it is read. */
  refreshIntervalSeconds: number;
  /** Hard limit for every git process (fetches included). */
  commandTimeoutMs: number;
  /** Operator switch: file://, local paths, http://, git:// and private addresses. */
  allowLocal: boolean;
  /** ssh:// and scp-like URLs (only useful with SSH credentials in git's HOME). */
  allowSsh?: boolean;
  logger: Logger;
  /**
   * Credentials for a fetch, asked for just before each one runs (never
   * stored); used for http(s) only. Asked again with `refresh` once when the
   * server refused them (a cached token revoked early). A throw fails the
   * fetch with that error (a DomainError's message is what the caller sees).
   */
  credentials?: (repoKey: string, url: string, opts: { refresh: boolean }) => Promise<GitAuth | null>;
  /** Defaults to "git", found on `searchPath`. */
  gitBinary?: string;
  /** PATH for git and the ssh it may start. */
  searchPath?: string;
  /** DNS for the clone URL policy; injected in tests. */
  lookup?: HostLookup;
  /** Clock; injected in tests. */
  now?: () => number;
  /** Clones and fetches running at once, all accounts together (each is CPU and memory heavy); more wait. Default 4. */
  maxConcurrentFetches?: number;
  /** Clones and fetches running at once for one account; at most maxConcurrentFetches. Default 2. */
  maxConcurrentFetchesPerAccount?: number;
  /** Longest wait for a fetch slot; then the fetch fails with GitBusyError (503 + Retry-After). Default 10 s. */
  fetchQueueWaitMs?: number;
}

/** Never repeats in this process, so a removed and re-created mirror's stamp differs from every earlier one. */
let fetchStamps = 0;

interface MirrorState {
  /** The fetch running now, if any. */
  running: Promise<void> | null;
  /** A forced fetch waiting for the running one to finish (forced callers share it). */
  queued: Promise<void> | null;
  /** When a fetch last finished, successful or not (ms); 0 when unknown. */
  lastAttemptAt: number;
  /** From a process-wide counter, taken anew when a fetch finishes: what MirrorReader's ref cache checks. */
  stamp: number;
  /** The clone URL the mirror on disk was fetched from; undefined until read from disk. */
  url: string | null | undefined;
  /**
   * The policy refused the last fetch of this URL (a DNS answer that needs no
   * setting to change). Reads are refused with it until a later fetch is
   * allowed, although the refused attempt made the mirror look fresh.
   */
  refusal: { url: string; error: Error } | null;
}

const REPO_KEY = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
const MARKER = "codeplane-synced";
const URL_FILE = "codeplane-url";
const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const MAX_LISTING_BYTES = 64 * 1024 * 1024;
/** Longest record scan() accepts: a tree entry's header and a name git allows. */
const MAX_RECORD_BYTES = 64 * 1024;
const HEADS = "+refs/heads/*:refs/heads/*";
const TAGS = "+refs/tags/*:refs/tags/*";

/**
 * A cache of bare mirrors, one per repository, driven by the git CLI.
 * Mirrors are fetched on first use and refreshed when stale. Git runs here
 * and only here, always with the environment and limits set below.
 */
export class MirrorCache {
  readonly #opts: MirrorCacheOptions;
  readonly #log: Logger;
  readonly #home: string;
  readonly #git: string;
  readonly #now: () => number;
  readonly #state = new Map<string, MirrorState>();
  readonly #fetchSlots: FetchSlots;
  #ready: Promise<void> | null = null;

  constructor(opts: MirrorCacheOptions) {
    this.#opts = opts;
    this.#log = opts.logger;
    this.#home = join(opts.cacheDir, ".home");
    this.#git = opts.gitBinary ?? "git";
    this.#now = opts.now ?? Date.now;
    this.#fetchSlots = new FetchSlots({
      total: opts.maxConcurrentFetches ?? 4,
      perAccount: opts.maxConcurrentFetchesPerAccount ?? 2,
      maxWaitMs: opts.fetchQueueWaitMs ?? 10_000,
    });
  }

  /** The git binary and the environment for local git processes (no credentials, no user or system config). */
  localGit(): { binary: string; env: Record<string, string> } {
    return { binary: this.#git, env: this.#env() };
  }

  /** A folder of the cache that no mirror's name can take (mirror keys start with a letter or digit). */
  auxiliaryDir(name: string): string {
    if (!/^[a-z]+$/.test(name)) throw new Error(`invalid auxiliary folder name: ${name}`);
    return join(this.#opts.cacheDir, `.${name}`);
  }

  /** Where the mirror of `repoKey` lives. */
  mirrorPath(repoKey: string): string {
    if (!REPO_KEY.test(repoKey)) throw badRequest("Invalid repository key");
    return join(this.#opts.cacheDir, `${repoKey}.git`);
  }

  /**
   * Makes sure a mirror of the repository's URL exists and is fresh.
   * Concurrent callers share one fetch. When a refresh fails but an older
   * mirror of the same URL exists, non-forced callers keep reading the old one
   * (and the failure is logged); forced callers get the error.
   *
   * The clone URL policy is checked on every call, also when the mirror is
   * fresh and nothing is fetched: its DNS-free part (scheme, local paths,
   * literal addresses: what an operator setting decides) each time, its DNS
   * part on every fetch, and a fetch the policy refused keeps refusing reads
   * until a later fetch is allowed. So a repository the policy no longer
   * allows is not served from its mirror either.
   *
   * Throws DomainValidationError (loc body.url) when the URL breaks the clone
   * URL policy, GitRemoteError (a DomainError, kind bad_request or
   * unavailable) when fetching fails, GitBusyError (unavailable, with
   * retryAfterSeconds) when no fetch slot of the repository's account became
   * free in time.
   */
  async sync(repo: GitRepository, opts: { force?: boolean; auth?: GitAuth } = {}): Promise<void> {
    const { id: repoKey, url } = repo;
    const dir = this.mirrorPath(repoKey);
    checkCloneUrlWithoutDns(url, this.#policy());
    await this.#init();
    const st = this.#stateOf(repoKey);
    const force = opts.force === true;
    await this.#mirrorUrl(st, dir);

    // No awaits from here until a fetch is registered in `st`: this is what
    // makes concurrent callers find and share it.
    let fetch: Promise<void>;
    if (st.running) {
      if (!force) {
        fetch = st.running;
      } else {
        // The running fetch may have started before whatever made the caller
        // force (a push, say), so forced callers get one that starts later.
        st.queued ??= st.running
          .catch(() => {})
          .then(() => {
            st.queued = null;
            // Someone may have started a fetch in between; it started late enough.
            return st.running ?? this.#start(repo, dir, opts.auth);
          });
        fetch = st.queued;
      }
    } else {
      if (!force && this.#isFresh(st, url)) {
        if (st.refusal && st.refusal.url === urlKey(url)) throw st.refusal.error;
        return;
      }
      fetch = this.#start(repo, dir, opts.auth);
    }

    try {
      await fetch;
    } catch (err) {
      // A URL the policy now refuses is not served from cache either: the
      // operator (or DNS) has said no, and that should take effect.
      const refused = err instanceof DomainValidationError || (err instanceof GitRemoteError && err.reason === "refused");
      if (!force && !refused && (await this.#hasMirrorOf(st, dir, url))) {
        this.#log.warn({ repository_id: repoKey, err: describe(err) }, "git mirror refresh failed; serving the previous fetch");
        return;
      }
      throw err;
    }
  }

  /** See MirrorAccess.fetchStamp. */
  fetchStamp(repoKey: string): number {
    return this.#stateOf(repoKey).stamp;
  }

  /** Milliseconds since a fetch of `repoKey` last finished, successful or not; large when none is known. */
  sinceLastFetch(repoKey: string): number {
    return this.#now() - this.#stateOf(repoKey).lastAttemptAt;
  }

  /** Deletes the mirror (after any fetch in progress). */
  async remove(repoKey: string): Promise<void> {
    const dir = this.mirrorPath(repoKey);
    const st = this.#state.get(repoKey);
    if (st) await Promise.allSettled([st.running, st.queued]);
    this.#state.delete(repoKey);
    await removeDirAtomically(dir, join(this.#opts.cacheDir, `.trash-${repoKey}-${randomBytes(4).toString("hex")}`));
  }

  // --- fetching -------------------------------------------------------------

  #stateOf(repoKey: string): MirrorState {
    let st = this.#state.get(repoKey);
    if (!st) {
      st = { running: null, queued: null, lastAttemptAt: 0, stamp: ++fetchStamps, url: undefined, refusal: null };
      this.#state.set(repoKey, st);
    }
    return st;
  }

  #init(): Promise<void> {
    this.#ready ??= (async () => {
      await mkdir(this.#home, { recursive: true });
      // Leftovers of clones or removals interrupted by a crash. Only old ones:
      // no git command outlives commandTimeoutMs, so anything older is dead,
      // while a younger one may belong to another instance on this directory.
      const cutoff = Date.now() - this.#opts.commandTimeoutMs - 60_000;
      for (const name of await readdir(this.#opts.cacheDir)) {
        if (!name.startsWith(".tmp-") && !name.startsWith(".trash-")) continue;
        const path = join(this.#opts.cacheDir, name);
        const info = await stat(path).catch(() => null);
        if (info && info.mtimeMs < cutoff) await rm(path, { recursive: true, force: true });
      }
    })().catch((err: unknown) => {
      this.#ready = null;
      throw unavailable("The git cache directory is not usable", err);
    });
    return this.#ready;
  }

  async #mirrorUrl(st: MirrorState, dir: string): Promise<string | null> {
    if (st.url === undefined) {
      try {
        st.url = (await readFile(join(dir, URL_FILE), "utf8")).trim();
        if (st.lastAttemptAt === 0) st.lastAttemptAt = (await stat(join(dir, MARKER))).mtimeMs;
      } catch {
        st.url = null;
      }
    }
    return st.url;
  }

  async #hasMirrorOf(st: MirrorState, dir: string, url: string): Promise<boolean> {
    const have = await this.#mirrorUrl(st, dir);
    return have !== null && have === urlKey(url);
  }

  /** Needs st.url loaded (#mirrorUrl). Synchronous on purpose, see sync(). */
  #isFresh(st: MirrorState, url: string): boolean {
    if (st.url == null || st.url !== urlKey(url)) return false;
    return this.#now() - st.lastAttemptAt < this.#opts.refreshIntervalSeconds * 1000;
  }

  #policy(): CloneUrlPolicyOptions {
    return { allowLocal: this.#opts.allowLocal, allowSsh: this.#opts.allowSsh ?? false, lookup: this.#opts.lookup };
  }

  #start(repo: GitRepository, dir: string, auth: GitAuth | undefined): Promise<void> {
    const st = this.#stateOf(repo.id);
    const run = this.#fetch(repo, st, dir, auth).finally(() => {
      st.lastAttemptAt = this.#now();
      st.stamp = ++fetchStamps;
      st.running = null;
    });
    st.running = run;
    return run;
  }

  async #fetch(repo: GitRepository, st: MirrorState, dir: string, auth: GitAuth | undefined): Promise<void> {
    const { id: repoKey, url, account_id: account } = repo;
    const started = performance.now();
    // Checked on every fetch, not only at registration: DNS answers change.
    let target: InspectedCloneUrl;
    try {
      target = await inspectCloneUrl(url, this.#policy());
    } catch (err) {
      if (err instanceof DomainValidationError) st.refusal = { url: urlKey(url), error: err };
      throw err;
    }
    st.refusal = null;
    const hooked = !auth && this.#opts.credentials !== undefined;
    let credential = auth ?? (await this.#opts.credentials?.(repoKey, url, { refresh: false })) ?? undefined;
    let env = this.#env(target, credential);
    const config = this.#remoteConfig(target);
    const key = urlKey(url);
    // A credential from the hook that the server refused is asked for once more, fresh.
    const retryRefused = async (res: RunGitResult, again: () => Promise<RunGitResult>): Promise<RunGitResult> => {
      if (!hooked || !credential || res.timedOut || res.code === 0 || classifyGitFailure(res.stderr) !== "auth_required") return res;
      credential = (await this.#opts.credentials!(repoKey, url, { refresh: true })) ?? undefined;
      if (!credential) return res;
      env = this.#env(target, credential);
      return again();
    };

    if (await this.#hasMirrorOf(st, dir, url)) {
      const args = [
        ...config,
        "fetch",
        "--quiet",
        "--prune",
        "--atomic",
        "--no-tags",
        "--no-write-fetch-head",
        "--recurse-submodules=no",
        "--",
        target.url,
        HEADS,
        TAGS,
      ];
      const fetchOnce = () => this.#fetchSlots.run(account, () => this.exec(dir, args, { env }));
      const res = await retryRefused(await fetchOnce(), fetchOnce);
      if (res.code !== 0 || res.timedOut) throw this.#remoteFailure(st, repo, target, res, credential);
      await touch(join(dir, MARKER));
      this.#log.info({ repository_id: repoKey, ms: Math.round(performance.now() - started), mode: "fetch" }, "git mirror fetched");
      return;
    }

    // First fetch, or the repository's URL changed: clone afresh beside the
    // old mirror and swap, so a failure leaves nothing half-done behind.
    const tmp = join(this.#opts.cacheDir, `.tmp-${repoKey}-${randomBytes(4).toString("hex")}`);
    try {
      const cloneOnce = async () => {
        await rm(tmp, { recursive: true, force: true });
        return this.#fetchSlots.run(account, () =>
          this.exec(this.#opts.cacheDir, [...config, "clone", "--bare", "--quiet", "--no-local", "--template=", "--", target.url, tmp], { env }),
        );
      };
      const res = await retryRefused(await cloneOnce(), cloneOnce);
      if (res.code !== 0 || res.timedOut) throw this.#remoteFailure(st, repo, target, res, credential);
      await writeFile(join(tmp, URL_FILE), `${key}\n`);
      await writeFile(join(tmp, MARKER), "");
      const old = join(this.#opts.cacheDir, `.trash-${repoKey}-${randomBytes(4).toString("hex")}`);
      const hadOld = await rename(dir, old).then(
        () => true,
        () => false,
      );
      await rename(tmp, dir);
      if (hadOld) await rm(old, { recursive: true, force: true });
    } catch (err) {
      await rm(tmp, { recursive: true, force: true });
      st.url = undefined;
      throw err;
    }
    st.url = key;
    this.#log.info({ repository_id: repoKey, ms: Math.round(performance.now() - started), mode: "clone" }, "git mirror fetched");
  }

  #remoteFailure(st: MirrorState, repo: GitRepository, target: InspectedCloneUrl, res: RunGitResult, credential: GitAuth | undefined): GitRemoteError {
    const reason = res.timedOut ? "timeout" : classifyGitFailure(res.stderr);
    this.#log.warn(
      { repository_id: repo.id, reason, exit_code: res.code, stderr: redactSecret(redactUrls(res.stderr), credential).slice(0, 2000) },
      "git fetch failed",
    );
    const error = gitRemoteError(reason, target.host, this.#opts.commandTimeoutMs);
    // git's own transport rules (see #remoteConfig) refused: as final as the policy's refusal.
    if (reason === "refused") st.refusal = { url: urlKey(repo.url), error };
    return error;
  }

  /** `-c` settings for commands that talk to a remote. Nothing secret goes here: argv is public. */
  #remoteConfig(target: InspectedCloneUrl): string[] {
    const allowed = ["https"];
    if (this.#opts.allowSsh) allowed.push("ssh");
    if (this.#opts.allowLocal) allowed.push("http", "git", "file");
    const config = [
      "protocol.allow=never",
      ...allowed.map((p) => `protocol.${p}.allow=always`),
      // A redirect would go to a host the URL policy never saw.
      "http.followRedirects=false",
      "credential.helper=",
      "core.askPass=",
      "transfer.credentialsInUrl=die",
      "gc.autoDetach=false",
      "maintenance.autoDetach=false",
      "fetch.recurseSubmodules=false",
    ];
    if ((target.kind === "https" || target.kind === "http") && target.host && target.addresses.length > 0) {
      // Pin curl to the addresses the policy checked, so DNS cannot answer
      // differently (rebinding) between the check and the connection.
      const v4 = target.addresses.filter((a) => !a.includes(":"));
      const pinned = v4.length > 0 ? v4 : target.addresses.map((a) => `[${a}]`);
      config.push(`http.curloptResolve=${target.host}:${target.port}:${pinned.join(",")}`);
    }
    return config.flatMap((c) => ["-c", c]);
  }

  // --- running git ----------------------------------------------------------

  /** The environment for every git process: nothing inherited, no prompts, no user or system config. */
  #env(target?: InspectedCloneUrl, auth?: GitAuth): Record<string, string> {
    const env: Record<string, string> = {
      PATH: this.#opts.searchPath ?? DEFAULT_PATH,
      HOME: this.#home,
      XDG_CONFIG_HOME: join(this.#home, ".config"),
      LC_ALL: "C",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_TERMINAL_PROMPT: "0",
      GIT_LITERAL_PATHSPECS: "1",
      GIT_NO_REPLACE_OBJECTS: "1",
      GIT_PROTOCOL_FROM_USER: "0",
      GIT_SSH_COMMAND: "ssh -o BatchMode=yes -o StrictHostKeyChecking=accept-new",
    };
    if (auth && target && (target.kind === "https" || target.kind === "http")) {
      // Environment, not argv: /proc/<pid>/cmdline is world-readable, environ is not.
      const basic = Buffer.from(`${auth.username}:${auth.password}`).toString("base64");
      env.GIT_CONFIG_COUNT = "1";
      env.GIT_CONFIG_KEY_0 = "http.extraHeader";
      env.GIT_CONFIG_VALUE_0 = `Authorization: Basic ${basic}`;
    }
    return env;
  }

  /** Runs git in `dir`; without `env`, in the environment for local reads (no credentials). */
  exec(
    dir: string,
    args: string[],
    opts: { env?: Record<string, string>; input?: string; maxStdout?: number; onStdout?: (chunk: Buffer) => boolean } = {},
  ): Promise<RunGitResult> {
    return runGit({
      gitBinary: this.#git,
      args,
      env: opts.env ?? this.#env(),
      cwd: dir,
      timeoutMs: this.#opts.commandTimeoutMs,
      input: opts.input,
      maxStdout: opts.maxStdout ?? MAX_LISTING_BYTES,
      onStdout: opts.onStdout,
    }).catch((err: unknown) => {
      throw unavailable("Could not run git", err);
    });
  }

  /**
   * Runs a local read command whose output is NUL-terminated records and hands
   * each record to `onRecord` as it arrives, so a listing is never held in
   * memory whole. `onRecord` returning false stops git early (not a failure).
   * A record is only valid during the call. Throws like read().
   */
  async scan(dir: string, args: string[], onRecord: (record: Buffer) => boolean | void): Promise<void> {
    let rest: Buffer | null = null;
    let tooLong = false;
    const res = await this.exec(dir, args, {
      onStdout: (chunk) => {
        const buf = rest ? Buffer.concat([rest, chunk]) : chunk;
        let start = 0;
        for (let nul = buf.indexOf(0, start); nul >= 0; nul = buf.indexOf(0, start)) {
          const record = buf.subarray(start, nul);
          start = nul + 1;
          if (onRecord(record) === false) return false;
        }
        // Copied: a view would keep the whole chunk alive.
        rest = start < buf.length ? Buffer.from(buf.subarray(start)) : null;
        if (rest && rest.length > MAX_RECORD_BYTES) {
          tooLong = true;
          return false;
        }
        return true;
      },
    });
    if (res.stopped && !tooLong) return;
    if (res.code !== 0 || res.timedOut || tooLong) throw this.readFailure({ ...res, limited: tooLong }, args);
    if (rest) onRecord(rest); // a last record without its NUL
  }

  /** Runs a local read command and returns stdout, or throws unavailable. */
  async read(dir: string, args: string[], input?: string): Promise<Buffer> {
    const res = await this.exec(dir, args, { input });
    if (res.code !== 0 || res.timedOut || res.limited) throw this.readFailure(res, args);
    return res.stdout;
  }

  /** Logs a failed local read for operators and returns the error for the caller. */
  readFailure(res: RunGitResult, args: string[]): DomainError {
    this.#log.error(
      { command: args[0], exit_code: res.code, timed_out: res.timedOut, limited: res.limited, stderr: res.stderr.slice(0, 2000) },
      "git read failed",
    );
    if (res.limited) return badRequest("The listing is too large");
    return unavailable(res.timedOut ? "Reading the repository timed out" : "Reading the repository failed");
  }
}

/**
 * git never prints an http.extraHeader, but a server may echo what it was
 * sent: the credential (and its Basic form) is cut from anything logged.
 */
function redactSecret(text: string, credential: GitAuth | undefined): string {
  if (!credential?.password) return text;
  const basic = Buffer.from(`${credential.username}:${credential.password}`).toString("base64");
  return text.split(credential.password).join("[redacted]").split(basic).join("[redacted]");
}

/** How a clone URL is remembered in a mirror: trailing slashes do not make a new repository. */
function urlKey(url: string): string {
  return url.trim().replace(/(?<=[^/:])\/+$/, "");
}

async function touch(file: string): Promise<void> {
  const now = new Date();
  try {
    await utimes(file, now, now);
  } catch {
    await writeFile(file, "");
  }
}

function describe(err: unknown): { message: string; reason?: string } {
  if (err instanceof GitRemoteError) return { message: err.message, reason: err.reason };
  return { message: err instanceof Error ? err.message : String(err) };
}
