/**
 * A warm-pool pod's main container (issue 33; docs/developers/warm-pools.md):
 *
 *   node /codeplane/bin/warm.ts
 *
 * The pod starts holding no code, no token and no secret: only its pool credential
 * ($CODEPLANE_POOL_CREDENTIAL), which opens its own assignment and nothing else. It long-polls
 * codeplane's internal endpoint ($CODEPLANE_POOL_URL/internal/pool/assignment) until a run claims it,
 * then does what a cold run's pod does in its containers, in this one: checks the commit out with the
 * run's checkout token (git, by absolute path, the token in git's environment-borne config only),
 * restores the cached environment (environment-archive.ts, beside this file), and runs the command
 * under the framing entrypoint (entrypoint.ts, beside this file) with the run's variables, so its log
 * is exactly a cold run's. It reports each step (checked_out, environment_ready, started, ended) to the
 * same endpoint, and exits with the command's status: a pod serves one run, never two.
 *
 * An answer of 410 (retired, or its claim ended) makes it exit 0 having run nothing. A failure before
 * the command writes "codeplane: preprocessing failed: ..." to the termination log and exits 3.
 * Imports only node:*: it is copied alone into the pod.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

interface Assignment {
  run_id: string;
  commit: string;
  git_url: string;
  checkout_token: string;
  command: string[];
  env: Record<string, string>;
  environment: { archive_url: string; warnings: string[] } | null;
  outputs: { url: string; token: string; paths: string[]; collect_seconds: number } | null;
  timeout_seconds: number;
}

const TOOLS = dirname(new URL(import.meta.url).pathname);
const WORKSPACE = process.env.CODEPLANE_WORKSPACE ?? "/workspace";
const SOURCE_DIR = `${WORKSPACE}/src`;
const OUTPUT_DIR = `${WORKSPACE}/outputs`;
const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const GIT = process.env.CODEPLANE_GIT_BINARY ?? "/usr/bin/git";
const WAIT_SECONDS = 20;
export const PREPROCESSING_FAILED = "codeplane: preprocessing failed";

const say = (line: string) => process.stderr.write(`codeplane-warm: ${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const baseUrl = (process.env.CODEPLANE_POOL_URL ?? "").replace(/\/+$/, "");
const credential = process.env.CODEPLANE_POOL_CREDENTIAL ?? "";
// Nothing this program starts inherits the credential.
delete process.env.CODEPLANE_POOL_CREDENTIAL;
const auth = { authorization: `Bearer ${credential}` };

async function waitForAssignment(): Promise<Assignment | null> {
  for (let failures = 0; ;) {
    let res: Response;
    try {
      res = await fetch(`${baseUrl}/internal/pool/assignment?wait=${WAIT_SECONDS}`, { headers: auth, signal: AbortSignal.timeout((WAIT_SECONDS + 30) * 1000) });
    } catch (err) {
      failures += 1;
      if (failures % 10 === 1) say(`cannot reach ${baseUrl}: ${err instanceof Error ? err.message : String(err)}; trying again`);
      await sleep(Math.min(5000, 250 * failures));
      continue;
    }
    failures = 0;
    if (res.status === 200) return (await res.json()) as Assignment;
    await res.body?.cancel();
    if (res.status === 204) continue;
    if (res.status === 410) return null;
    if (res.status === 401) throw new Error("the pool credential was refused");
    await sleep(1000);
  }
}

/** Reports a step; never fails the run (the controller falls back on the pod's own state). */
function report(step: string): Promise<void> {
  return fetch(`${baseUrl}/internal/pool/progress/${step}`, { method: "POST", headers: auth, signal: AbortSignal.timeout(10_000) })
    .then((r) => r.body?.cancel())
    .catch(() => undefined);
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, stdio: ["ignore", "ignore", "pipe"], ...(cwd && { cwd }) });
    let tail = "";
    child.stderr.on("data", (c: Buffer) => {
      tail = (tail + c.toString("utf8")).slice(-4000);
    });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0
        ? resolve(0)
        : reject(new Error(`${file.split("/").pop()} ${args[0] ?? ""} exited with code ${code}: ${tail.trim().split("\n").slice(-5).join("\n")}`)),
    );
  });
}

function trustedEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: SYSTEM_PATH, ...extra };
  return env;
}

async function checkout(a: Assignment): Promise<void> {
  const env = trustedEnv({ GIT_TERMINAL_PROMPT: "0" });
  await run(GIT, ["init", "-q", SOURCE_DIR], env);
  const fetchEnv = trustedEnv({
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "http.extraHeader",
    GIT_CONFIG_VALUE_0: `Authorization: Bearer ${a.checkout_token}`,
  });
  await run(GIT, ["fetch", "-q", "--depth", "1", a.git_url, a.commit], fetchEnv, SOURCE_DIR);
  await run(GIT, ["-c", "advice.detachedHead=false", "checkout", "-q", "--detach", a.commit], env, SOURCE_DIR);
}

async function restore(a: Assignment): Promise<void> {
  if (!a.environment) return;
  await run(
    process.execPath,
    [join(TOOLS, "environment-archive.ts"), "restore"],
    trustedEnv({
      CODEPLANE_ARCHIVE_URL: a.environment.archive_url,
      CODEPLANE_ARCHIVE_TOKEN: a.checkout_token,
      CODEPLANE_ENVIRONMENT_WARNINGS: JSON.stringify(a.environment.warnings),
    }),
  );
}

function fail(message: string): never {
  const text = `${PREPROCESSING_FAILED}: ${message}`.slice(0, 3900);
  say(text);
  try {
    writeFileSync("/dev/termination-log", text);
  } catch {
    // not in a pod
  }
  process.exit(3);
}

async function main(): Promise<void> {
  if (!baseUrl || !credential) fail("CODEPLANE_POOL_URL and CODEPLANE_POOL_CREDENTIAL must be set");
  let a: Assignment | null;
  try {
    a = await waitForAssignment();
  } catch (err) {
    fail(err instanceof Error ? err.message : String(err));
  }
  if (!a) {
    say("retired without an assignment");
    process.exit(0);
  }
  // The run's timeout counts from its assignment, as a cold run's from its pod's start.
  const startedFile = join(TOOLS, "pod-started");
  try {
    writeFileSync(startedFile, String(Date.now()));
  } catch {
    // the runner counts from its own start
  }
  try {
    await checkout(a);
  } catch (err) {
    fail(`checkout: ${err instanceof Error ? err.message : String(err)}`);
  }
  void report("checked_out");
  try {
    await restore(a);
  } catch (err) {
    fail(`environment: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (a.environment) void report("environment_ready");
  // The checkout token is not needed any more (codeplane revokes it once the run has started).
  a.checkout_token = "";
  const outputEnv: Record<string, string> = a.outputs
    ? {
        CODEPLANE_OUTPUT_DIR: OUTPUT_DIR,
        CODEPLANE_OUTPUT_PATHS: JSON.stringify(a.outputs.paths),
        CODEPLANE_OUTPUT_URL: a.outputs.url,
        CODEPLANE_OUTPUT_TOKEN: a.outputs.token,
        CODEPLANE_RUN_TIMEOUT_SECONDS: String(a.timeout_seconds),
        CODEPLANE_POD_STARTED_FILE: startedFile,
        CODEPLANE_OUTPUT_COLLECT_SECONDS: String(a.outputs.collect_seconds),
      }
    : {};
  const env: NodeJS.ProcessEnv = { ...process.env, ...a.env, ...outputEnv, CODEPLANE_RUN_ID: a.run_id, CODEPLANE_COMMIT: a.commit };
  delete env.CODEPLANE_POOL_URL;
  const child = spawn(process.execPath, [join(TOOLS, "entrypoint.ts"), "--workdir", SOURCE_DIR, "--", ...a.command], { env, stdio: "inherit" });
  const started = report("started");
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, () => child.kill(signal));
  child.on("close", (code, signal) => {
    void Promise.all([started, report("ended")]).finally(() => process.exit(code ?? (signal ? 128 + 15 : 1)));
  });
}

void main();
