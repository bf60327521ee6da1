// The Python SDK (clients/python) against the real service: its generated
// layer is what openapi-python-client makes of the document now (regenerated
// into a temporary directory and compared), and test/sdk/python/scenario.py
// drives the package as a user would over HTTP: the log stream (whole, resumed,
// and through a proxy that drops the connection twice), waiting, typed errors
// and pagination. The generator and the SDK's dependencies live in a virtualenv
// cached under ~/.cache/codeplane/venv (clients/python/tools/install.sh).
import { execFile as execFileCb, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdkOpenApiDocument } from "../../src/api/sdk-schema.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";
import { cuttingProxy, endedRun, repositoryRow } from "./helpers.ts";

const execFile = promisify(execFileCb);
const SDK = new URL("../../clients/python/", import.meta.url).pathname;
const SCENARIO = new URL("python/scenario.py", import.meta.url).pathname;
const hasPython = spawnSync("python3", ["--version"]).status === 0;
if (!hasPython) console.warn("test/sdk/python.test.ts: skipped, python3 is not installed (apt-get install python3 python3-venv)");

let python: string;
let svc: TestService;
let alice: Tenant;
let repositoryId: string;
const scratch = mkdtempSync(path.join(tmpdir(), "cp-sdk-python-"));

beforeAll(async () => {
  if (!hasPython) return;
  python = (await execFile(`${SDK}tools/install.sh`, [], { maxBuffer: 1 << 20 })).stdout.trim();
  svc = await startTestService();
  alice = await svc.tenant();
  repositoryId = await repositoryRow(svc, alice.accountId);
}, 600_000);

afterAll(async () => {
  await svc?.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** Every file under dir, relative, with its text. */
function tree(dir: string, base = dir): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) {
    const p = path.join(dir, name);
    if (name === "__pycache__") continue;
    if (statSync(p).isDirectory()) Object.assign(out, tree(p, base));
    else out[path.relative(base, p)] = readFileSync(p, "utf8");
  }
  return out;
}

describe.skipIf(!hasPython)("the Python SDK", () => {
  it("its generated layer is what the OpenAPI document generates now (run `npm run sdk` after changing the API)", async () => {
    const doc = path.join(scratch, "openapi.json");
    writeFileSync(doc, JSON.stringify(sdkOpenApiDocument()));
    await execFile(`${SDK}tools/generate.sh`, [doc, path.join(scratch, "_api")], { maxBuffer: 16 << 20 });
    const fresh = tree(path.join(scratch, "_api"));
    const checkedIn = tree(`${SDK}codeplane/_api`);
    expect(Object.keys(checkedIn)).toEqual(Object.keys(fresh));
    const stale = Object.keys(fresh).filter((f) => fresh[f] !== checkedIn[f]);
    expect(stale, "clients/python/codeplane/_api is stale: run `npm run sdk`").toEqual([]);
  }, 300_000);

  it("streams with resume, waits, raises typed errors and pages, against the service", async () => {
    const run = await endedRun(svc, alice.accountId, repositoryId, 60);
    const longRun = await endedRun(svc, alice.accountId, repositoryId, 400);
    const running = randomUUID();
    await svc.db
      .insertInto("runs")
      .values({
        id: running,
        account_id: alice.accountId,
        repository_id: repositoryId,
        commit_hash: "a".repeat(40),
        workflow_id: `codeplane/run-${running}`,
        status: "running",
        compute_type: "cpu-general",
        run_config: JSON.stringify({ command: ["sleep", "1"], parameters: {}, timeout_seconds: 60 }),
        updated_at: new Date(),
      })
      .execute();
    const commit = "c".repeat(40);
    const analysisId = randomUUID();
    await svc.db
      .insertInto("analyses")
      .values({
        id: analysisId,
        account_id: alice.accountId,
        repository_id: repositoryId,
        commit_hash: commit,
        branch: null,
        language: "en",
        workflow_id: `codeplane/analysis-${analysisId}`,
        status: "pending",
        updated_at: new Date(),
      })
      .execute();
    const proxy = await cuttingProxy(new URL(svc.url), 20_000, 2);
    try {
      const plan = {
        url: svc.url,
        proxy: proxy.url,
        token: alice.key,
        run,
        long_run: longRun,
        running,
        missing: randomUUID(),
        repository: repositoryId,
        commit,
      };
      const child = spawn(python, [SCENARIO], { env: { PATH: process.env.PATH ?? "", PYTHONPATH: SDK }, stdio: ["pipe", "pipe", "pipe"] });
      let out = "";
      let err = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      // Once it waits for the analysis, end the analysis as the controller would.
      const flipped = new Promise<void>((resolve) => {
        child.stderr.on("data", (d: Buffer) => {
          err += d.toString();
          if (err.includes("waiting")) {
            void svc.db
              .updateTable("analyses")
              .set({ status: "completed", completed_at: new Date() })
              .where("id", "=", analysisId)
              .execute()
              .then(() => resolve());
          }
        });
      });
      // A hung client fails with what it printed, not a bare test timeout.
      const killer = setTimeout(() => child.kill("SIGKILL"), 240_000);
      child.stdin.end(JSON.stringify(plan));
      const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
      clearTimeout(killer);
      const result = JSON.parse(out || "{}") as Record<string, unknown>;
      expect(result.traceback, `${err}\n${String(result.traceback)}`).toBeUndefined();
      expect(code, err).toBe(0);
      await flipped;
      const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
      expect(result).toEqual({
        all: range(1, 60),
        last: { type: "end", status: "completed", exit_code: 0 },
        first_stderr: { seq: 4, id: "4", line: "line 4 " },
        resumed: range(26, 60),
        not_found: { status: 404, detail: "Run not found" },
        invalid: { status: 422, loc: ["body", "name"] },
        unauthenticated: 401,
        wait_timeout: true,
        paged: range(1, 5).map((n) => `PY_PAGE_${n}`),
        through_drops: range(1, 400),
        analysis: { status: "completed", commit },
      });
      expect(proxy.heads.length).toBe(3);
      expect(proxy.heads.slice(1).every((h) => /last-event-id: \d+/i.test(h))).toBe(true);
    } finally {
      proxy.close();
    }
  }, 300_000);
});
