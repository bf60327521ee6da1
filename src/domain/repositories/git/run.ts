import { spawn } from "node:child_process";

// One way to run git: an argv array (never a shell), an explicit environment,
// a hard timeout that kills the whole process group (git fetch starts
// remote helpers and index-pack, which a plain kill would orphan), and capped
// output so a huge tree or blob cannot exhaust memory.

export interface RunGitOptions {
  gitBinary: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  timeoutMs: number;
  input?: Buffer | string;
  /**
   * Bytes of stdout to keep. On reaching it git is stopped and the result says
   * `limited`; the caller decides whether a prefix is useful (the head of a
   * large blob) or an error (an absurdly large tree).
   */
  maxStdout: number;
  /**
   * Streams stdout to this function instead of collecting it (maxStdout does
   * not apply then). Returning false stops git on purpose (the result says
   * `stopped`); a throw stops git too and rejects with what was thrown.
   */
  onStdout?: (chunk: Buffer) => boolean;
}

export interface RunGitResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
  timedOut: boolean;
  /** stdout reached maxStdout and git was stopped on purpose. */
  limited: boolean;
  /** onStdout asked to stop and git was stopped on purpose. */
  stopped: boolean;
}

const MAX_STDERR = 64 * 1024;

/** git in a process group of its own, and the way to kill that whole group (its helpers too). */
function spawnGroup(opts: { gitBinary: string; args: string[]; env: Record<string, string>; cwd?: string | undefined }) {
  const child = spawn(opts.gitBinary, opts.args, { cwd: opts.cwd, env: opts.env, stdio: ["pipe", "pipe", "pipe"], detached: true, windowsHide: true });
  const killGroup = () => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  };
  return { child, killGroup };
}

export function runGit(opts: RunGitOptions): Promise<RunGitResult> {
  return new Promise((resolve, reject) => {
    const { child, killGroup } = spawnGroup(opts);

    const chunks: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = "";
    let timedOut = false;
    let limited = false;
    let stopped = false;
    let failure: { error: unknown } | null = null;
    let settled = false;

    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, opts.timeoutMs);

    child.stdout.on("data", (chunk: Buffer) => {
      if (limited || stopped || failure) return;
      if (opts.onStdout) {
        try {
          if (opts.onStdout(chunk) === false) stopped = true;
        } catch (error) {
          failure = { error };
        }
        if (stopped || failure) killGroup();
        return;
      }
      const room = opts.maxStdout - stdoutBytes;
      if (chunk.length >= room) {
        if (room > 0) chunks.push(chunk.subarray(0, room));
        stdoutBytes += Math.max(room, 0);
        limited = true;
        killGroup();
        return;
      }
      chunks.push(chunk);
      stdoutBytes += chunk.length;
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < MAX_STDERR) stderr += chunk.toString("utf8").slice(0, MAX_STDERR - stderr.length);
    });
    // git may exit (or be killed) before reading all of its input.
    child.stdin.on("error", () => {});

    child.on("error", (err) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(err);
    });
    child.on("close", (code, signal) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (failure) return reject(failure.error);
      resolve({ code, signal, stdout: Buffer.concat(chunks, stdoutBytes), stderr, timedOut, limited, stopped });
    });

    child.stdin.end(opts.input ?? "");
  });
}

export interface StreamGitOptions {
  gitBinary: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  timeoutMs: number;
  /** Piped to git's stdin (ended empty when null). */
  input: NodeJS.ReadableStream | null;
  /** Where git's stdout goes, with backpressure: a slow reader slows git down instead of filling memory. */
  output: NodeJS.WritableStream;
  /** Aborting (the client went away) stops git and its helpers. */
  signal?: AbortSignal;
}

export interface StreamGitResult {
  code: number | null;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
}

/** Like runGit, for a git process whose input and output are streams (upload-pack serving a clone). */
export function streamGit(opts: StreamGitOptions): Promise<StreamGitResult> {
  return new Promise((resolve, reject) => {
    const { child, killGroup } = spawnGroup(opts);
    let stderr = "";
    let timedOut = false;
    let aborted = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, opts.timeoutMs);
    const onAbort = () => {
      aborted = true;
      killGroup();
    };
    if (opts.signal?.aborted) onAbort();
    opts.signal?.addEventListener("abort", onAbort, { once: true });

    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < MAX_STDERR) stderr += chunk.toString("utf8").slice(0, MAX_STDERR - stderr.length);
    });
    child.stdin.on("error", () => {});
    if (opts.input) {
      opts.input.on("error", onAbort);
      opts.input.pipe(child.stdin);
    } else {
      child.stdin.end();
    }
    // Not ended by git's end: the caller may still have to finish the response.
    child.stdout.pipe(opts.output, { end: false });
    opts.output.on("error", onAbort);

    let settled = false;
    const finish = () => {
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
      opts.output.removeListener("error", onAbort);
    };
    child.on("error", (err) => {
      if (settled) return;
      settled = true;
      finish();
      reject(err);
    });
    child.on("close", (code) => {
      if (settled) return;
      settled = true;
      finish();
      resolve({ code, stderr, timedOut, aborted });
    });
  });
}
