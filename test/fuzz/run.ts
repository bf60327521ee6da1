/**
 * `make fuzz`: schemathesis against the real service, driven by its own
 * OpenAPI document. Started by test/fuzz/fuzz.sh, inside a network namespace
 * that has only loopback, so generated clone URLs can reach nothing outside.
 *
 * A throw-away Postgres, `codeplane migrate`, an account and an API key from
 * the CLI, `codeplane serve` with no cluster (KUBECONFIG unset), a fixture git
 * repository registered with a few environment variables (so lists, refs and
 * files answer with real data), then schemathesis for FUZZ_SECONDS with a
 * seed that changes every run unless FUZZ_SEED is given. Real ids, refs and
 * paths are mixed into the generated ones (schemathesis dictionaries), so the
 * fuzzer reaches past the 404s. The run fails on any 5xx, any status the
 * document does not list, any body or content type that does not match it,
 * and any other schemathesis check (405 with Allow for undeclared methods,
 * invalid data accepted, ...); each failure is printed with a curl command
 * that reproduces it.
 *
 * Environment: FUZZ_SECONDS (default 150), FUZZ_SEED, FUZZ_MAX_EXAMPLES
 * (per operation, default schemathesis's), FUZZ_WORKERS (default 1),
 * FUZZ_PHASES (default all: examples, coverage, fuzzing, stateful),
 * FUZZ_ARGS (extra `st run` arguments), SCHEMATHESIS (path of `st`).
 */
import { spawn, execFile as execFileCb } from "node:child_process";
import { randomBytes, randomInt } from "node:crypto";
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import pg from "pg";
import { createFixtureRepo } from "../helpers/git-fixture.ts";
import { startPostgres } from "../helpers/postgres-server.ts";
import { freePort } from "../helpers/free-port.ts";

const execFile = promisify(execFileCb);
const ROOT = new URL("../..", import.meta.url).pathname;
const MAIN = path.join(ROOT, "src/main.ts");

const seconds = Number(process.env.FUZZ_SECONDS || 150);
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : randomInt(1, 2 ** 31);
// One worker: hypothesis describes strategies with `ast`, which CPython 3.11 cannot run in two
// threads at once ("AST constructor recursion depth mismatch"), and one client keeps the
// requests (and so a failure's reproduction) in order.
const workers = process.env.FUZZ_WORKERS || "1";
const st = process.env.SCHEMATHESIS || "st";

function log(msg: string): void {
  process.stdout.write(`\n==> fuzz: ${msg}\n`);
}

/** TOML string literal (JSON's escapes are TOML's for what we write). */
const toml = (v: string) => JSON.stringify(v);

async function main(): Promise<number> {
  if (!Number.isFinite(seconds) || seconds < 1) throw new Error("FUZZ_SECONDS must be a positive number");
  log(`seed ${seed} (reproduce with FUZZ_SEED=${seed}), ${seconds} s, ${workers} workers`);
  const work = mkdtempSync(path.join(tmpdir(), "codeplane-fuzz-"));
  const cleanups: (() => Promise<unknown> | void)[] = [() => rmSync(work, { recursive: true, force: true })];
  try {
    const pgServer = await startPostgres();
    cleanups.push(() => pgServer.stop());
    const admin = new pg.Client({ connectionString: pgServer.adminUrl });
    await admin.connect();
    await admin.query("create database codeplane");
    await admin.end();

    const port = await freePort();
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "",
      HOME: work,
      DATABASE_URL: pgServer.urlFor("codeplane"),
      CODEPLANE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      CODEPLANE_DATA_DIR: path.join(work, "data"),
      CODEPLANE_HOST: "127.0.0.1",
      PORT: String(port),
      CODEPLANE_ALLOW_LOCAL_REPOSITORIES: "true",
      CODEPLANE_RATE_LIMIT_REQUESTS: "0",
      CODEPLANE_AUTH_FAILURE_LIMIT: "0",
      CODEPLANE_LOG_LEVEL: "warn",
      CODEPLANE_GIT_TIMEOUT_SECONDS: "20",
    };
    const cli = async (...args: string[]) => (await execFile(process.execPath, [MAIN, ...args], { env, cwd: work })).stdout;
    await cli("migrate");
    await cli("accounts", "create", "fuzz");
    const { key } = JSON.parse(await cli("keys", "create", "--account", "fuzz", "--name", "fuzz")) as { key: string };

    const serviceLog = path.join(work, "service.log");
    const out = createWriteStream(serviceLog);
    const service = spawn(process.execPath, [MAIN, "serve"], { env, cwd: work, stdio: ["ignore", "pipe", "pipe"] });
    service.stdout.pipe(out);
    service.stderr.pipe(out);
    const exited = new Promise<number | null>((resolve) => service.once("exit", resolve));
    cleanups.push(async () => {
      service.kill("SIGTERM");
      await exited;
    });
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      const ok = await fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (i > 300 || service.exitCode !== null) throw new Error(`the service did not become ready; its log is ${serviceLog}`);
      await new Promise((r) => setTimeout(r, 100));
    }

    // Real data for the fuzzer to find: a repository (and a second URL it can register), variables.
    const fixture = await createFixtureRepo(path.join(work, "fixture.git"));
    const spare = await createFixtureRepo(path.join(work, "spare.git"));
    const api = async (method: string, p: string, body?: unknown) => {
      const res = await fetch(base + p, {
        method,
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Record<string, unknown>;
    };
    const repo = await api("POST", "/v1/repositories", { url: fixture.url, name: "fixture" });
    const repoId = String(repo.id);
    const vars = [
      await api("POST", "/v1/environment-variables", { name: "ACCOUNT_VAR", value: "shown", secret: false }),
      await api("POST", "/v1/environment-variables", { name: "REPO_SECRET", value: "hidden", repository_id: repoId }),
    ];
    const refs = ["main", "feature", "v1.0.0", "light", fixture.commits.main, fixture.commits.initial.slice(0, 7), fixture.commits.feature];
    const files = Object.keys(fixture.files);
    const dirs = ["", "a", "a/b", "a/b/c", "docs", "scripts", "vendor"];

    const config = path.join(work, "schemathesis.toml");
    const list = (vs: string[]) => `[${vs.map(toml).join(", ")}]`;
    writeFileSync(
      config,
      [
        `[dictionaries.repository]\nvalues = ${list([repoId])}`,
        `[dictionaries.env_var]\nvalues = ${list(vars.map((v) => String(v.id)))}`,
        `[dictionaries.ref]\nvalues = ${list(refs)}`,
        `[dictionaries.file]\nvalues = ${list(files)}`,
        `[dictionaries.dir]\nvalues = ${list(dirs)}`,
        `[dictionaries.clone_url]\nvalues = ${list([spare.url, `${spare.url}/`, fixture.url])}`,
        "[parameters]",
        `"path.repository_id" = { dictionary = "repository", probability = 0.7 }`,
        `"query.repository_id" = { dictionary = "repository", probability = 0.5 }`,
        `"body.repository_id" = { dictionary = "repository", probability = 0.5 }`,
        `"path.env_var_id" = { dictionary = "env_var", probability = 0.5 }`,
        `"path.commit_hash" = { dictionary = "ref", probability = 0.5 }`,
        `"query.ref" = { dictionary = "ref", probability = 0.5 }`,
        `"path.path" = { dictionary = "file", probability = 0.5 }`,
        `"query.path" = { dictionary = "dir", probability = 0.5 }`,
        `"body.url" = { dictionary = "clone_url", probability = 0.3 }`,
        // A body over CODEPLANE_BODY_LIMIT_BYTES is refused with its documented 413.
        `[checks.negative_data_rejection]\nexpected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx"]`,
        // No cluster here, by design: starting, cancelling or deleting a workload answers its
        // documented 503, which is no server error in this set-up. Any other 5xx still fails.
        // No GitHub App either: every integration and webhook operation answers its documented 503 naming the settings.
        ...[
          "createRun",
          "cancelRun",
          "deleteRun",
          "createAnalysis",
          "cancelAnalysis",
          "deleteAnalysis",
          "getGitHubInstallUrl",
          "gitHubInstallCallback",
          "connectGitHubInstallation",
          "listIntegrations",
          "getIntegration",
          "deleteIntegration",
          "listInstallationRepositories",
          "registerInstallationRepository",
          "receiveGitHubWebhook",
          "listGitHubWebhookDeliveries",
        ].map((id) => `[[operations]]\ninclude-operation-id = ${toml(id)}\nchecks.not_a_server_error.expected-statuses = ["2xx", "3xx", "4xx", "503"]`),
        "",
      ].join("\n"),
    );

    const args = [
      "--config-file",
      config,
      "run",
      `${base}/openapi.json`,
      "--checks",
      "all",
      // A schema cannot say which refs exist, which cursors were issued or that a secret needs a
      // new value to become plain: "schema-valid input accepted" would only list those 422s.
      "--exclude-checks",
      "positive_data_acceptance",
      "--seed",
      String(seed),
      "--max-time",
      String(seconds),
      "--workers",
      workers,
      "--header",
      `Authorization: Bearer ${key}`,
      "--generation-database",
      "none",
      "--request-timeout",
      "30",
      "--no-color",
      "--output-sanitize",
      "false",
      ...(process.env.FUZZ_MAX_EXAMPLES ? ["--max-examples", process.env.FUZZ_MAX_EXAMPLES] : []),
      ...(process.env.FUZZ_PHASES ? ["--phases", process.env.FUZZ_PHASES] : []),
      ...(process.env.FUZZ_ARGS ? process.env.FUZZ_ARGS.split(/\s+/).filter(Boolean) : []),
    ];
    log(`schemathesis against ${base} (service log: ${serviceLog})`);
    const child = spawn(st, args, { cwd: work, stdio: ["inherit", "pipe", "inherit"], env: { ...process.env, PATH: env.PATH, HOME: work } });
    // schemathesis closes with pytest's banner ("=== 3 warnings in 150.09s ==="), which
    // readers of CI logs take for pytest saying that no test ran; the banner is unframed.
    const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
    lines.on("line", (line) => process.stdout.write(`${unframeBanner(line)}\n`));
    const drained = once(lines, "close");
    const code = await new Promise<number>((resolve, reject) => {
      child.once("error", reject);
      child.once("exit", (c, signal) => resolve(c ?? (signal ? 1 : 0)));
    });
    await drained;

    out.end();
    const errors = readFileSync(serviceLog, "utf8")
      .split("\n")
      .filter((l) => /"level":(50|60)/.test(l));
    if (errors.length) {
      log(`the service logged ${errors.length} error(s); the first ones:`);
      for (const l of errors.slice(0, 10)) process.stdout.write(`${l.slice(0, 2000)}\n`);
    }
    log(
      code === 0
        ? `passed (seed ${seed})`
        : `FAILED (seed ${seed}; reproduce with FUZZ_SEED=${seed} make fuzz, or run the curl commands above against a service of your own)`,
    );
    return code === 0 ? 0 : 1;
  } finally {
    for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => undefined);
  }
}

function unframeBanner(line: string): string {
  const m = /^={3,} (.+) ={3,}$/.exec(line);
  return m ? `schemathesis ${m[1]}` : line;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`fuzz: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
