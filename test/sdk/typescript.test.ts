// The TypeScript SDK (packages/sdk) against the real service: built as it is
// packed (tsc into dist/, imported from there), over HTTP to a service on a
// migrated Postgres. The controller's part is played by the test writing rows
// (a run's archived lines, an analysis's status), as in the SSE tests.
import { execFile as execFileCb } from "node:child_process";
import { randomUUID } from "node:crypto";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";
import { cuttingProxy, endedRun, repositoryRow } from "./helpers.ts";

// Typed from the package's sources (the `codeplane-source` export condition, tsconfig.json); run from its build.
type Sdk = typeof import("@codeplane/sdk");
const execFile = promisify(execFileCb);
const ROOT = new URL("../..", import.meta.url).pathname;

let sdk: Sdk;
let svc: TestService;
let alice: Tenant;
let repositoryId: string;

beforeAll(async () => {
  await execFile(`${ROOT}node_modules/.bin/tsc`, ["-p", `${ROOT}packages/sdk/tsconfig.build.json`]);
  sdk = (await import(`${ROOT}packages/sdk/dist/index.js`)) as Sdk;
  svc = await startTestService();
  alice = await svc.tenant();
  repositoryId = await repositoryRow(svc, alice.accountId);
}, 180_000);

afterAll(async () => {
  await svc?.close();
});

const client = (baseUrl = svc.url) => new sdk.Codeplane({ baseUrl, token: alice.key });

const lineSeqs = (events: { type: string; seq?: number }[]) => events.filter((e) => e.type === "stdout" || e.type === "stderr").map((e) => e.seq);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of it) out.push(e);
  return out;
}

describe("the TypeScript SDK against the service", () => {
  it("streams a run's log as typed events, every line once and in order, then end", async () => {
    const runId = await endedRun(svc, alice.accountId, repositoryId, 60);
    const events = await collect(client().streamRunLogs(runId));
    expect(lineSeqs(events)).toEqual(range(1, 60));
    expect(events.find((e) => e.type === "stderr")).toMatchObject({ type: "stderr", seq: 4, id: "4", line: expect.stringMatching(/^line 4 /) });
    expect(events.at(-1)).toEqual({ type: "end", status: "completed", exit_code: 0 });
  });

  it("resumes after a given event id without sending what came before", async () => {
    const runId = await endedRun(svc, alice.accountId, repositoryId, 60);
    const events = await collect(client().streamRunLogs(runId, { lastEventId: "25" }));
    expect(lineSeqs(events)).toEqual(range(26, 60));
  });

  it("reconnects with Last-Event-ID when the connection drops mid-stream, losing and repeating nothing", async () => {
    const runId = await endedRun(svc, alice.accountId, repositoryId, 400);
    const proxy = await cuttingProxy(new URL(svc.url), 20_000, 2); // each line is ~260 bytes on the wire: two cuts well inside the log
    try {
      const events = await collect(client(proxy.url).streamRunLogs(runId, { maxDelayMs: 200 }));
      expect(lineSeqs(events)).toEqual(range(1, 400));
      expect(proxy.heads.length).toBe(3);
      expect(proxy.heads[0]).not.toMatch(/last-event-id/i);
      const resumed = proxy.heads.slice(1).map((h) => Number(/last-event-id: (\d+)/i.exec(h)?.[1]));
      expect(resumed[0]).toBeGreaterThan(0);
      expect(resumed[1]).toBeGreaterThan(resumed[0]!);
    } finally {
      proxy.close();
    }
  });

  it("waits for an analysis until it ends", async () => {
    const commit = "b".repeat(40);
    const id = randomUUID();
    await svc.db
      .insertInto("analyses")
      .values({
        id,
        account_id: alice.accountId,
        repository_id: repositoryId,
        commit_hash: commit,
        branch: null,
        language: "en",
        workflow_id: `codeplane/analysis-${id}`,
        status: "running",
        exit_code: null,
        error: null,
        result: null,
        deleted_at: null,
        resource_deleted_at: null,
        started_at: new Date(),
        completed_at: null,
        trigger_delivery_id: null,
        updated_at: new Date(),
      })
      .execute();
    const cp = client();
    const waiting = cp.waitForAnalysis(repositoryId, commit, { intervalMs: 100, timeoutMs: 120_000 });
    // It is still waiting: the analysis has not ended.
    expect(await Promise.race([waiting.then(() => "ended"), new Promise((r) => setTimeout(() => r("waiting"), 500))])).toBe("waiting");
    await svc.db
      .updateTable("analyses")
      .set({ status: "failed", error: "stand-in controller: failed", completed_at: new Date() })
      .where("id", "=", id)
      .execute();
    const analysis = await waiting;
    expect(analysis).toMatchObject({ status: "failed", commit_hash: commit });
  });

  it("gives up waiting with WaitTimeoutError once the caller's time is spent", async () => {
    const runId = randomUUID();
    await svc.db
      .insertInto("runs")
      .values({
        id: runId,
        account_id: alice.accountId,
        repository_id: repositoryId,
        commit_hash: "a".repeat(40),
        workflow_id: `codeplane/run-${runId}`,
        status: "running",
        compute_type: "cpu-general",
        run_config: JSON.stringify({ command: ["sleep", "1"], parameters: {}, timeout_seconds: 60 }),
        updated_at: new Date(),
      })
      .execute();
    await expect(client().waitForRun(runId, { intervalMs: 50, timeoutMs: 300 })).rejects.toBeInstanceOf(sdk.WaitTimeoutError);
  });

  it("throws the API's errors as typed exceptions carrying detail", async () => {
    const cp = client();
    const missing = await cp.getRun(randomUUID()).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(sdk.NotFoundError);
    expect((missing as InstanceType<Sdk["NotFoundError"]>).detail).toBe("Run not found");
    const invalid = await sdk.Codeplane.unwrap(cp.api.POST("/v1/environment-variables", { body: { name: "1 not a name", value: "v" } })).catch(
      (e: unknown) => e,
    );
    expect(invalid).toBeInstanceOf(sdk.ValidationError);
    expect((invalid as InstanceType<Sdk["ValidationError"]>).issues[0]?.loc).toEqual(["body", "name"]);
    const unauthenticated = await new sdk.Codeplane({ baseUrl: svc.url, token: "cp_not_a_key" }).getRun(randomUUID()).catch((e: unknown) => e);
    expect(unauthenticated).toBeInstanceOf(sdk.AuthError);
    expect((unauthenticated as InstanceType<Sdk["AuthError"]>).status).toBe(401);
  });

  it("iterates a list across its pages", async () => {
    const cp = client();
    for (const n of range(1, 5)) await sdk.Codeplane.unwrap(cp.api.POST("/v1/environment-variables", { body: { name: `PAGE_${n}`, value: "v" } }));
    const names: string[] = [];
    for await (const v of cp.paginate((cursor) => sdk.Codeplane.unwrap(cp.api.GET("/v1/environment-variables", { params: { query: { limit: 2, cursor } } }))))
      names.push(v.name);
    expect(names.filter((n) => n.startsWith("PAGE_")).sort()).toEqual(range(1, 5).map((n) => `PAGE_${n}`));
  });
});
