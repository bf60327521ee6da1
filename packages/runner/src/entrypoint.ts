/**
 * The run container's command: runs the user's argv and writes its stdout and stderr to our own
 * stdout as ONE stream of frames, one per line, so that readers of the pod log (which merges a
 * container's two streams on every cluster without alpha feature gates) can tell them apart and
 * agree on each line's sequence number.
 *
 *   node /codeplane/bin/entrypoint.ts [--workdir DIR] [--max-line-bytes N] -- <argv...>
 *
 * This file is copied alone into the pod, so it imports only node:* and duplicates the small
 * encoder; the format and the parser are in @codeplane/frames (packages/frames), and
 * entrypoint.test.ts parses this program's real output with that parser so the two cannot drift.
 *
 * Line splitting, per stream: lines end at "\n"; a "\r\n" ending loses its "\r", but a "\r"
 * anywhere else (progress bars) is kept as a character of the line. A line that would make a frame
 * longer than --max-line-bytes (default 16 KiB, the CRI runtimes' default log line limit, counted
 * with the frame header and JSON escapes) is written as pieces: every piece but the last has kind
 * "o+"/"e+". A last line without "\n" is written when the stream ends. Bytes are decoded as UTF-8
 * by one streaming decoder per stream, so a character split across reads stays intact and invalid
 * bytes become U+FFFD.
 *
 * Order: lines of one stream keep their order; across the two streams, frames follow the order in
 * which this process read the two pipes, which is close to, but not exactly, the order the child
 * wrote them.
 *
 * The child's stdout and stderr are FIFOs (real pipes) rather than Node's socket pairs, so a
 * program may open /dev/stdout or /dev/stderr by name, as many do (openFifos).
 *
 * Metrics: the child gets $CODEPLANE_METRICS_FILE (a fresh empty file under the temp directory, unless the
 * variable is already set), to which it may append JSON records, one per line (docs/users/results.md,
 * "Metrics"). While it runs, and once more before the exit frame, this program reads what was appended and
 * writes each record as an "m" frame, so records reach codeplane the way its output does: through the pod
 * log, with their own seq, and no credential in the pod. Records over 4 KiB are skipped.
 *
 * Started ahead (a warm-pool pod, warm.ts): `node entrypoint.ts --wait-for-command` starts and loads this
 * program while the pod waits for a run, holding nothing of any run, and reads its arguments and its whole
 * environment as one JSON line on stdin ({"args": [...], "env": {...}}) once the pod has one; then it is
 * as if started with them (the environment it was started with is replaced, not merged). It exits 0 with
 * no output when stdin ends without a line (the pod retired or failed before its command). This saves
 * Node's start and this file's loading (about 0.2 s on a loaded node) between the command's turn and its
 * first line.
 *
 * Exit status: the child's, or 128 + n when it died of signal n; 127 when the command is not
 * found, 126 when it cannot be executed; 125 when this program is misused (like env(1)).
 * The last frame is always the exit frame.
 *
 * Output files (issue 31): when the pod gives the run an output directory ($CODEPLANE_OUTPUT_DIR,
 * with $CODEPLANE_OUTPUT_URL and $CODEPLANE_OUTPUT_TOKEN), this program makes the directory, hands
 * the command neither the URL nor the token, and once the command has ended (and its output is
 * drained) sends the files with outputs.ts, loaded only then, before the exit frame; what it says
 * about them are stderr lines. It enforces the run's timeout itself ($CODEPLANE_RUN_TIMEOUT_SECONDS,
 * counted from $CODEPLANE_POD_STARTED_FILE, which the pod's first container writes): the command is
 * stopped (SIGTERM, SIGKILL STOP_GRACE_MS later) at the timeout, its outputs are sent within the
 * margin the Job's later deadline leaves ($CODEPLANE_OUTPUT_COLLECT_SECONDS), and the container's
 * termination message says "codeplane: timed out" so the run still reads as timed out. On SIGTERM
 * (the run cancelled, its pod stopped) the command gets the signal, then SIGKILL STOP_GRACE_MS later,
 * and the outputs are sent within the pod's grace period (the same margin).
 */
import { execFileSync, spawn } from "node:child_process";
import {
  closeSync,
  constants as fsConstants,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { Socket } from "node:net";
import { constants as osConstants, tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";

const MAGIC = "@cp1 ";
const DEFAULT_MAX_LINE_BYTES = 16 * 1024;
// Small enough to exercise splitting in tests, large enough for a header and a few characters.
const MIN_MAX_LINE_BYTES = 128;
// Worst-case bytes around the JSON string: "@cp1 " + 16-digit seq + " o+ " + 24-byte ts + " " + 2 quotes + "\n".
const FRAME_OVERHEAD = 5 + 16 + 4 + 24 + 1 + 2 + 1;
// After the child exits, a descendant that inherited its stdout can keep the pipes open forever;
// stop reading once they have been quiet this long rather than holding the run open.
const DRAIN_IDLE_MS = 1000;
const FORWARDED_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;
// A command stopped for its timeout or a cancellation gets this long after SIGTERM before SIGKILL.
const STOP_GRACE_MS = 5000;
// Time kept back from the collection margin: the Job's deadline counts from before the pod started.
const COLLECT_HEADROOM_MS = 15_000;

interface OutputCollection {
  /** When the command is stopped for its timeout, ms since the epoch; null: no timeout here. */
  killAt: number | null;
  /** How long collection may take, ms. */
  collectMs: number;
}

/** The run's output collection, from the environment the pod sets; null when it has none. */
function outputCollection(): OutputCollection | null {
  const env = process.env;
  if (!env.CODEPLANE_OUTPUT_DIR || !env.CODEPLANE_OUTPUT_URL || !env.CODEPLANE_OUTPUT_TOKEN) return null;
  const collect = Number(env.CODEPLANE_OUTPUT_COLLECT_SECONDS ?? "60");
  const collectMs = Math.max(5000, (Number.isFinite(collect) ? collect : 60) * 1000 - COLLECT_HEADROOM_MS);
  const timeout = Number(env.CODEPLANE_RUN_TIMEOUT_SECONDS);
  let started = Date.now();
  try {
    const written = Number(readFileSync(env.CODEPLANE_POD_STARTED_FILE ?? "", "utf8").trim());
    if (Number.isSafeInteger(written) && written > 0 && written <= started) started = written;
  } catch {
    // no start file: count from now
  }
  return { killAt: Number.isFinite(timeout) && timeout > 0 ? started + timeout * 1000 : null, collectMs };
}

type LineKind = "o" | "e";

let seq = 0;
let lastMs = -1;
let lastTs = "";

function timestamp(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastTs = new Date(ms).toISOString();
  }
  return lastTs;
}

function encodeLine(kind: LineKind, text: string, partial: boolean): string {
  seq += 1;
  return `${MAGIC}${seq} ${kind}${partial ? "+" : ""} ${timestamp()} ${JSON.stringify(text)}\n`;
}

function encodeMetric(record: string): string {
  seq += 1;
  return `${MAGIC}${seq} m ${timestamp()} ${JSON.stringify(record)}\n`;
}

function encodeExit(code: number, signal: string | null): string {
  seq += 1;
  return `${MAGIC}${seq} x ${timestamp()} ${JSON.stringify({ code, signal })}\n`;
}

let scannedCost = 0;

/**
 * How many UTF-8 bytes JSON.stringify makes of s (without the quotes), up to the longest prefix
 * that fits in budget: returns that prefix's length and leaves its cost in scannedCost.
 * Never splits a surrogate pair.
 */
function scan(s: string, budget: number): number {
  let cost = 0;
  let i = 0;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    let w: number;
    let n = 1;
    if (c < 0x20) w = c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : 6;
    else if (c === 0x22 || c === 0x5c) w = 2;
    else if (c < 0x80) w = 1;
    else if (c < 0x800) w = 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      w = 4;
      n = 2;
    } else if (c >= 0xd800 && c <= 0xdfff) w = 6;
    else w = 3;
    if (cost + w > budget) break;
    cost += w;
    i += n;
  }
  scannedCost = cost;
  return i;
}

class LineSplitter {
  #kind: LineKind;
  #budget: number;
  #decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  #pending = "";
  #cost = 0;

  constructor(kind: LineKind, budget: number) {
    this.#kind = kind;
    this.#budget = budget;
  }

  push(chunk: Uint8Array, out: string[]): void {
    this.#take(this.#decoder.decode(chunk, { stream: true }), out);
  }

  end(out: string[]): void {
    this.#take(this.#decoder.decode(), out);
    if (this.#pending === "") return;
    while (this.#cost > this.#budget) this.#cutPiece(out);
    out.push(encodeLine(this.#kind, this.#pending, false));
    this.#pending = "";
    this.#cost = 0;
  }

  #take(text: string, out: string[]): void {
    let start = 0;
    for (;;) {
      const nl = text.indexOf("\n", start);
      const end = nl === -1 ? text.length : nl;
      if (end > start) this.#append(start === 0 && end === text.length ? text : text.slice(start, end), out);
      if (nl === -1) return;
      let line = this.#pending;
      if (line.endsWith("\r")) line = line.slice(0, -1);
      out.push(encodeLine(this.#kind, line, false));
      this.#pending = "";
      this.#cost = 0;
      start = nl + 1;
    }
  }

  #append(segment: string, out: string[]): void {
    this.#pending += segment;
    scan(segment, Infinity);
    this.#cost += scannedCost;
    while (this.#cost > this.#budget) {
      // A final "\r" may be the first half of a "\r\n" and then is not part of the line:
      // cutting here would leave an empty last piece.
      if (this.#cost - 2 <= this.#budget && this.#pending.endsWith("\r")) return;
      this.#cutPiece(out);
    }
  }

  #cutPiece(out: string[]): void {
    const i = scan(this.#pending, this.#budget);
    out.push(encodeLine(this.#kind, this.#pending.slice(0, i), true));
    this.#pending = this.#pending.slice(i);
    this.#cost -= scannedCost;
  }
}

const METRICS_POLL_MS = 250;
const METRICS_MAX_RECORD_BYTES = 4096;
const METRICS_READ_BYTES = 64 * 1024;

/**
 * Follows the metrics file by path from where it last stopped: each complete line (a record) becomes an
 * "m" frame. Only a regular file is read, never through a symlink. A last line without "\n" is taken at the end.
 */
class MetricsTail {
  #path: string;
  #offset = 0;
  #pending: Buffer = Buffer.alloc(0);
  #buf: Buffer | null = null;

  constructor(path: string) {
    this.#path = path;
  }

  poll(out: string[]): void {
    let fd: number;
    try {
      fd = openSync(this.#path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
    } catch {
      return;
    }
    try {
      const st = fstatSync(fd);
      if (!st.isFile() || st.size <= this.#offset) return;
      const buf = (this.#buf ??= Buffer.allocUnsafe(METRICS_READ_BYTES));
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, this.#offset);
        if (n <= 0) break;
        this.#offset += n;
        this.#take(buf.subarray(0, n), out);
      }
    } catch {
      // Unreadable for now: try again at the next poll.
    } finally {
      closeSync(fd);
    }
  }

  end(out: string[]): void {
    this.poll(out);
    this.#emit(this.#pending, out);
    this.#pending = Buffer.alloc(0);
  }

  #take(chunk: Buffer, out: string[]): void {
    let data = this.#pending.length ? Buffer.concat([this.#pending, chunk]) : chunk;
    for (let nl = data.indexOf(10); nl !== -1; nl = data.indexOf(10)) {
      this.#emit(data.subarray(0, nl), out);
      data = data.subarray(nl + 1);
    }
    // A line longer than a record may be is dropped as it grows, not held.
    this.#pending = data.length > METRICS_MAX_RECORD_BYTES ? Buffer.alloc(0) : Buffer.from(data);
  }

  #emit(line: Buffer, out: string[]): void {
    if (line.length === 0 || line.length > METRICS_MAX_RECORD_BYTES) return;
    const text = line.toString("utf8").replace(/\r$/, "").trim();
    if (text) out.push(encodeMetric(text));
  }
}

/** The file the child appends its metric records to: the variable's, or a fresh empty one in a folder of its own (`made`, removed at the end). */
function metricsFile(): { path: string; made: string | null } | null {
  const given = process.env.CODEPLANE_METRICS_FILE;
  if (given) return { path: given, made: null };
  try {
    const made = mkdtempSync(join(tmpdir(), "codeplane-metrics-"));
    const path = join(made, "metrics.jsonl");
    writeFileSync(path, "", { mode: 0o600 });
    return { path, made };
  } catch {
    return null;
  }
}

interface Options {
  workdir: string | undefined;
  maxLineBytes: number;
  argv: string[];
}

const USAGE = "usage: entrypoint.ts [--workdir DIR] [--max-line-bytes N] -- COMMAND [ARG...] | entrypoint.ts --wait-for-command";
const WAIT_FOR_COMMAND = "--wait-for-command";

function parseArgs(args: string[]): Options | string {
  const options: Options = { workdir: undefined, maxLineBytes: DEFAULT_MAX_LINE_BYTES, argv: [] };
  let i = 0;
  while (i < args.length) {
    const arg = args[i] as string;
    if (arg === "--") {
      options.argv = args.slice(i + 1);
      break;
    }
    const eq = arg.indexOf("=");
    const name = arg.startsWith("--") && eq !== -1 ? arg.slice(0, eq) : arg;
    let value: string | undefined;
    if (name !== arg) value = arg.slice(eq + 1);
    else {
      value = args[i + 1];
      i += 1;
    }
    if (value === undefined) return `${name} needs a value; ${USAGE}`;
    if (name === "--workdir") options.workdir = value;
    else if (name === "--max-line-bytes") {
      const n = Number(value);
      if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(n) || n < MIN_MAX_LINE_BYTES) {
        return `--max-line-bytes must be an integer >= ${MIN_MAX_LINE_BYTES}, got ${JSON.stringify(value)}`;
      }
      options.maxLineBytes = n;
    } else return `unknown option ${JSON.stringify(arg)}; ${USAGE}`;
    i += 1;
  }
  if (options.argv.length === 0) return `no command given; ${USAGE}`;
  return options;
}

let stdoutBroken = false;
let finished = false;

function finish(lastFrames: string, code: number): void {
  if (finished) return;
  finished = true;
  process.exitCode = code;
  if (stdoutBroken) process.exit(code);
  // Exit only once everything is handed to the log, or a reader may miss the exit frame.
  process.stdout.write(lastFrames, () => process.exit(code));
}

function signalNumber(signal: string): number {
  return (osConstants.signals as Record<string, number | undefined>)[signal] ?? 0;
}

/** Started ahead: waits for its one line on stdin, then runs as main would have with those arguments and that environment. */
function waitForCommand(): void {
  // The command's stdout and stderr pipes are made now too: they hold nothing until the command writes.
  const fifos = openFifos();
  let text = "";
  let begun = false;
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk: string) => {
    if (begun) return;
    text += chunk;
    const nl = text.indexOf("\n");
    if (nl === -1) return;
    begun = true;
    process.stdin.destroy();
    let given: { args?: unknown; env?: unknown };
    try {
      given = JSON.parse(text.slice(0, nl)) as typeof given;
    } catch {
      given = {};
    }
    const { args, env } = given;
    const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");
    if (!strings(args) || !env || typeof env !== "object" || !Object.values(env).every((v) => typeof v === "string")) {
      watchStdout();
      finish(encodeLine("e", `codeplane: the command given on stdin is not {"args": [strings], "env": {name: string}}`, false) + encodeExit(125, null), 125);
      return;
    }
    for (const name of Object.keys(process.env)) delete process.env[name];
    Object.assign(process.env, env);
    main(args, fifos);
  });
  process.stdin.on("end", () => {
    if (!begun) process.exit(0);
  });
  process.stdin.on("error", () => {
    if (!begun) process.exit(0);
  });
}

/** A reader that went away must not kill the run: keep running the command, drop the output. */
function watchStdout(): void {
  process.stdout.on("error", () => {
    stdoutBroken = true;
    onDrain();
  });
}

function main(args: string[], fifosMadeAhead?: Fifos | null): void {
  watchStdout();

  const parsed = parseArgs(args);
  if (typeof parsed === "string") {
    finish(encodeLine("e", `codeplane: ${parsed}`, false) + encodeExit(125, null), 125);
    return;
  }
  const { argv, maxLineBytes } = parsed;
  const cwd = parsed.workdir ?? process.cwd();
  try {
    if (!statSync(cwd).isDirectory()) throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" });
  } catch (e) {
    const reason = (e as NodeJS.ErrnoException).code ?? String(e);
    finish(encodeLine("e", `codeplane: cannot use working directory ${cwd}: ${reason}`, false) + encodeExit(125, null), 125);
    return;
  }

  const command = argv[0] as string;
  const outputs = outputCollection();
  let childEnv: NodeJS.ProcessEnv | undefined;
  if (outputs) {
    try {
      mkdirSync(process.env.CODEPLANE_OUTPUT_DIR!, { recursive: true });
    } catch {
      // the command will find out; collection sends what is there
    }
    // The command needs neither where the outputs go nor the token they are sent with.
    childEnv = { ...process.env };
    delete childEnv.CODEPLANE_OUTPUT_URL;
    delete childEnv.CODEPLANE_OUTPUT_TOKEN;
    delete childEnv.CODEPLANE_POD_STARTED_FILE;
  }
  const fifos = fifosMadeAhead === undefined ? openFifos() : fifosMadeAhead;
  const metricsPlace = metricsFile();
  const metricsPath = metricsPlace?.path;
  const metrics = metricsPath ? new MetricsTail(metricsPath) : null;
  const env = metricsPath ? { ...(childEnv ?? process.env), CODEPLANE_METRICS_FILE: metricsPath } : childEnv;
  const child = spawn(command, argv.slice(1), {
    cwd,
    ...(env && { env }),
    stdio: ["ignore", fifos ? fifos[0].write : "pipe", fifos ? fifos[1].write : "pipe"],
  });
  if (fifos) for (const f of fifos) closeSync(f.write);
  const streams: Readable[] = fifos ? fifos.map((f) => new Socket({ fd: f.read, readable: true, writable: false })) : [child.stdout!, child.stderr!];
  const splitters = [new LineSplitter("o", maxLineBytes - FRAME_OVERHEAD), new LineSplitter("e", maxLineBytes - FRAME_OVERHEAD)];
  let open = 2;
  let blocked = false;
  let exit: { code: number; signal: string | null } | null = null;
  let idle: NodeJS.Timeout | undefined;

  const write = (frames: string[]): void => {
    if (frames.length === 0 || stdoutBroken) return;
    if (!process.stdout.write(frames.join("")) && !blocked) {
      blocked = true;
      for (const s of streams) s.pause();
      if (idle) clearTimeout(idle);
    }
  };

  const armIdle = (): void => {
    if (idle) clearTimeout(idle);
    if (exit === null || blocked || open === 0) return;
    idle = setTimeout(() => {
      for (const s of streams) s.destroy();
    }, DRAIN_IDLE_MS);
  };

  onDrain = () => {
    if (!blocked) return;
    blocked = false;
    for (const s of streams) s.resume();
    armIdle();
  };
  process.stdout.on("drain", onDrain);

  const metricsTimer = metrics
    ? setInterval(() => {
        const frames: string[] = [];
        metrics.poll(frames);
        write(frames);
      }, METRICS_POLL_MS)
    : undefined;
  metricsTimer?.unref();

  let timedOut = false;
  let stopping: NodeJS.Timeout | undefined;
  let collectBy: number | null = null;
  /** Stops the command for its timeout or a cancellation: SIGTERM now, SIGKILL if it is still there STOP_GRACE_MS later. */
  const stop = (signal: NodeJS.Signals): void => {
    if (child.pid === undefined || exit !== null) return;
    child.kill(signal);
    if (!stopping) stopping = setTimeout(() => exit === null && child.kill("SIGKILL"), STOP_GRACE_MS);
  };
  let deadline: NodeJS.Timeout | undefined;
  if (outputs?.killAt != null) {
    deadline = setTimeout(
      () => {
        timedOut = true;
        collectBy = Date.now() + outputs.collectMs;
        stop("SIGTERM");
      },
      Math.max(0, outputs.killAt - Date.now()),
    );
  }
  let collecting = false;
  const maybeFinish = (): void => {
    if (exit === null || open > 0) return;
    if (idle) clearTimeout(idle);
    if (deadline) clearTimeout(deadline);
    if (stopping) clearTimeout(stopping);
    if (metricsTimer) clearInterval(metricsTimer);
    const ended = exit;
    // The metrics records appended last go before the exit frame, which is always the last.
    const finishWithMetrics = (): void => {
      const last: string[] = [];
      metrics?.end(last);
      if (metricsPlace?.made) rmSync(metricsPlace.made, { recursive: true, force: true });
      finish(last.join("") + encodeExit(ended.code, ended.signal), ended.code);
    };
    if (!outputs) return finishWithMetrics();
    if (collecting) return;
    collecting = true;
    const say = (line: string) => write([encodeLine("e", line, false)]);
    const by = collectBy ?? Date.now() + outputs.collectMs;
    // Loaded only now, and only here: a pod whose Job predates outputs has no outputs.ts beside this file.
    import("./outputs.ts")
      .then((m) => m.collectFromEnv(cwd, by, say))
      .catch((err: unknown) => say(`codeplane: the outputs could not be sent: ${err instanceof Error ? err.message : String(err)}`))
      .finally(() => {
        if (timedOut) {
          say(`codeplane: timed out after ${process.env.CODEPLANE_RUN_TIMEOUT_SECONDS}s`);
          try {
            writeFileSync("/dev/termination-log", `codeplane: timed out after ${process.env.CODEPLANE_RUN_TIMEOUT_SECONDS}s`);
          } catch {
            // not in a pod
          }
        }
        finishWithMetrics();
      });
  };

  streams.forEach((stream, i) => {
    const splitter = splitters[i] as LineSplitter;
    let done = false;
    stream.on("data", (chunk: Buffer) => {
      const frames: string[] = [];
      splitter.push(chunk, frames);
      write(frames);
      armIdle();
    });
    // The child's pipes can only fail like a closed pipe: treat it as the end of the stream.
    stream.on("error", () => {});
    stream.on("close", () => {
      if (done) return;
      done = true;
      open -= 1;
      const frames: string[] = [];
      splitter.end(frames);
      write(frames);
      maybeFinish();
    });
  });

  child.on("error", (e: NodeJS.ErrnoException) => {
    // Errors after a successful spawn (a failed kill) change nothing about the run.
    if (child.pid !== undefined) return;
    const [message, code] =
      e.code === "ENOENT"
        ? [`codeplane: command not found: ${command}`, 127]
        : e.code === "EACCES"
          ? [`codeplane: permission denied: ${command}`, 126]
          : [`codeplane: cannot execute ${command}: ${e.code ?? e.message}`, 126];
    finish(encodeLine("e", message, false) + encodeExit(code, null), code);
  });

  child.on("exit", (code, signal) => {
    exit = signal !== null ? { code: 128 + signalNumber(signal), signal } : { code: code ?? 0, signal: null };
    armIdle();
    maybeFinish();
  });

  for (const signal of FORWARDED_SIGNALS) {
    process.on(signal, () => {
      if (outputs && signal === "SIGTERM") {
        // The pod is being stopped (a cancellation, or the Job's deadline): the grace period is for the outputs.
        collectBy = Math.min(collectBy ?? Infinity, Date.now() + outputs.collectMs);
        stop("SIGTERM");
        return;
      }
      if (child.pid !== undefined && exit === null) child.kill(signal);
    });
  }
}

/**
 * The child's stdout and stderr as real pipes (FIFOs), so a program that opens /dev/stdout or
 * /dev/stderr by name (`--log-file /dev/stdout`, `tee /dev/stderr`, papermill's --stdout-file) can:
 * Node's own "pipe" stdio is a socket pair, which open(2) of /proc/self/fd/1 refuses (ENXIO).
 * The read ends are opened first (non-blocking, so no writer is waited for), then the write ends;
 * the names are removed at once. null when FIFOs cannot be made (no mkfifo): Node's pipes then.
 */
type Fifos = [{ read: number; write: number }, { read: number; write: number }];

function openFifos(): Fifos | null {
  let dir: string | undefined;
  try {
    dir = mkdtempSync(join(tmpdir(), "codeplane-stdio-"));
    const paths = [join(dir, "out"), join(dir, "err")];
    execFileSync("mkfifo", ["-m", "600", ...paths], { stdio: "ignore" });
    const ends = paths.map((p) => {
      const read = openSync(p, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
      return { read, write: openSync(p, fsConstants.O_WRONLY) };
    });
    return [ends[0]!, ends[1]!];
  } catch {
    return null;
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}

let onDrain = (): void => {};

if (process.argv[2] === WAIT_FOR_COMMAND && process.argv.length === 3) waitForCommand();
else main(process.argv.slice(2));
