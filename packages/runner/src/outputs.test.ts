import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FrameSplitter, type ExitFrame, type Frame } from "@codeplane/frames";
import { cleanRelative, collectOutputs, findOutputs } from "./outputs.ts";

// The runner's side of run outputs: what is found (never through a symlink),
// how each file is sent (its size declared, its bytes streamed, the token),
// what a refusal prints; and the entrypoint copied alone with outputs.ts
// beside it, as in the pod, sending the outputs after the command ends by
// itself, at the timeout it enforces, and on SIGTERM.

const here = dirname(fileURLToPath(import.meta.url));
const NODE = Number(process.versions.node.split(".")[0]) >= 24 ? process.execPath : join(here, "..", "..", "..", "node_modules", ".bin", "node");
const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

interface Received {
  path: string;
  size: string | undefined;
  token: string | undefined;
  sha256: string;
  bytes: number;
}

let server: Server;
let url: string;
let received: Received[];
/** path -> status the fake codeplane answers with (201 when absent). */
let answers: Map<string, { status: number; detail?: string }>;
let dir: string;

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    const hash = createHash("sha256");
    let bytes = 0;
    req.on("data", (c: Buffer) => {
      hash.update(c);
      bytes += c.length;
    });
    req.on("end", () => {
      const path = decodeURIComponent(req.url!.replace(/^\/internal\/runs\/r1\/outputs\//, ""));
      received.push({ path, size: req.headers["x-codeplane-size"] as string | undefined, token: req.headers.authorization, sha256: hash.digest("hex"), bytes });
      const a = answers.get(path) ?? { status: 201 };
      res.writeHead(a.status, { "content-type": "application/json" });
      res.end(JSON.stringify(a.status === 201 ? { path } : { detail: a.detail ?? "no" }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/internal/runs/r1/outputs`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
});

beforeEach(() => {
  received = [];
  answers = new Map();
  dir = realpathSync(mkdtempSync(join(tmpdir(), "cp-outputs-")));
  return () => rmSync(dir, { recursive: true, force: true });
});

it("imports nothing but node:*, because it is copied into the pod with the entrypoint alone", () => {
  const source = readFileSync(join(here, "outputs.ts"), "utf8");
  const specifiers = [...source.matchAll(/^\s*(?:import|export)\b[^;]*?from\s+["']([^"']+)["']/gm)].map((m) => m[1]);
  expect(specifiers.length).toBeGreaterThan(0);
  expect(specifiers.filter((s) => !s?.startsWith("node:"))).toEqual([]);
  expect(source).not.toMatch(/\bimport\s*\(/);
});

describe("finding outputs", () => {
  it("takes regular files under the folder and the analysed paths in the checkout, never through a symlink", () => {
    const out = join(dir, "out");
    const src = join(dir, "src");
    mkdirSync(join(out, "plots"), { recursive: true });
    mkdirSync(join(src, "results"), { recursive: true });
    mkdirSync(join(dir, "secret"));
    writeFileSync(join(dir, "secret", "key"), "secret");
    writeFileSync(join(out, "plots", "a.png"), "png");
    writeFileSync(join(out, "b.csv"), "csv");
    symlinkSync(join(dir, "secret", "key"), join(out, "link"));
    symlinkSync(join(dir, "secret"), join(out, "linkdir"));
    writeFileSync(join(src, "results", "score.json"), "{}");
    writeFileSync(join(src, "model.ckpt"), "ckpt");
    symlinkSync(join(dir, "secret"), join(src, "escape"));
    const { files, skipped } = findOutputs(out, src, ["results/", "./model.ckpt", "../secret/key", "/etc/passwd", "escape/key", "escape", "b.csv"]);
    expect(files.map((f) => f.name)).toEqual(["b.csv", "plots/a.png", "results/score.json", "model.ckpt"]);
    expect(skipped).toEqual(["link (a symlink, not followed)", "linkdir (a symlink, not followed)", "escape (a symlink, not followed)"]);
    expect(cleanRelative("a/../b")).toBeNull();
    expect(cleanRelative("./a/b/")).toBe("a/b");
  });
});

describe("sending outputs", () => {
  it("streams each file with its size and the token, and prints refusals", async () => {
    const out = join(dir, "out");
    mkdirSync(join(out, "a b"), { recursive: true });
    const big = Buffer.alloc(3 * 1024 * 1024, 7);
    writeFileSync(join(out, "a b", "ü.bin"), big);
    writeFileSync(join(out, "too-big.bin"), "xx");
    answers.set("too-big.bin", { status: 413, detail: 'Output "too-big.bin" was not stored: over the limit' });
    const said: string[] = [];
    const r = await collectOutputs({ dir: out, checkout: dir, paths: [], url, token: "tok", deadlineMs: Date.now() + 30_000, say: (l) => said.push(l) });
    expect(r).toEqual({ stored: 1, refused: 1, failed: 0 });
    expect(received).toEqual([
      { path: "a b/ü.bin", size: String(big.length), token: "Bearer tok", sha256: sha(big), bytes: big.length },
      { path: "too-big.bin", size: "2", token: "Bearer tok", sha256: sha(Buffer.from("xx")), bytes: 2 },
    ]);
    expect(said).toEqual(['codeplane: Output "too-big.bin" was not stored: over the limit', "codeplane: sent 1 output file (3.0 MiB); 1 not stored"]);
  });

  it("tries a 5xx again and gives up at the deadline", async () => {
    const out = join(dir, "out");
    mkdirSync(out);
    writeFileSync(join(out, "x.txt"), "x");
    answers.set("x.txt", { status: 503 });
    const said: string[] = [];
    const r = await collectOutputs({ dir: out, checkout: dir, paths: [], url, token: "t", deadlineMs: Date.now() + 1500, say: (l) => said.push(l) });
    expect(r.failed).toBe(1);
    expect(received.length).toBeGreaterThanOrEqual(2);
    expect(said[0]).toMatch(/^codeplane: output x.txt was not sent/);
  });
});

describe("the entrypoint with an output directory", () => {
  let bin: string;
  beforeAll(() => {
    // A lone copy of both files, as the pod's tools container makes it.
    bin = realpathSync(mkdtempSync(join(tmpdir(), "cp-entrypoint-outputs-")));
    copyFileSync(join(here, "entrypoint.ts"), join(bin, "entrypoint.ts"));
    copyFileSync(join(here, "outputs.ts"), join(bin, "outputs.ts"));
  });
  afterAll(() => rmSync(bin, { recursive: true, force: true }));

  function run(command: string, env: Record<string, string>, onStart?: (kill: () => void) => void) {
    const out = join(dir, "outputs");
    const child = spawn(NODE, [join(bin, "entrypoint.ts"), "--workdir", dir, "--", "sh", "-c", command], {
      env: {
        PATH: process.env.PATH ?? "",
        CODEPLANE_OUTPUT_DIR: out,
        CODEPLANE_OUTPUT_URL: url,
        CODEPLANE_OUTPUT_TOKEN: "cpo_t",
        CODEPLANE_OUTPUT_COLLECT_SECONDS: "30",
        ...env,
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const splitter = new FrameSplitter();
    const frames: Frame[] = [];
    child.stdout.on("data", (c: Buffer) => {
      for (const f of splitter.push(c)) {
        frames.push(f);
        if (f.kind === "line" && f.line.line === "started") onStart?.(() => child.kill("SIGTERM"));
      }
    });
    const started = Date.now();
    return new Promise<{ lines: string[]; exit: ExitFrame; ms: number }>((resolve) =>
      child.on("close", () =>
        resolve({
          lines: frames.flatMap((f) => (f.kind === "line" ? [f.line.line] : [])),
          exit: frames.flatMap((f) => (f.kind === "exit" ? [f.exit] : []))[0]!,
          ms: Date.now() - started,
        }),
      ),
    );
  }

  it("sends what the command wrote after it ends, hiding the token and URL from it", async () => {
    const r = await run(
      'mkdir -p "$CODEPLANE_OUTPUT_DIR/d" && echo hi > "$CODEPLANE_OUTPUT_DIR/d/h.txt" && echo "token=${CODEPLANE_OUTPUT_TOKEN:-none} url=${CODEPLANE_OUTPUT_URL:-none}"; exit 3',
      {},
    );
    expect(r.lines[0]).toBe("token=none url=none");
    expect(r.lines.at(-1)).toBe("codeplane: sent 1 output file (0.0 MiB)");
    expect(r.exit.code).toBe(3);
    expect(received.map((x) => [x.path, x.token])).toEqual([["d/h.txt", "Bearer cpo_t"]]);
  });

  it("stops the command at the run's timeout, counted from the pod's start, then sends its outputs", async () => {
    const startedFile = join(dir, "pod-started");
    writeFileSync(startedFile, String(Date.now() - 1000));
    const r = await run('echo part > "$CODEPLANE_OUTPUT_DIR/partial.txt"; echo started; sleep 30', {
      CODEPLANE_RUN_TIMEOUT_SECONDS: "3",
      CODEPLANE_POD_STARTED_FILE: startedFile,
    });
    expect(r.ms).toBeLessThan(10_000);
    expect(r.exit.code).toBe(143);
    expect(received.map((x) => x.path)).toEqual(["partial.txt"]);
    expect(r.lines.slice(-2)).toEqual(["codeplane: sent 1 output file (0.0 MiB)", "codeplane: timed out after 3s"]);
  }, 20_000);

  it("on SIGTERM (a cancellation) stops the command, SIGKILL if it ignores it, and sends its outputs", async () => {
    const r = await run('trap "" TERM; echo half > "$CODEPLANE_OUTPUT_DIR/half.txt"; echo started; sleep 30', {}, (kill) => kill());
    expect(r.ms).toBeLessThan(15_000);
    expect(r.exit.code).toBe(137);
    expect(received.map((x) => x.path)).toEqual(["half.txt"]);
    expect(readFileSync(join(dir, "outputs", "half.txt"), "utf8")).toBe("half\n");
  }, 20_000);
});
