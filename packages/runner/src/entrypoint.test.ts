import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FrameSplitter, type ExitFrame, type Frame, type LogLine } from "@codeplane/frames";

const here = dirname(fileURLToPath(import.meta.url));
const SOURCE = join(here, "entrypoint.ts");
// The entrypoint needs Node 24 (type stripping); vitest may have been started by another node.
const NODE = Number(process.versions.node.split(".")[0]) >= 24 ? process.execPath : join(here, "..", "..", "..", "node_modules", ".bin", "node");

let dir: string;
let entrypoint: string;

beforeAll(() => {
  // Run a lone copy, as in the pod: no package.json beside it, nothing of the repo to import.
  dir = realpathSync(mkdtempSync(join(tmpdir(), "cp-entrypoint-")));
  entrypoint = join(dir, "entrypoint.ts");
  copyFileSync(SOURCE, entrypoint);
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface Result {
  frames: Frame[];
  raw: string;
  lines: LogLine[];
  stdout: string[];
  stderr: string[];
  exit: ExitFrame | undefined;
  status: number | null;
  ms: number;
}

interface RunOptions {
  /** Called with each frame as it arrives, e.g. to signal the entrypoint at the right moment. */
  onFrame?: (frame: Frame, child: ChildProcess) => void;
  /** Stop reading the entrypoint's stdout for this long at the start, to make it wait on us. */
  stallMs?: number;
  /** Variables added to the entrypoint's environment. */
  env?: Record<string, string>;
  /** Written to the entrypoint's stdin, which then ends (started ahead, --wait-for-command). */
  stdin?: string;
}

function run(args: string[], options: RunOptions = {}): Promise<Result> {
  const started = Date.now();
  const child = spawn(NODE, [entrypoint, ...args], {
    stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    env: { ...process.env, ...options.env },
  });
  if (options.stdin !== undefined) child.stdin!.end(options.stdin);
  const splitter = new FrameSplitter();
  const frames: Frame[] = [];
  const raw: Buffer[] = [];
  const take = (fs: Frame[]): void => {
    for (const f of fs) {
      frames.push(f);
      options.onFrame?.(f, child);
    }
  };
  child.stdout!.on("data", (chunk: Buffer) => {
    raw.push(chunk);
    take(splitter.push(chunk));
  });
  if (options.stallMs) {
    child.stdout!.pause();
    setTimeout(() => child.stdout!.resume(), options.stallMs);
  }
  child.stderr!.resume();
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (status) => {
      take(splitter.end());
      const lines = frames.flatMap((f) => (f.kind === "line" ? [f.line] : []));
      const exits = frames.flatMap((f) => (f.kind === "exit" ? [f.exit] : []));
      resolve({
        frames,
        raw: Buffer.concat(raw).toString("utf8"),
        lines,
        stdout: lines.filter((l) => l.stream === "stdout").map((l) => l.line),
        stderr: lines.filter((l) => l.stream === "stderr").map((l) => l.line),
        exit: exits[0],
        status,
        ms: Date.now() - started,
      });
    });
  });
}

/** Runs a shell script as the user's command: the cheapest child to start. */
function runSh(script: string, options?: RunOptions, flags: string[] = []): Promise<Result> {
  return run([...flags, "--", "sh", "-c", script], options);
}

/** Runs a Node program as the user's command. */
function runNode(program: string, options?: RunOptions, flags: string[] = []): Promise<Result> {
  return run([...flags, "--", NODE, "-e", program], options);
}

/** Every frame parses, seqs are 1..n once each in order, and the exit frame is last. */
function expectWellFormed(r: Result): void {
  expect(r.frames.filter((f) => f.kind === "foreign")).toEqual([]);
  const seqs = r.frames.map((f) => (f.kind === "line" ? f.line.seq : f.kind === "exit" ? f.exit.seq : f.kind === "metric" ? f.metric.seq : -1));
  expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  expect(r.frames.at(-1)?.kind).toBe("exit");
  expect(r.frames.filter((f) => f.kind === "exit")).toHaveLength(1);
  for (const l of r.lines) expect(Date.parse(l.ts)).not.toBeNaN();
}

// Concurrent: most of each test is waiting on process start-up and sleeps, and the machine is small.
describe.concurrent("entrypoint", () => {
  it("tags stdout and stderr lines, numbering both in one sequence", async () => {
    const r = await runNode(`
      const fs = require("node:fs");
      for (let i = 0; i < 50; i++) { fs.writeSync(1, "out " + i + "\\n"); fs.writeSync(2, "err " + i + "\\n"); }
    `);
    expectWellFormed(r);
    expect(r.stdout).toEqual(Array.from({ length: 50 }, (_, i) => `out ${i}`));
    expect(r.stderr).toEqual(Array.from({ length: 50 }, (_, i) => `err ${i}`));
    expect(r.exit).toMatchObject({ seq: 101, code: 0, signal: null });
    expect(r.status).toBe(0);
  });

  it("lets the command open /dev/stdout and /dev/stderr by name (real pipes, not sockets)", async () => {
    // papermill --stdout-file /dev/stdout, tee /dev/stderr, --log-file /dev/stdout: open(2) of a socket pair's /proc/self/fd/N fails with ENXIO.
    const r = await runSh("echo to-stdout > /dev/stdout && echo to-stderr > /dev/stderr && echo via-tee | tee /dev/stderr");
    expectWellFormed(r);
    expect(r.stdout).toEqual(["to-stdout", "via-tee"]);
    expect(r.stderr).toEqual(["to-stderr", "via-tee"]);
    expect(r.exit).toMatchObject({ code: 0 });
  });

  it("keeps the order across streams when the writes are apart in time", async () => {
    const r = await runSh("echo one; sleep 0.1; echo two >&2; sleep 0.1; echo three; sleep 0.1; echo four >&2");
    expectWellFormed(r);
    expect(r.lines.map((l) => [l.stream, l.line])).toEqual([
      ["stdout", "one"],
      ["stderr", "two"],
      ["stdout", "three"],
      ["stderr", "four"],
    ]);
  });

  it.each([
    [0, "true"],
    [3, "exit 3"],
    [255, "exit 255"],
  ])("exits with the command's status %i", async (code, script) => {
    const r = await runSh(script);
    expectWellFormed(r);
    expect(r.exit).toMatchObject({ code, signal: null });
    expect(r.status).toBe(code);
  });

  it("reports a command that is not on PATH like a shell: 127", async () => {
    const r = await run(["--", "codeplane-no-such-command", "arg"]);
    expectWellFormed(r);
    expect(r.lines).toMatchObject([{ seq: 1, stream: "stderr", line: "codeplane: command not found: codeplane-no-such-command" }]);
    expect(r.exit).toMatchObject({ seq: 2, code: 127, signal: null });
    expect(r.status).toBe(127);
  });

  it("reports a command that is not executable like a shell: 126", async () => {
    const script = join(dir, "not-executable.sh");
    writeFileSync(script, "#!/bin/sh\necho hi\n");
    chmodSync(script, 0o644);
    const r = await run(["--", script]);
    expectWellFormed(r);
    expect(r.stderr).toEqual([`codeplane: permission denied: ${script}`]);
    expect(r.exit).toMatchObject({ code: 126 });
    expect(r.status).toBe(126);
  });

  it("reports death by a signal as 128 + n and names the signal", async () => {
    const r = await runSh("echo before; kill -KILL $$");
    expectWellFormed(r);
    expect(r.stdout).toEqual(["before"]);
    expect(r.exit).toMatchObject({ code: 137, signal: "SIGKILL" });
    expect(r.status).toBe(137);
  });

  it("forwards SIGTERM to the command, which can finish cleanly", async () => {
    const r = await runSh(`trap 'echo got SIGTERM; exit 0' TERM; echo ready; while :; do sleep 0.02; done`, {
      onFrame: (f, child) => {
        if (f.kind === "line" && f.line.line === "ready") child.kill("SIGTERM");
      },
    });
    expectWellFormed(r);
    expect(r.stdout).toEqual(["ready", "got SIGTERM"]);
    expect(r.exit).toMatchObject({ code: 0, signal: null });
    expect(r.status).toBe(0);
  });

  it("drops the \\r of a \\r\\n ending but keeps a lone \\r inside a line", async () => {
    const r = await runSh(String.raw`printf 'a\r\nb\rc\n\r\nprogress 1%%\rprogress 2%%\r\n'`);
    expectWellFormed(r);
    expect(r.stdout).toEqual(["a", "b\rc", "", "progress 1%\rprogress 2%"]);
  });

  it("writes a last line that has no newline, on each stream", async () => {
    const r = await runSh("printf 'x\\ny'; printf z >&2");
    expectWellFormed(r);
    expect(r.stdout).toEqual(["x", "y"]);
    expect(r.stderr).toEqual(["z"]);
  });

  it("turns invalid UTF-8 into U+FFFD and keeps characters split across writes intact", async () => {
    // € is e2 82 ac and 😀 is f0 9f 98 80: both are cut between writes.
    const r = await runSh(
      String.raw`printf 'a\377\376b\n'; printf 'price \342'; sleep 0.03; printf '\202\254 5, \360\237'; sleep 0.03; printf '\230\200\n'; printf 'c\342\202' >&2`,
    );
    expectWellFormed(r);
    expect(r.stdout).toEqual(["a\ufffd\ufffdb", "price \u20ac 5, \ud83d\ude00"]);
    // A character cut off by the end of the stream is invalid too.
    expect(r.stderr).toEqual(["c\ufffd"]);
  });

  it("splits a 100 KiB line into pieces that stay under the CRI line limit and join back to it", async () => {
    const r = await runNode(`
      const unit = 'abc\\u20ac"\\\\\\t\\u0001\\ud83d\\ude00 ';
      const s = unit.repeat(Math.ceil((100 * 1024) / Buffer.byteLength(unit)));
      process.stdout.write(s + "\\n" + "next\\n");
      process.stderr.write(JSON.stringify(s) + "\\n");
    `);
    expectWellFormed(r);
    for (const frame of r.raw.split("\n").slice(0, -1)) expect(Buffer.byteLength(frame) + 1).toBeLessThanOrEqual(16 * 1024);
    const out = r.lines.filter((l) => l.stream === "stdout");
    expect(out.length).toBeGreaterThan(7);
    expect(out.slice(0, -2).every((l) => l.partial === true)).toBe(true);
    expect(out.slice(-2).map((l) => l.partial)).toEqual([undefined, undefined]);
    expect(out.at(-1)?.line).toBe("next");
    const whole = out
      .slice(0, -1)
      .map((l) => l.line)
      .join("");
    expect(Buffer.byteLength(whole)).toBeGreaterThanOrEqual(100 * 1024);
    const err = r.lines.filter((l) => l.stream === "stderr");
    expect(JSON.parse(err.map((l) => l.line).join(""))).toBe(whole);
  });

  it("honours --max-line-bytes, never leaving an empty piece before a \\r\\n", async () => {
    // 128 bytes leave 75 for the JSON string; a line that fits exactly stays whole even with "\r\n".
    const fits = "a".repeat(75);
    const r = await runSh(`printf '${fits}\\r\\n${fits}b\\n${"€".repeat(60)}\\n'`, undefined, ["--max-line-bytes", "128"]);
    expectWellFormed(r);
    for (const frame of r.raw.split("\n").slice(0, -1)) expect(Buffer.byteLength(frame) + 1).toBeLessThanOrEqual(128);
    const out = r.lines.filter((l) => l.stream === "stdout");
    expect(out.map((l) => [l.line, l.partial])).toEqual([
      [fits, undefined],
      [fits, true],
      ["b", undefined],
      ["€".repeat(25), true],
      ["€".repeat(25), true],
      ["€".repeat(10), undefined],
    ]);
  });

  it("loses nothing from a chatty command while its reader is slow", async () => {
    const r = await runNode(
      `
      const fs = require("node:fs");
      let out = "", err = "";
      for (let i = 0; i < 200000; i++) {
        if (i % 4 === 3) err += "e" + i + "\\n"; else out += "o" + i + "\\n";
        if (i % 5000 === 4999) { process.stdout.write(out); process.stderr.write(err); out = ""; err = ""; }
      }
    `,
      { stallMs: 300 },
    );
    expectWellFormed(r);
    expect(r.lines).toHaveLength(200000);
    // A loop, not toEqual: a deep diff of 200k lines costs seconds.
    const wrong: string[] = [];
    let o = 0;
    let e = 0;
    for (let i = 0; i < 200000 && wrong.length < 5; i++) {
      const [got, want] = i % 4 === 3 ? [r.stderr[e++], `e${i}`] : [r.stdout[o++], `o${i}`];
      if (got !== want) wrong.push(`${want}: got ${got}`);
    }
    expect(wrong).toEqual([]);
    expect(r.exit).toMatchObject({ seq: 200001, code: 0 });
    // The bound is loose because the test machine is shared (15.7 s seen at a
    // load average of 27 on 2 cores, 5.4 s at 18): it catches a
    // runner that stops reading for good after the stall, not a slow one.
    expect(r.ms).toBeLessThan(45_000);
  }, 90_000);

  // The background process outlives the bound by far, so a loaded machine's
  // slow spawn (4 s seen under CI load) cannot pass for waiting on it.
  it("does not wait forever for a background process that keeps the pipes open", { timeout: 40_000 }, async () => {
    const r = await run(["--", "sh", "-c", "sleep 30 & echo started"]);
    expectWellFormed(r);
    expect(r.stdout).toEqual(["started"]);
    expect(r.exit).toMatchObject({ code: 0 });
    expect(r.ms).toBeLessThan(20_000);
  });

  it("forwards records appended to $CODEPLANE_METRICS_FILE as m frames, while the command runs and at its end", { timeout: 30_000 }, async () => {
    let sawBeforeEnd = false;
    const file = join(dir, `metrics-${Math.random()}.jsonl`);
    writeFileSync(file, "");
    const r = await runSh(
      [
        'test -f "$CODEPLANE_METRICS_FILE" || exit 9',
        `echo '{"name":"loss","value":0.5,"step":0}' >> "$CODEPLANE_METRICS_FILE"`,
        "echo first",
        // Long enough for a poll: the record arrives before the command ends.
        'i=0; while [ $i -lt 300 ] && [ ! -f "$CODEPLANE_METRICS_FILE.seen" ]; do sleep 0.1; i=$((i+1)); done',
        `printf '%s\n\n%s\r\n' '{"name":"loss","value":0.25,"step":1}' '{"step":2,"metrics":{"acc":0.9}}' >> "$CODEPLANE_METRICS_FILE"`,
        `head -c 5000 /dev/zero | tr '\\0' x >> "$CODEPLANE_METRICS_FILE"; echo >> "$CODEPLANE_METRICS_FILE"`,
        `printf '%s' '{"name":"last","value":1}' >> "$CODEPLANE_METRICS_FILE"`,
        "echo done",
      ].join("\n"),
      {
        env: { CODEPLANE_METRICS_FILE: file },
        onFrame: (f) => {
          if (f.kind === "metric" && f.metric.record.includes('"step":0')) {
            sawBeforeEnd = true;
            // Tell the command its first record went out (it waits up to 30 s for this).
            writeFileSync(`${file}.seen`, "");
          }
        },
      },
    );
    expectWellFormed(r);
    expect(r.exit?.code).toBe(0);
    expect(sawBeforeEnd).toBe(true);
    const records = r.frames.flatMap((f) => (f.kind === "metric" ? [f.metric.record] : []));
    expect(records).toEqual([
      '{"name":"loss","value":0.5,"step":0}',
      '{"name":"loss","value":0.25,"step":1}',
      '{"step":2,"metrics":{"acc":0.9}}',
      '{"name":"last","value":1}',
    ]);
    // The first record went out while the command ran: before its last line.
    const at = (pred: (f: Frame) => boolean) => r.frames.findIndex(pred);
    expect(at((f) => f.kind === "metric")).toBeLessThan(at((f) => f.kind === "line" && f.line.line === "done"));
  });

  it("gives the command a fresh metrics file of its own when none is set, and removes it at the end", { timeout: 30_000 }, async () => {
    const r = await runSh(`echo "$CODEPLANE_METRICS_FILE"; echo '{"name":"n","value":3}' >> "$CODEPLANE_METRICS_FILE"`, {
      env: { CODEPLANE_METRICS_FILE: "" },
    });
    expectWellFormed(r);
    const path = r.stdout[0]!;
    expect(path).toMatch(/codeplane-metrics-[^/]+\/metrics\.jsonl$/);
    expect(r.frames.flatMap((f) => (f.kind === "metric" ? [f.metric.record] : []))).toEqual(['{"name":"n","value":3}']);
    expect(existsSync(path)).toBe(false);
  });

  it("runs the command in --workdir", async () => {
    const r = await runSh("pwd -P", undefined, ["--workdir", dir]);
    expectWellFormed(r);
    expect(r.stdout).toEqual([dir]);
  });

  it.each([
    ["no command", ["--"], "no command given"],
    ["no --", ["echo", "hi"], "unknown option"],
    ["an unknown flag", ["--verbose", "--", "true"], "unknown option"],
    ["a tiny --max-line-bytes", ["--max-line-bytes", "10", "--", "true"], "--max-line-bytes must be an integer >= 128"],
    ["a missing workdir", ["--workdir=/codeplane/no/such/dir", "--", "true"], "cannot use working directory /codeplane/no/such/dir: ENOENT"],
  ])("refuses %s with 125 and says why in a stderr frame", async (_name, args, message) => {
    const r = await run(args);
    expectWellFormed(r);
    expect(r.stderr).toHaveLength(1);
    expect(r.stderr[0]).toContain(message);
    expect(r.exit).toMatchObject({ code: 125 });
    expect(r.status).toBe(125);
  });

  it("started ahead, runs the command and the environment it is handed on stdin, not the one it was started with", async () => {
    const given = {
      args: ["--workdir", dir, "--", "sh", "-c", 'pwd -P; echo "run=$RUN_VAR start=${START_VAR:-none}"'],
      env: { PATH: process.env.PATH!, RUN_VAR: "r1" },
    };
    const r = await run(["--wait-for-command"], { env: { START_VAR: "from the pool" }, stdin: `${JSON.stringify(given)}\n` });
    expectWellFormed(r);
    expect(r.stdout).toEqual([dir, "run=r1 start=none"]);
    expect(r.exit).toMatchObject({ code: 0 });
  });

  it("started ahead, exits 0 writing nothing when its stdin ends without a command (the pod retired)", async () => {
    const r = await run(["--wait-for-command"], { stdin: "" });
    expect(r.raw).toBe("");
    expect(r.status).toBe(0);
  });

  it.each([
    ["not JSON", "{args\n"],
    ["no env", `${JSON.stringify({ args: ["--", "true"] })}\n`],
    ["args that are not strings", `${JSON.stringify({ args: ["--", 1], env: {} })}\n`],
  ])("started ahead, refuses a command line that is %s with 125", async (_name, line) => {
    const r = await run(["--wait-for-command"], { stdin: line });
    expectWellFormed(r);
    expect(r.stderr[0]).toContain("the command given on stdin is not");
    expect(r.status).toBe(125);
  });

  it("imports nothing but node:*, because it is copied alone into the pod", () => {
    const source = readFileSync(SOURCE, "utf8");
    const specifiers = [...source.matchAll(/^\s*(?:import|export)\b[^;]*?from\s+["']([^"']+)["']/gm)].map((m) => m[1]);
    expect(specifiers.length).toBeGreaterThan(0);
    expect(specifiers.filter((s) => !s?.startsWith("node:"))).toEqual([]);
    // One load is allowed: outputs.ts, copied beside it only into pods that collect outputs, and loaded only then.
    expect(source.replaceAll('import("./outputs.ts")', "")).not.toMatch(/\bimport\s*\(/);
  });
});
