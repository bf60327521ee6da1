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
import { spawn, type ChildProcess } from "node:child_process";
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

/** Reports a step, with the diagnostics when given; never fails the run (the controller falls back on the pod's own state). */
// One after the other: codeplane stamps each step when its report arrives, so the run's timeline keeps their order.
let reports: Promise<void> = Promise.resolve();
function report(step: string, withDiagnostics = false): Promise<void> {
  const body = withDiagnostics ? { body: JSON.stringify(diagnostics), headers: { ...auth, "content-type": "application/json" } } : { headers: auth };
  reports = reports.then(() =>
    fetch(`${baseUrl}/internal/pool/progress/${step}`, { method: "POST", ...body, signal: AbortSignal.timeout(10_000) })
      .then((r) => r.body?.cancel())
      .catch(() => undefined),
  );
  return reports;
}

/**
 * What the agent measured since its assignment arrived, sent with its last report before the command
 * starts (stored beside the claim, migration 0029): never written to the pod's log, which is the run's output.
 */
const diagnostics = { steps_ms: {} as Record<string, number>, notes: [] as string[] };
let assignedAt = 0;
const mark = (step: string) => {
  diagnostics.steps_ms[step] = Date.now() - assignedAt;
};
const note = (text: string) => {
  for (const line of text.split("\n")) if (line.trim() && diagnostics.notes.length < 20) diagnostics.notes.push(line.trim().slice(0, 300));
};

/** Runs a step's program; what it prints on stdout becomes notes when keep is set (else it is dropped). */
function run(file: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string, keep = false): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, stdio: ["ignore", keep ? "pipe" : "ignore", "pipe"], ...(cwd && { cwd }) });
    let tail = "";
    child.stdout?.on("data", (c: Buffer) => note(c.toString("utf8")));
    child.stderr?.on("data", (c: Buffer) => {
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

type Archiver = typeof import("./environment-archive.ts");

/** Fetches the commit's objects into the repository made while waiting (no files written yet). */
async function fetchCommit(a: Assignment): Promise<void> {
  const fetchEnv = trustedEnv({
    GIT_TERMINAL_PROMPT: "0",
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: "http.extraHeader",
    GIT_CONFIG_VALUE_0: `Authorization: Bearer ${a.checkout_token}`,
  });
  // No automatic maintenance after the fetch: a process of its own (`git maintenance run --auto`), in series,
  // with nothing to do in a repository that lives for one run.
  await run(GIT, ["-c", "maintenance.auto=false", "-c", "gc.auto=0", "fetch", "-q", "--depth", "1", a.git_url, a.commit], fetchEnv, SOURCE_DIR);
  mark("git_fetch");
}

const checkoutFiles = (a: Assignment, force: boolean) =>
  run(
    GIT,
    ["-c", "advice.detachedHead=false", "checkout", "-q", ...(force ? ["-f"] : []), "--detach", a.commit],
    trustedEnv({ GIT_TERMINAL_PROMPT: "0" }),
    SOURCE_DIR,
  );

/** Restores the cached environment in this process (a node process of its own cost a second). */
async function restore(a: Assignment, archiver: Archiver): Promise<void> {
  if (!a.environment) return;
  mark("environment_requested");
  await archiver.restoreEnvironment({
    url: a.environment.archive_url,
    token: a.checkout_token,
    warnings: a.environment.warnings,
    workspace: WORKSPACE,
    say: note,
    quiet: true,
  });
  mark("environment_restored");
}

/**
 * Checks out and restores at once: the commit's objects and the environment arrive side by side,
 * then the commit's files are written. A cold pod writes the files first and the environment over
 * them; the two differ only for a commit that tracks files inside the environment's folders (a
 * committed node_modules), which git then refuses to overwrite: for that one the files are written
 * over and the environment restored again, as on a cold pod.
 */
async function prepareRun(a: Assignment, archiver: Archiver): Promise<void> {
  const [fetched, restored] = await Promise.allSettled([fetchCommit(a), restore(a, archiver)]);
  const why = (r: PromiseRejectedResult) => (r.reason instanceof Error ? r.reason.message : String(r.reason));
  if (fetched.status === "rejected") fail(`checkout: ${why(fetched)}`);
  if (restored.status === "rejected") fail(`environment: ${why(restored)}`);
  try {
    await checkoutFiles(a, false);
  } catch (err) {
    if (!a.environment) fail(`checkout: ${err instanceof Error ? err.message : String(err)}`);
    note("the commit tracks files inside the environment's folders: checking out over them, then restoring again");
    try {
      await checkoutFiles(a, true);
    } catch (again) {
      fail(`checkout: ${again instanceof Error ? again.message : String(again)}`);
    }
    try {
      await restore(a, archiver);
    } catch (again) {
      fail(`environment: ${again instanceof Error ? again.message : String(again)}`);
    }
  }
  mark("checked_out");
}

/**
 * The framing entrypoint, started while waiting (`--wait-for-command`, entrypoint.ts): Node's start and
 * its loading are done before the claim, and it holds nothing of any run until it is handed the command
 * and the run's environment on stdin. null when it is not running any more (it is then started as a
 * cold pod's is, with its arguments). It exits with no output when this process ends without a run.
 */
function startEntrypointAhead(): { child: ChildProcess; alive: () => boolean } | null {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.CODEPLANE_POOL_URL;
  let alive = true;
  try {
    const child = spawn(process.execPath, [join(TOOLS, "entrypoint.ts"), "--wait-for-command"], { env, stdio: ["pipe", "inherit", "inherit"] });
    child.on("exit", () => {
      alive = false;
    });
    child.on("error", () => {
      alive = false;
    });
    child.stdin?.on("error", () => {
      alive = false;
    });
    return { child, alive: () => alive };
  } catch {
    return null;
  }
}

/**
 * Starts the run's command under the entrypoint: the one started ahead when it is still there and
 * takes the command. One that died just before (its exit not yet seen) fails the write (EPIPE): it
 * read nothing, so the command is started in a new entrypoint instead of the run ending with the
 * dead one's exit code. Once the write succeeded the command is its, never started a second time.
 */
async function startCommand(ahead: ReturnType<typeof startEntrypointAhead>, args: string[], env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const stdin = ahead?.child.stdin;
  if (ahead?.alive() && stdin) {
    const written = await new Promise<boolean>((resolve) => {
      stdin.once("error", () => resolve(false));
      stdin.end(`${JSON.stringify({ args, env })}\n`, (err?: Error | null) => resolve(!err));
    });
    if (written) return ahead.child;
  }
  return spawn(process.execPath, [join(TOOLS, "entrypoint.ts"), ...args], { env, stdio: "inherit" });
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
  // Made while waiting, since they hold nothing of any run: an empty repository, and the archiver's code.
  const initialised = run(GIT, ["init", "-q", SOURCE_DIR], trustedEnv({ GIT_TERMINAL_PROMPT: "0" })).then(
    () => null,
    (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
  );
  const archiver = (import(join(TOOLS, "environment-archive.ts")) as Promise<Archiver>).catch((err: unknown) => err as Error);
  const ahead = startEntrypointAhead();
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
  assignedAt = Date.now();
  const startedFile = join(TOOLS, "pod-started");
  try {
    writeFileSync(startedFile, String(Date.now()));
  } catch {
    // the runner counts from its own start
  }
  mark("assignment_read");
  const initError = await initialised;
  if (initError) fail(`checkout: ${initError.message}`);
  const loaded = await archiver;
  if (loaded instanceof Error) fail(`environment: ${loaded.message}`);
  await prepareRun(a, loaded);
  if (!ahead?.alive()) note("the entrypoint started ahead is not running: the command's entrypoint is started now, as on a cold pod");
  // Both reported once both are done, so the run's timeline keeps its order (checked out, then environment ready).
  void report("checked_out", !a.environment);
  if (a.environment) {
    mark("environment_ready");
    void report("environment_ready", true);
  }
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
  const child = await startCommand(ahead, ["--workdir", SOURCE_DIR, "--", ...a.command], env);
  const started = report("started");
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, () => child.kill(signal));
  child.on("close", (code, signal) => {
    void Promise.all([started, report("ended")]).finally(() => process.exit(code ?? (signal ? 128 + 15 : 1)));
  });
}

void main();
