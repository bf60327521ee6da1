import { execFile as execFileCb, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { request } from "node:http";
import { promisify } from "node:util";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { loadConfig } from "../src/config.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateApiKey, isWellFormedApiKey } from "../src/domain/auth/api-key-token.ts";
import { createTestDatabase, type TestDatabase } from "./helpers/service.ts";
import { freePort } from "./helpers/free-port.ts";
import { until } from "./helpers/until.ts";

// The CLI and `serve` as a user runs them: separate processes, real signals.

const execFile = promisify(execFileCb);
/** How long `serve` may take to become healthy, and a test with processes in it to finish, on a loaded machine. */
const STARTUP_MS = 60_000;
const PROCESS_TEST_MS = 180_000;
const MAIN = new URL("../src/main.ts", import.meta.url).pathname;
let database: TestDatabase;
let env: Record<string, string>;

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFile(process.execPath, [MAIN, ...args], { env: { ...env, PATH: process.env.PATH ?? "" } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

async function serve(extra: Record<string, string> = {}): Promise<{ proc: ChildProcess; url: string; exited: Promise<number | null> }> {
  const port = await freePort();
  const proc = spawn(process.execPath, [MAIN, "serve"], {
    env: { ...env, PATH: process.env.PATH ?? "", PORT: String(port), CODEPLANE_HOST: "127.0.0.1", ...extra },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  let exitCode: number | null | undefined;
  void exited.then((code) => (exitCode = code));
  try {
    // A generous deadline: on a loaded machine a process takes seconds to start; one that exits fails at once.
    await until("serve to answer /healthz", STARTUP_MS, async () => {
      if (exitCode !== undefined) throw new Error(`serve exited with ${exitCode} before it was healthy`);
      return (await fetch(`${url}/healthz`)).ok;
    });
  } catch (err) {
    proc.kill("SIGKILL");
    throw err;
  }
  return { proc, url, exited };
}

beforeAll(async () => {
  database = await createTestDatabase({ empty: true });
  env = {
    DATABASE_URL: database.url,
    CODEPLANE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
    CODEPLANE_LOG_LEVEL: "warn",
    CODEPLANE_MIGRATE_ON_START: "false",
  };
});
afterAll(() => database?.drop());

describe("codeplane CLI", { timeout: PROCESS_TEST_MS }, () => {
  it("migrates an empty database, then has nothing left to apply", async () => {
    const first = await cli("migrate");
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({
      applied: [
        "0001_initial",
        "0002_runs",
        "0003_analyses",
        "0004_installation",
        "0005_api_key_parents",
        "0006_checkout_tokens",
        "0007_github_integrations",
        "0008_github_webhooks",
        "0009_oauth",
        "0010_run_list_indexes",
        "0011_api_key_notify",
        "0012_environments",
        "0013_workload_transitions",
        "0014_run_timeline",
        "0015_environment_pins",
        "0016_notifications",
        "0017_results",
        "0018_run_outputs",
        "0019_limits",
        "0020_warm_pools",
        "0023_log_groups",
        "0024_run_attempts",
        "0025_run_check_runs",
        "0026_run_changes",
        "0027_account_cpu_memory",
        "0028_queued_runs",
        "0029_warm_pool_diagnostics",
      ],
    });
    expect(JSON.parse((await cli("migrate")).stdout)).toEqual({ applied: [] });
  });

  it("creates an account and a key that works against the served API", async () => {
    const account = await cli("accounts", "create", "acme");
    expect(account.code).toBe(0);
    expect(JSON.parse(account.stdout)).toMatchObject({ name: "acme", id: expect.any(String) });
    const dup = await cli("accounts", "create", "acme");
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain("Account 'acme' already exists");

    const keyOut = await cli("keys", "create", "--account", "acme", "--name", "ci", "--scopes", "repositories:read");
    expect(keyOut.code).toBe(0);
    const key = JSON.parse(keyOut.stdout);
    expect(key).toMatchObject({ account: "acme", name: "ci", scopes: ["repositories:read"], key: expect.stringMatching(/^cp_/) });

    const { proc, url, exited } = await serve();
    try {
      const ok = await fetch(`${url}/v1/repositories`, { headers: { authorization: `Bearer ${key.key}` } });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual({ items: [], next_cursor: null });
      const anon = await fetch(`${url}/v1/repositories`);
      expect(anon.status).toBe(401);
      expect(await anon.json()).toEqual({ detail: "Not authenticated" });
    } finally {
      proc.kill("SIGTERM");
      expect(await exited).toBe(0);
    }
  });

  it("overrides an account's limits and resets them to the operator's defaults", async () => {
    await cli("accounts", "create", "limited");
    const set = await cli("accounts", "limits", "limited", "--executing", "3", "--waiting", "0");
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ account: "limited", executing: 3, waiting: 0, overrides: { executing: 3, waiting: 0 } });
    // Only --waiting changes; --executing keeps its override.
    const partly = JSON.parse((await cli("accounts", "limits", "limited", "--waiting", "default")).stdout);
    expect(partly).toMatchObject({ executing: 3, overrides: { executing: 3, waiting: null } });
    const shown = JSON.parse((await cli("accounts", "limits", "limited")).stdout);
    expect(shown).toEqual(partly);
    const reset = JSON.parse((await cli("accounts", "limits", "limited", "--executing", "default")).stdout);
    // The operator's defaults (unset here: 0, no limit).
    expect(reset).toMatchObject({ executing: 0, waiting: 0, overrides: { executing: null, waiting: null } });
    // CPU and memory caps: Kubernetes quantities in, the same back (millicores and bytes inside).
    const caps = JSON.parse((await cli("accounts", "limits", "limited", "--cpu", "1500m", "--memory", "2Gi")).stdout);
    expect(caps).toMatchObject({ cpu: "1500m", memory: "2Gi", overrides: { cpu: "1500m", memory: "2Gi", executing: null } });
    const capsReset = JSON.parse((await cli("accounts", "limits", "limited", "--cpu", "default", "--memory", "default")).stdout);
    expect(capsReset).toMatchObject({ cpu: "0", memory: "0", overrides: { cpu: null, memory: null } });
    const badCpu = await cli("accounts", "limits", "limited", "--cpu", "lots");
    expect(badCpu.code).toBe(2);
    expect(badCpu.stderr).toContain("--cpu takes a Kubernetes quantity");
    const bad = await cli("accounts", "limits", "limited", "--executing", "many");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--executing takes a count");
    expect((await cli("accounts", "limits", "nobody", "--executing", "1")).code).toBe(1);
  });

  it.each([
    [["keys", "create", "--account", "nobody", "--name", "x"], 1, "Account 'nobody' not found"],
    [["keys", "create", "--account", "acme", "--name", "x", "--scopes", "root"], 2, "invalid arguments"],
    [["accounts", "create", "Bad Name!"], 2, "invalid arguments"],
    [["frobnicate"], 2, "Usage:"],
  ])("fails clearly for %j", async (args, code, message) => {
    const r = await cli(...args);
    expect(r.code).toBe(code);
    expect(r.stderr).toContain(message);
  });

  it("refuses a bad configuration, naming the variable", async () => {
    const r = await execFile(process.execPath, [MAIN, "serve"], { env: { ...env, PATH: process.env.PATH ?? "", PORT: "eighty" } }).catch((e) => e);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("PORT: must be a whole number");
  });
});

describe("codeplane serve", { timeout: PROCESS_TEST_MS }, () => {
  it("keys generate prints a valid key offline, different each time, that seeds the first credential", async () => {
    const first = await cli("keys", "generate");
    const second = await cli("keys", "generate");
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^cp_[0-9A-Za-z]{38}\n$/);
    expect(first.stdout).not.toBe(second.stdout);
    const key = first.stdout.trim();
    expect(isWellFormedApiKey(key)).toBe(true);
    expect((await cli("keys", "generate", "extra")).code).toBe(2);
    // What docs/operators/helm.md does with it: CODEPLANE_BOOTSTRAP_API_KEY accepts it (the seeding itself is the next test).
    expect(() => loadConfig({ CODEPLANE_DATA_DIR: mkdtempSync(path.join(tmpdir(), "cp-cli-")), CODEPLANE_BOOTSTRAP_API_KEY: key })).not.toThrow();
  });

  it("seeds a key from CODEPLANE_BOOTSTRAP_API_KEY, idempotently", async () => {
    const { key } = generateApiKey();
    for (let i = 0; i < 2; i++) {
      const { proc, url, exited } = await serve({ CODEPLANE_BOOTSTRAP_ACCOUNT: "seeded", CODEPLANE_BOOTSTRAP_API_KEY: key });
      try {
        expect((await fetch(`${url}/v1/repositories`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
      } finally {
        proc.kill("SIGTERM");
        await exited;
      }
    }
    const rows = await database.db.selectFrom("api_keys").select("name").where("name", "=", "bootstrap").execute();
    expect(rows).toHaveLength(1);
  });

  it("finishes an in-flight request on SIGTERM, refuses new connections, and exits 0", async () => {
    const keyOut = JSON.parse((await cli("keys", "create", "--account", "acme", "--name", "slow")).stdout);
    const { proc, url, exited } = await serve();
    const { port } = new URL(url);
    // A request whose body is still arriving when the signal comes.
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port,
          path: "/v1/environment-variables",
          method: "POST",
          // The server answers 100 Continue once it has read the headers: the request is then in flight, however slow the machine.
          headers: { authorization: `Bearer ${keyOut.key}`, "content-type": "application/json", expect: "100-continue" },
        },
        (res) => {
          let body = "";
          res.on("data", (c) => (body += c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on("error", reject);
      req.on("continue", () => {
        req.write('{"name": "IN_FLIGHT", ');
        proc.kill("SIGTERM");
        // The rest of the body comes after the signal.
        setTimeout(() => req.end('"value": "v", "secret": false}'), 500);
      });
      req.flushHeaders();
    });
    const res = await response;
    expect(res.status).toBe(201);
    expect(JSON.parse(res.body)).toMatchObject({ name: "IN_FLIGHT", value: "v" });
    expect(await exited).toBe(0);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });
});

describe("codeplane analyze", { timeout: PROCESS_TEST_MS }, () => {
  const fixture = new URL("../packages/analyzer/fixtures/golden/mixed/repo", import.meta.url).pathname;

  it("prints the analysis of a folder as JSON without any configuration", async () => {
    const { stdout, stderr, code } = await execFile(process.execPath, [MAIN, "analyze", fixture, "--language", "ja"], {
      env: { PATH: process.env.PATH ?? "" },
    }).then(
      (r) => ({ ...r, code: 0 }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(code, stderr).toBe(0);
    const result = JSON.parse(stdout);
    expect(result).toMatchObject({ version: 1, repo_summary: { language: "ja" }, primary_ids: ["python:train.py", "make:train", "make:serve"] });
    expect(stderr).toMatch(/^listed \d+ files/m);
  });

  it("with --frames writes progress and the result as log frames the controller can read back", async () => {
    const { stdout } = await execFile(process.execPath, [MAIN, "analyze", fixture, "--frames"], { env: { PATH: process.env.PATH ?? "" } });
    const { parseAnalyzerOutput } = await import("../src/controller/analyzer-output.ts");
    const { checkAnalyzerResult } = await import("../src/controller/analysis-observation.ts");
    const check = checkAnalyzerResult(parseAnalyzerOutput(stdout).document);
    expect(check.ok).toBe(true);
    expect(stdout.trimEnd().split("\n").at(-1)).toMatch(/^@cp1 \d+ x \S+ \{"code":0,"signal":null\}$/);
  });

  it.each([
    [["analyze"], 2],
    [["analyze", ".", "--language", "fr"], 2],
    [["analyze", ".", "--nope"], 2],
    [["analyze", ".", "--threads", "3"], 2],
  ])("refuses bad arguments %j with exit %i", async (args, exit) => {
    const r = await cli(...args);
    expect(r.code).toBe(exit);
    expect(r.stderr).toMatch(/usage: codeplane analyze/);
  });
});
