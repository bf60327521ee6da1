import { execFile as execFileCb, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort } from "./free-port.ts";

// A real S3-compatible server for tests: the Versity S3 Gateway (versitygw)
// over a temp folder, on a free loopback port, with one bucket and a root key
// made up here. hack/tools/versitygw.sh builds it from the Go module proxy
// once (cached under ~/.cache/codeplane/versitygw/<version>); a build that
// fails fails the suite with its own words, never a skip.

const execFile = promisify(execFileCb);
const ROOT = path.resolve(import.meta.dirname, "../..");

export interface S3Server {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The gateway's folder: <dataDir>/<bucket>/<key> are the objects. */
  dataDir: string;
  /** The gateway's own output so far, for a failure's message. */
  output(): string;
  stop(): Promise<void>;
}

/** The versitygw binary, built on first use (about 1.5 min on 2 cores with a cold Go module cache). */
export async function versitygwBinary(): Promise<string> {
  try {
    const { stdout } = await execFile(path.join(ROOT, "hack/tools/versitygw.sh"), [], { maxBuffer: 16 * 1024 * 1024, timeout: 900_000 });
    return stdout.trim().split("\n").pop()!;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`hack/tools/versitygw.sh could not build versitygw: ${e.message}\n${(e.stderr ?? "").slice(-4000)}`, { cause: err });
  }
}

async function waitForHttp(url: string, child: ChildProcess, output: () => string, seconds: number): Promise<void> {
  const until = Date.now() + seconds * 1000;
  for (;;) {
    try {
      // Any answer will do (an unsigned request gets 403): the gateway is listening.
      await fetch(url, { signal: AbortSignal.timeout(1000) });
      return;
    } catch {
      // not up yet
    }
    if (child.exitCode !== null) throw new Error(`versitygw exited (${child.exitCode}):\n${output()}`);
    if (Date.now() > until) throw new Error(`versitygw did not answer ${url} within ${seconds} s:\n${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startS3Server(opts: { bucket?: string } = {}): Promise<S3Server> {
  const bin = await versitygwBinary();
  const bucket = opts.bucket ?? "codeplane-test";
  const dataDir = mkdtempSync(path.join(tmpdir(), "codeplane-s3-"));
  // The posix backend serves each folder of its root as a bucket.
  mkdirSync(path.join(dataDir, bucket));
  const port = await freePort();
  const accessKeyId = `test${randomBytes(6).toString("hex")}`;
  const secretAccessKey = randomBytes(20).toString("hex");
  let out = "";
  // The key goes by environment, not argv, so no process listing shows it.
  const child = spawn(bin, ["--port", `127.0.0.1:${port}`, "--quiet", "posix", dataDir], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ROOT_ACCESS_KEY_ID: accessKeyId, ROOT_SECRET_ACCESS_KEY: secretAccessKey },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.on("data", (d) => (out = (out + String(d)).slice(-20_000)));
  child.stderr.on("data", (d) => (out = (out + String(d)).slice(-20_000)));
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(endpoint, child, () => out, 30);
  } catch (err) {
    child.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  return {
    endpoint,
    bucket,
    region: "us-east-1",
    accessKeyId,
    secretAccessKey,
    dataDir,
    output: () => out,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
        if (child.exitCode === null) child.kill("SIGKILL");
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
