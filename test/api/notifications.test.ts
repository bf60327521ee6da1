import { randomUUID } from "node:crypto";
import http, { type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANALYSIS_ROWS } from "../../src/domain/analyses/analysis-rows.ts";
import { RUN_ROWS } from "../../src/domain/runs/run-rows.ts";
import { workloadRows } from "../../src/domain/workloads/workload-rows.ts";
import type { AnalysisSpec, AnalysisStatus } from "../../src/resources/analysis.ts";
import type { RunSpec, RunStatus } from "../../src/resources/run.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";
import { until } from "../helpers/until.ts";

// Notifications end to end against a real Postgres and real HTTP receivers on
// loopback: terminal transitions recorded as the controller records them
// (the workload mirror) queue deliveries in the same transaction; the
// service's worker sends each once, signed so the official Standard Webhooks
// library verifies it; a receiver that fails twice gets it on the third
// attempt even though the service that made the first attempt is stopped and
// another started on the same database; the endpoint URL policy refuses
// local addresses when local repositories are not allowed, at registration
// and again at delivery; another account's endpoint is a 404.

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

interface Receiver {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/** An HTTP receiver on loopback answering each request with `status(n)` (n counts from 1). */
async function receiver(status: (n: number) => number = () => 204): Promise<Receiver> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      const code = status(received.length);
      res.writeHead(code, { "content-type": "text/plain" }).end(code >= 300 ? "receiver is down for maintenance" : "ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/codeplane`,
    received,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

const ALL = ["run.completed", "run.failed", "run.cancelled", "analysis.completed", "analysis.failed"];
const env = { CODEPLANE_NOTIFICATIONS_RETRY_BASE_SECONDS: "2", CODEPLANE_LOG_LEVEL: "info" };

let svc: TestService;
let tenant: Tenant;
let repositoryId: string;

beforeAll(async () => {
  svc = await startTestService(env);
  tenant = await svc.tenant();
  repositoryId = randomUUID();
  await svc.db
    .insertInto("repositories")
    .values({
      id: repositoryId,
      account_id: tenant.accountId,
      name: "r",
      url: "https://example.invalid/r",
      provider: "git",
      created_at: new Date(),
      updated_at: new Date(),
    })
    .execute();
});
afterAll(() => svc?.close());

const COMMIT = "c".repeat(40);

function runSpec(accountId = tenant.accountId, repo = repositoryId): RunSpec {
  return {
    runId: randomUUID(),
    accountId,
    repositoryId: repo,
    repositoryUrl: "https://example.invalid/r",
    commitHash: COMMIT,
    command: ["python3", "train.py"],
    computeType: "cpu-general",
    timeoutSeconds: 60,
  };
}

/** What the controller does when it sees the run end: mirror the resource's status. */
async function finishRun(db: TestService["db"], spec: RunSpec, status: RunStatus): Promise<void> {
  const rows = workloadRows<RunSpec, RunStatus>(db, RUN_ROWS);
  const m = { namespace: "codeplane", name: `run-${spec.runId}`, createdAt: new Date(), spec };
  await rows.mirror({ ...m, status: { phase: "running", startTime: "2026-01-01T00:00:00Z" } });
  await rows.mirror({ ...m, status });
}

async function finishAnalysis(db: TestService["db"], phase: "completed" | "failed"): Promise<string> {
  const id = randomUUID();
  const spec: AnalysisSpec = {
    analysisId: id,
    accountId: tenant.accountId,
    repositoryId,
    repositoryUrl: "https://example.invalid/r",
    commitHash: id.replaceAll("-", "").padEnd(40, "0"),
    language: "en",
    timeoutSeconds: 60,
  };
  const rows = workloadRows<AnalysisSpec, AnalysisStatus>(db, ANALYSIS_ROWS);
  const m = { namespace: "codeplane", name: `analysis-${id}`, createdAt: new Date(), spec };
  await rows.mirror({ ...m, status: { phase: "running", startTime: "2026-01-01T00:00:00Z" } });
  await rows.mirror({
    ...m,
    status: {
      phase,
      startTime: "2026-01-01T00:00:00Z",
      completionTime: "2026-01-01T00:01:00Z",
      ...(phase === "failed" && { error: "the analyzer ran out of time" }),
    },
  });
  return id;
}

async function createEndpoint(t: Tenant, body: Record<string, unknown>) {
  const res = await t.api("/v1/notification-endpoints", { method: "POST", json: body });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { id: string; url: string; events: string[]; enabled: boolean; secret: string };
}

/** A tenant of the shared database (svc's), calling another service started on it. */
const via = (service: TestService, t: Tenant): Tenant => ({
  ...t,
  api: (pathname, init = {}) => {
    const { json, headers, ...rest } = init;
    return fetch(service.url + pathname, {
      ...rest,
      headers: {
        authorization: `Bearer ${t.key}`,
        ...(json !== undefined && { "content-type": "application/json" }),
        ...(headers as Record<string, string> | undefined),
      },
      ...(json !== undefined && { body: JSON.stringify(json) }),
    });
  },
});

const parsed = (r: Received) => JSON.parse(r.body) as { type: string; timestamp: string; data: Record<string, unknown> };

describe("notification endpoints", () => {
  it("shows the secret once, stores it sealed, and keeps endpoints to their account", async () => {
    const created = await createEndpoint(tenant, { url: "https://hooks.example.com/codeplane", events: ["run.failed"] });
    expect(created).toMatchObject({ url: "https://hooks.example.com/codeplane", events: ["run.failed"], enabled: true });
    expect(created.secret).toMatch(/^whsec_/);
    const got = await (await tenant.api(`/v1/notification-endpoints/${created.id}`)).json();
    expect(got).not.toHaveProperty("secret");
    const list = await (await tenant.api("/v1/notification-endpoints")).json();
    expect(list.items.map((e: { id: string }) => e.id)).toContain(created.id);
    expect(JSON.stringify(list)).not.toContain(created.secret);
    // At rest: sealed, not the secret's text or its key bytes.
    const row = await svc.db.selectFrom("notification_endpoints").selectAll().where("id", "=", created.id).executeTakeFirstOrThrow();
    expect(row.secret_ciphertext.includes(Buffer.from(created.secret))).toBe(false);
    expect(row.secret_ciphertext.includes(Buffer.from(created.secret.slice(6), "base64"))).toBe(false);
    expect(svc.logs.join("\n")).not.toContain(created.secret.slice(6));

    const other = await svc.tenant();
    for (const [method, path] of [
      ["GET", `/v1/notification-endpoints/${created.id}`],
      ["PATCH", `/v1/notification-endpoints/${created.id}`],
      ["DELETE", `/v1/notification-endpoints/${created.id}`],
      ["GET", `/v1/notification-endpoints/${created.id}/deliveries`],
      ["POST", `/v1/notification-endpoints/${created.id}/deliveries/${randomUUID()}/redeliver`],
    ] as const) {
      const res = await other.api(path, { method, ...(method === "PATCH" && { json: { enabled: false } }) });
      expect(res.status, `${method} ${path} by another account`).toBe(404);
    }
    expect((await (await other.api("/v1/notification-endpoints")).json()).items).toEqual([]);

    const patched = await tenant.api(`/v1/notification-endpoints/${created.id}`, {
      method: "PATCH",
      json: { events: ["run.completed", "run.failed"], enabled: false },
    });
    expect(await patched.json()).toMatchObject({ events: ["run.completed", "run.failed"], enabled: false });
    expect((await tenant.api(`/v1/notification-endpoints/${created.id}`, { method: "DELETE" })).status).toBe(204);
    expect((await tenant.api(`/v1/notification-endpoints/${created.id}`)).status).toBe(404);
  });

  it("refuses unknown events, repeated events and none", async () => {
    for (const events of [["run.started"], ["run.failed", "run.failed"], []]) {
      const res = await tenant.api("/v1/notification-endpoints", { method: "POST", json: { url: "https://hooks.example.com/x", events } });
      expect(res.status, JSON.stringify(events)).toBe(422);
      expect((await res.json()).detail[0].loc[0]).toBe("body");
    }
  });

  it("refuses more endpoints than the account may have", async () => {
    const limited = await startTestService({
      DATABASE_URL: svc.databaseUrl,
      CODEPLANE_ENCRYPTION_KEY: svc.encryptionKey,
      CODEPLANE_NOTIFICATIONS_MAX_ENDPOINTS: "2",
      CODEPLANE_LOG_LEVEL: "silent",
    });
    try {
      const t = via(limited, await svc.tenant());
      await createEndpoint(t, { url: "https://a.example.com/", events: ["run.failed"] });
      await createEndpoint(t, { url: "https://b.example.com/", events: ["run.failed"] });
      const res = await t.api("/v1/notification-endpoints", { method: "POST", json: { url: "https://c.example.com/", events: ["run.failed"] } });
      expect(res.status).toBe(409);
      expect((await res.json()).detail).toContain("CODEPLANE_NOTIFICATIONS_MAX_ENDPOINTS");
    } finally {
      await limited.close();
    }
  });
});

describe("deliveries", () => {
  it("sends each event once to each subscribed endpoint, signed and verifiable, with the subject as the API shows it", async () => {
    const all = await receiver();
    const failedOnly = await receiver();
    try {
      const a = await createEndpoint(tenant, { url: all.url, events: ALL });
      const f = await createEndpoint(tenant, { url: failedOnly.url, events: ["run.failed"] });
      await createEndpoint(tenant, { url: all.url, events: ALL, enabled: false }); // disabled: never queued for

      const completed = runSpec();
      await finishRun(svc.db, completed, { phase: "completed", exitCode: 0, startTime: "2026-01-01T00:00:00Z", completionTime: "2026-01-01T00:00:05Z" });
      const failed = runSpec();
      await finishRun(svc.db, failed, {
        phase: "failed",
        exitCode: 3,
        error: "exit code 3",
        startTime: "2026-01-01T00:00:00Z",
        completionTime: "2026-01-01T00:00:05Z",
      });
      const cancelled = runSpec();
      await workloadRows<RunSpec, RunStatus>(svc.db, RUN_ROWS).mirror({
        namespace: "codeplane",
        name: `run-${cancelled.runId}`,
        createdAt: new Date(),
        spec: cancelled,
        status: { phase: "pending" },
      });
      await workloadRows<RunSpec, RunStatus>(svc.db, RUN_ROWS).resourceGone(cancelled.runId, `codeplane/run-${cancelled.runId}`);
      const analysisOk = await finishAnalysis(svc.db, "completed");
      const analysisFailed = await finishAnalysis(svc.db, "failed");
      // The controller seeing the same ending again queues nothing more.
      await finishRun(svc.db, completed, { phase: "completed", exitCode: 0, startTime: "2026-01-01T00:00:00Z", completionTime: "2026-01-01T00:00:05Z" });

      await until("five deliveries to the first receiver and one to the second", 60_000, () => all.received.length >= 5 && failedOnly.received.length >= 1);
      // Give a duplicate every chance to show up: two more poll rounds of the worker.
      await new Promise((r) => setTimeout(r, 5000));
      expect(all.received).toHaveLength(5);
      expect(failedOnly.received).toHaveLength(1);

      const byType = new Map(all.received.map((r) => [parsed(r).type, r]));
      expect([...byType.keys()].sort()).toEqual([...ALL].sort());
      for (const r of all.received) {
        // The official library verifies the signature, the timestamp's freshness and returns the body.
        expect(new Webhook(a.secret).verify(r.body, r.headers as Record<string, string>)).toEqual(JSON.parse(r.body));
        expect(() => new Webhook(f.secret).verify(r.body, r.headers as Record<string, string>)).toThrow();
        expect(r.headers["content-type"]).toBe("application/json");
      }
      expect(new Webhook(f.secret).verify(failedOnly.received[0]!.body, failedOnly.received[0]!.headers as Record<string, string>)).toMatchObject({
        type: "run.failed",
      });
      expect(new Set(all.received.map((r) => r.headers["webhook-id"])).size).toBe(5);

      // data is the run as GET /v1/runs/{id} shows it, timestamp when it ended.
      const run = await (await tenant.api(`/v1/runs/${failed.runId}`)).json();
      expect(parsed(byType.get("run.failed")!)).toEqual({ type: "run.failed", timestamp: "2026-01-01T00:00:05.000Z", data: run });
      expect(parsed(byType.get("run.completed")!).data).toMatchObject({ run_id: completed.runId, status: "completed", exit_code: 0 });
      expect(parsed(byType.get("run.cancelled")!).data).toMatchObject({ run_id: cancelled.runId, status: "cancelled" });
      expect(parsed(byType.get("analysis.completed")!).data).toMatchObject({ id: analysisOk, status: "completed" });
      expect(parsed(byType.get("analysis.failed")!).data).toMatchObject({ id: analysisFailed, status: "failed", error: "the analyzer ran out of time" });

      // Recorded: delivered, one attempt, the receiver's status.
      const page = await (await tenant.api(`/v1/notification-endpoints/${a.id}/deliveries?limit=3`)).json();
      expect(page.items).toHaveLength(3);
      expect(page.next_cursor).toEqual(expect.any(String));
      const rest = await (await tenant.api(`/v1/notification-endpoints/${a.id}/deliveries?limit=3&cursor=${page.next_cursor}`)).json();
      const deliveries = [...page.items, ...rest.items];
      expect(deliveries).toHaveLength(5);
      for (const d of deliveries) {
        expect(d).toMatchObject({ endpoint_id: a.id, status: "delivered", attempts: 1, response_status: 204, error: null, next_attempt_at: null });
        expect(all.received.some((r) => r.headers["webhook-id"] === d.id)).toBe(true);
      }

      // A redelivery sends the same message again: same id, same body.
      const first = deliveries.find((d) => d.event === "run.failed")!;
      const again = await tenant.api(`/v1/notification-endpoints/${a.id}/deliveries/${first.id}/redeliver`, { method: "POST" });
      expect(again.status).toBe(202);
      expect(await again.json()).toMatchObject({ id: first.id, status: "queued" });
      await until("the redelivery", 30_000, () => all.received.length === 6);
      const resent = all.received[5]!;
      expect(resent.headers["webhook-id"]).toBe(first.id);
      expect(resent.body).toBe(byType.get("run.failed")!.body);
      expect(new Webhook(a.secret).verify(resent.body, resent.headers as Record<string, string>)).toMatchObject({ type: "run.failed" });
      const after = await until("the redelivery recorded", 10_000, async () => {
        const d = (await (await tenant.api(`/v1/notification-endpoints/${a.id}/deliveries`)).json()).items.find((x: { id: string }) => x.id === first.id);
        return d.status === "delivered" && d;
      });
      expect(after.attempts).toBe(2);
      expect(svc.logs.join("\n")).not.toContain(a.secret.slice(6));
    } finally {
      await all.close();
      await failedOnly.close();
    }
  });

  it("retries a failing receiver with backoff and delivers on the third attempt, across a restart of the service", async () => {
    const flaky = await receiver((n) => (n <= 2 ? 503 : 200));
    // A database of its own (no other service's worker drains it); the second service runs on the same one.
    const first = await startTestService({ ...env, CODEPLANE_NOTIFICATIONS_RETRY_BASE_SECONDS: "4" });
    let second: TestService | null = null;
    try {
      const t = await first.tenant();
      const repo = randomUUID();
      await first.db
        .insertInto("repositories")
        .values({
          id: repo,
          account_id: t.accountId,
          name: "r",
          url: "https://example.invalid/r",
          provider: "git",
          created_at: new Date(),
          updated_at: new Date(),
        })
        .execute();
      const ep = await createEndpoint(t, { url: flaky.url, events: ["run.failed"] });
      const spec = runSpec(t.accountId, repo);
      await finishRun(first.db, spec, { phase: "failed", exitCode: 1, startTime: "2026-01-01T00:00:00Z", completionTime: "2026-01-01T00:00:09Z" });

      await until("the first attempt", 30_000, () => flaky.received.length >= 1);
      // The service that made it stops (its attempt is recorded first); another takes over the queue.
      await first.stop();
      const afterFirst = await first.db.selectFrom("notification_deliveries").selectAll().where("endpoint_id", "=", ep.id).executeTakeFirstOrThrow();
      expect(afterFirst).toMatchObject({ status: "queued", attempts: 1, response_status: 503 });
      expect(afterFirst.last_error).toContain("HTTP 503: receiver is down for maintenance");
      second = await startTestService({
        ...env,
        DATABASE_URL: first.databaseUrl,
        CODEPLANE_ENCRYPTION_KEY: first.encryptionKey,
        CODEPLANE_NOTIFICATIONS_RETRY_BASE_SECONDS: "4",
      });
      await until("the third attempt", 60_000, () => flaky.received.length >= 3);
      const d = await until("the delivery recorded as delivered", 10_000, async () => {
        const page = await (await via(second!, t).api(`/v1/notification-endpoints/${ep.id}/deliveries`)).json();
        return page.items[0]?.status === "delivered" && page.items[0];
      });
      expect(d).toMatchObject({ status: "delivered", attempts: 3, response_status: 200, error: null });
      await new Promise((r) => setTimeout(r, 3000));
      expect(flaky.received).toHaveLength(3);
      // One message: the same id and body each time, each attempt signed afresh and verifiable.
      expect(new Set(flaky.received.map((r) => r.headers["webhook-id"]))).toEqual(new Set([d.id]));
      expect(new Set(flaky.received.map((r) => r.body)).size).toBe(1);
      for (const r of flaky.received) expect(new Webhook(ep.secret).verify(r.body, r.headers as Record<string, string>)).toMatchObject({ type: "run.failed" });
      // The first service made attempt 1 only; the second made 2 and 3.
      const attemptsIn = (logs: string[]) =>
        logs
          .map((l) => JSON.parse(l) as { delivery_id?: string; attempt?: number; msg: string })
          .filter((l) => l.delivery_id === d.id && /^notification (attempt failed|delivered)/.test(l.msg))
          .map((l) => l.attempt);
      expect(attemptsIn(first.logs)).toEqual([1]);
      expect(attemptsIn(second.logs)).toEqual([2, 3]);
      // Backoff: the second attempt came at least the base delay (minus jitter) after the first.
      const ts = flaky.received.map((r) => Number(r.headers["webhook-timestamp"]));
      expect(ts[1]! - ts[0]!).toBeGreaterThanOrEqual(3);
      expect(ts[2]! - ts[1]!).toBeGreaterThanOrEqual(6);
    } finally {
      await second?.close();
      await first.close();
      await flaky.close();
    }
  });
});

describe("the endpoint URL policy", () => {
  let strict: TestService;
  beforeAll(async () => {
    strict = await startTestService({
      DATABASE_URL: svc.databaseUrl,
      CODEPLANE_ENCRYPTION_KEY: svc.encryptionKey,
      CODEPLANE_ALLOW_LOCAL_REPOSITORIES: "false",
      CODEPLANE_LOG_LEVEL: "info",
    });
  });
  afterAll(() => strict?.stop());

  it.each([
    "http://hooks.example.com/x",
    "https://127.0.0.1/x",
    "https://[::1]/x",
    "https://169.254.169.254/latest/meta-data",
    "https://10.0.0.8/x",
    "https://localhost/x",
    "https://api.localhost/x",
    "https://intranet/x",
    "https://user:pass@hooks.example.com/x",
    "ftp://hooks.example.com/x",
    "not a url",
  ])("refuses %s with a 422 on body.url", async (url) => {
    const t = via(strict, await svc.tenant());
    const res = await t.api("/v1/notification-endpoints", { method: "POST", json: { url, events: ["run.failed"] } });
    expect(res.status).toBe(422);
    const body = await res.json();
    expect(body.detail[0]).toMatchObject({ loc: ["body", "url"], type: "value_error" });
  });

  it("refuses a local URL on PATCH too", async () => {
    const t = via(strict, await svc.tenant());
    const ep = await createEndpoint(t, { url: "https://93.184.215.14/hooks", events: ["run.failed"] });
    const res = await t.api(`/v1/notification-endpoints/${ep.id}`, { method: "PATCH", json: { url: "https://192.168.1.1/x" } });
    expect(res.status).toBe(422);
  });

  it("checks again at delivery: an endpoint registered while local addresses were allowed is not sent to once they are not", async () => {
    const r = await receiver();
    try {
      // Registered through the permissive service (loopback allowed there) ...
      const ep = await createEndpoint(tenant, { url: r.url, events: ["run.cancelled"] });
      // ... while only the strict service sends: the permissive one's worker is stopped for this test.
      await svc.stop();
      const spec = runSpec();
      await workloadRows<RunSpec, RunStatus>(svc.db, RUN_ROWS).mirror({
        namespace: "codeplane",
        name: `run-${spec.runId}`,
        createdAt: new Date(),
        spec,
        status: { phase: "cancelled" },
      });
      const row = await until("the refused attempt recorded", 30_000, async () => {
        const d = await svc.db.selectFrom("notification_deliveries").selectAll().where("endpoint_id", "=", ep.id).executeTakeFirst();
        return d && d.attempts >= 1 && d.status !== "sending" && d;
      });
      expect(row.last_error).toContain("refused by the endpoint URL policy");
      expect(row.response_status).toBeNull();
      expect(r.received).toHaveLength(0);
    } finally {
      await r.close();
    }
  });
});
