import http, { type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gitListenerEnv, until } from "../helpers/cluster.ts";
import { startE2E, type E2E } from "../helpers/e2e.ts";
import { startTestService, type TestService } from "../helpers/service.ts";

// Notifications on the local cluster: two real runs end (one fails, one
// completes) and a webhook receiver on loopback gets each event once, signed
// so the official Standard Webhooks library verifies it. The receiver fails
// the first two attempts of run.failed; the service whose controller saw the
// runs end is stopped after the first attempt, and another (API and
// controller) started on the same database makes the second and third.

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

let e: E2E;
let server: http.Server;
let receiverUrl: string;
const received: Received[] = [];
let failedAttempts = 0;
const others: TestService[] = [];

const PRINT = "#!/bin/sh\necho training\nexit 3\n";
const env = { CODEPLANE_LOG_LEVEL: "info", CODEPLANE_NOTIFICATIONS_RETRY_BASE_SECONDS: "5" };

beforeAll(async () => {
  e = await startE2E("cp-e2e-notify", { env, prepare: async (f) => void (await f.commit("main", { "print.sh": { exec: PRINT } })) });
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const r = { headers: req.headers, body: Buffer.concat(chunks).toString("utf8") };
      received.push(r);
      const failing = (JSON.parse(r.body) as { type: string }).type === "run.failed" && ++failedAttempts <= 2;
      res.writeHead(failing ? 503 : 200).end(failing ? "down" : "ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}, 300_000);
afterAll(async () => {
  for (const s of others) await s.close();
  if (server) await new Promise((r) => server.close(r));
  await e?.close();
});

const of = (type: string) => received.filter((r) => (JSON.parse(r.body) as { type: string }).type === type);

describe("notifications on a real cluster", () => {
  it("sends run.failed and run.completed once each, the failing receiver's third attempt across a restart", async () => {
    const ep = await e.alice.api("/v1/notification-endpoints", { method: "POST", json: { url: receiverUrl, events: ["run.completed", "run.failed"] } });
    expect(ep.status).toBe(201);
    const { id: endpointId, secret } = (await ep.json()) as { id: string; secret: string };
    const start = async (command: string[]) => {
      const res = await e.alice.api(`/v1/repositories/${e.repoId}/main/runs`, { method: "POST", json: { command } });
      expect(res.status, await res.clone().text()).toBe(201);
      return ((await res.json()) as { run_id: string }).run_id;
    };
    const failing = await start(["sh", "print.sh"]);
    const passing = await start(["true"]);
    await until("the first attempt of run.failed and run.completed", 300_000, () => of("run.failed").length >= 1 && of("run.completed").length >= 1);

    // The service that ran the controller stops; another takes over API, controller and the queue.
    await e.svc.stop();
    const second = await startTestService({
      KUBECONFIG: e.cluster.kubeconfig,
      CODEPLANE_NAMESPACE: e.cluster.namespace,
      CODEPLANE_IMAGE_PULL_POLICY: "Never",
      ...gitListenerEnv(),
      ...env,
      DATABASE_URL: e.svc.databaseUrl,
      CODEPLANE_ENCRYPTION_KEY: e.svc.encryptionKey,
    });
    others.push(second);
    await until("the third attempt of run.failed", 120_000, () => of("run.failed").length >= 3);
    await new Promise((r) => setTimeout(r, 5000));
    expect(of("run.failed")).toHaveLength(3);
    expect(of("run.completed")).toHaveLength(1);

    for (const r of received) expect(new Webhook(secret).verify(r.body, r.headers as Record<string, string>)).toEqual(JSON.parse(r.body));
    const failedBody = JSON.parse(of("run.failed")[0]!.body) as { data: Record<string, unknown> };
    expect(failedBody.data).toMatchObject({ run_id: failing, status: "failed", exit_code: 3 });
    expect((JSON.parse(of("run.completed")[0]!.body) as { data: Record<string, unknown> }).data).toMatchObject({
      run_id: passing,
      status: "completed",
      exit_code: 0,
    });
    expect(new Set(of("run.failed").map((r) => r.headers["webhook-id"])).size).toBe(1);

    const page = (await (
      await fetch(`${second.url}/v1/notification-endpoints/${endpointId}/deliveries`, { headers: { authorization: `Bearer ${e.alice.key}` } })
    ).json()) as { items: { event: string; status: string; attempts: number; response_status: number }[] };
    expect(page.items.find((d) => d.event === "run.failed")).toMatchObject({ status: "delivered", attempts: 3, response_status: 200 });
    expect(page.items.find((d) => d.event === "run.completed")).toMatchObject({ status: "delivered", attempts: 1, response_status: 200 });
  }, 600_000);
});
