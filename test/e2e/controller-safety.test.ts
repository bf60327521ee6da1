import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INSTALLATION_LABEL, runSecretName } from "../../src/resources/labels.ts";
import { gitListenerEnv, until } from "../helpers/cluster.ts";
import { startE2E, type E2E } from "../helpers/e2e.ts";
import { startTestService, type TestService } from "../helpers/service.ts";

// What the controller must not do, on a real cluster: harm work its database
// does not know (a second installation beside it, itself restarted on an
// empty database), erase history when a resource is deleted by hand, leave a
// run's Secret in etcd, keep finished resources forever, or retry a resource
// it can never reconcile forever.

let e: E2E;
const others: TestService[] = [];

beforeAll(async () => {
  e = await startE2E("cp-e2e-safety", { env: { CODEPLANE_LOG_LEVEL: "info", CODEPLANE_RESOURCE_RETENTION_SECONDS: "600" } });
});
afterAll(async () => {
  for (const s of others) await s.close().catch(() => undefined);
  await e?.close();
});

const ns = () => e.cluster.namespace;
/** alice's calls to whichever service is current (tests restart it on the same database). */
const api = (p: string, init: RequestInit & { json?: unknown } = {}) => {
  const { json, ...rest } = init;
  return fetch(`${e.svc.url}${p}`, {
    ...rest,
    headers: { authorization: `Bearer ${e.alice.key}`, ...(json !== undefined && { "content-type": "application/json" }) },
    ...(json !== undefined && { body: JSON.stringify(json) }),
  });
};
const runResource = (name: string) =>
  e.cluster.custom.getNamespacedCustomObject({ group: "codeplane.dev", version: "v1alpha1", namespace: ns(), plural: "runs", name }) as Promise<{
    metadata: { labels?: Record<string, string> };
    status?: { phase?: string; error?: string; conditions?: { type: string; status: string; reason: string }[] };
  }>;
const exists = (p: Promise<unknown>) =>
  p.then(
    () => true,
    (err: { code?: number }) => (err.code === 404 ? false : Promise.reject(err as Error)),
  );

async function startRun(command: string[]): Promise<string> {
  const res = await api(`/v1/repositories/${e.repoId}/main/runs`, { method: "POST", json: { command } });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()).run_id;
}

async function finished(svc: { url: string }, runId: string, timeoutMs = 120_000) {
  return until(`run ${runId} to finish`, timeoutMs, async () => {
    const run = await (await fetch(`${svc.url}/v1/runs/${runId}`, { headers: { authorization: `Bearer ${e.alice.key}` } })).json();
    return ["completed", "failed", "cancelled"].includes(run.status) ? run : undefined;
  });
}

/** Another service on the same namespace: a fresh, empty database unless DATABASE_URL is given. */
async function another(env: Record<string, string> = {}): Promise<TestService> {
  // On the first service's database, with the key its secrets are encrypted under.
  if (env.DATABASE_URL) env = { CODEPLANE_ENCRYPTION_KEY: e.svc.encryptionKey, ...env };
  const s = await startTestService({
    KUBECONFIG: e.cluster.kubeconfig,
    CODEPLANE_NAMESPACE: ns(),
    CODEPLANE_IMAGE_PULL_POLICY: "Never",
    CODEPLANE_LOG_LEVEL: "info",
    ...gitListenerEnv(),
    ...env,
  });
  others.push(s);
  return s;
}

describe("work the database does not know", () => {
  it("a second installation with an empty database beside the first harms nothing: the run finishes correctly", async () => {
    const runId = await startRun(["sh", "-c", "sleep 12; echo done"]);
    const resource = await runResource(`run-${runId}`);
    expect(resource.metadata.labels?.[INSTALLATION_LABEL]).toMatch(/^[0-9a-f-]{36}$/);
    const second = await another({ CODEPLANE_COMPONENTS: "controller" });
    const installation = async (s: TestService) => (await s.db.selectFrom("installation").select("id").executeTakeFirstOrThrow()).id;
    expect(await installation(second)).not.toBe(await installation(e.svc));
    const run = await finished(e.svc, runId);
    expect(run).toMatchObject({ status: "completed", exit_code: 0 });
    expect((await (await api(`/v1/runs/${runId}/logs/stdout`)).json()).content).toBe("done\n");
    expect(await exists(runResource(`run-${runId}`))).toBe(true);
    expect(second.logs.filter((l) => l.includes(runId) && /deleting|"level":50/.test(l))).toEqual([]);
  });

  it("the same controller restarted on an empty database leaves the run alone, and the run completes once it is back on its own", async () => {
    const runId = await startRun(["sh", "-c", "sleep 15; echo done"]);
    await until("the run to start", 90_000, async () => (await (await api(`/v1/runs/${runId}`)).json()).status === "running");
    const originalUrl = e.svc.databaseUrl;
    await e.svc.stop();
    const empty = await another();
    await new Promise((r) => setTimeout(r, 8000));
    // Still there, still running, untouched by a controller that does not know it.
    expect(await exists(runResource(`run-${runId}`))).toBe(true);
    const jobs = await e.cluster.batch.listNamespacedJob({ namespace: ns(), labelSelector: `codeplane.dev/run=${runId}` });
    expect(jobs.items).toHaveLength(1);
    expect(empty.logs.filter((l) => l.includes(runId) && /deleting|"level":50/.test(l))).toEqual([]);
    await empty.stop();
    const back = await another({ DATABASE_URL: originalUrl });
    const run = await finished(back, runId);
    expect(run).toMatchObject({ status: "completed", exit_code: 0 });
    await back.stop();
    // Later tests use the first service again.
    const again = await another({ DATABASE_URL: originalUrl });
    e.svc = again;
  });
});

describe("the resource and the row over time", () => {
  it("a run's Secret of environment values is gone once its command has started", async () => {
    const set = await api("/v1/environment-variables", { method: "POST", json: { name: "API_TOKEN", value: "s3cret", secret: true, repository_id: e.repoId } });
    expect(set.status, await set.clone().text()).toBe(201);
    const runId = await startRun(["sh", "-c", 'echo "token=$API_TOKEN"']);
    const run = await finished(e.svc, runId);
    expect(run.status).toBe("completed");
    expect((await (await api(`/v1/runs/${runId}/logs/stdout`)).json()).content).toBe("token=s3cret\n");
    await until(
      "the run's Secret to be deleted",
      30_000,
      async () => !(await exists(e.cluster.core.readNamespacedSecret({ name: runSecretName(runId), namespace: ns() }))),
    );
  });

  it("kubectl delete of a finished Run keeps it readable through the API", async () => {
    const runId = await startRun(["sh", "-c", "echo kept"]);
    expect((await finished(e.svc, runId)).status).toBe("completed");
    await e.cluster.custom.deleteNamespacedCustomObject({ group: "codeplane.dev", version: "v1alpha1", namespace: ns(), plural: "runs", name: `run-${runId}` });
    await until("the resource to be gone", 30_000, async () => !(await exists(runResource(`run-${runId}`))));
    await new Promise((r) => setTimeout(r, 2000));
    const run = await (await api(`/v1/runs/${runId}`)).json();
    expect(run).toMatchObject({ status: "completed", exit_code: 0 });
    expect((await (await api(`/v1/runs/${runId}/logs/stdout`)).json()).content).toBe("kept\n");
    // No controller will see this resource go again: the API's delete removes the row itself.
    expect((await api(`/v1/runs/${runId}`, { method: "DELETE" })).status).toBe(204);
    expect((await api(`/v1/runs/${runId}`)).status).toBe(404);
  });

  it("retention removes finished resources and nothing else", async () => {
    await e.svc.stop();
    const short = await another({ DATABASE_URL: e.svc.databaseUrl, CODEPLANE_RESOURCE_RETENTION_SECONDS: "3" });
    const call = (p: string) => fetch(`${short.url}${p}`, { headers: { authorization: `Bearer ${e.alice.key}` } });
    const create = async (command: string[]) =>
      (
        await (
          await fetch(`${short.url}/v1/repositories/${e.repoId}/main/runs`, {
            method: "POST",
            headers: { authorization: `Bearer ${e.alice.key}`, "content-type": "application/json" },
            body: JSON.stringify({ command }),
          })
        ).json()
      ).run_id as string;
    const quick = await create(["sh", "-c", "echo quick"]);
    const slow = await create(["sh", "-c", "sleep 25"]);
    expect(quick).toMatch(/^[0-9a-f-]{36}$/);
    expect(slow).toMatch(/^[0-9a-f-]{36}$/);
    const done = await finished(short, quick);
    expect(done.status, JSON.stringify(done)).toBe("completed");
    await until("the finished resource to be removed", 30_000, async () => !(await exists(runResource(`run-${quick}`))));
    expect(await exists(runResource(`run-${slow}`))).toBe(true);
    expect((await (await call(`/v1/runs/${quick}`)).json()).status).toBe("completed");
    expect((await (await call(`/v1/runs/${quick}/logs/stdout`)).json()).content).toBe("quick\n");
    await short.stop();
    e.svc = await another({ DATABASE_URL: e.svc.databaseUrl });
  });
});

describe("a resource the controller can never reconcile", () => {
  it.each([
    ["a compute type this installation does not define", { computeType: "nope" }, "UnknownComputeType"],
    ["a command Postgres cannot store", { command: ["echo", "a\u0000b"] }, "Unstorable"],
  ])("%s ends failed with the reason within a minute, and stays failed", async (_name, change, reason) => {
    const valid = await runResource(`run-${await startRun(["true"])}`);
    const spec = (valid as unknown as { spec: Record<string, unknown> }).spec;
    const runId = crypto.randomUUID();
    const name = `run-${runId}`;
    await e.cluster.custom.createNamespacedCustomObject({
      group: "codeplane.dev",
      version: "v1alpha1",
      namespace: ns(),
      plural: "runs",
      body: { apiVersion: "codeplane.dev/v1alpha1", kind: "Run", metadata: { name, labels: valid.metadata.labels }, spec: { ...spec, runId, ...change } },
    });
    const failed = await until(`${name} to be marked failed`, 60_000, async () => {
      const r = await runResource(name);
      return r.status?.phase === "failed" ? r : undefined;
    });
    expect(failed.status?.conditions).toContainEqual(expect.objectContaining({ type: "Finished", status: "True", reason }));
    await new Promise((r) => setTimeout(r, 5000));
    expect((await runResource(name)).status?.phase).toBe("failed");
    const attempts = e.svc.logs.filter((l) => l.includes(name) && l.includes("reconcile failed")).length;
    expect(attempts).toBeLessThanOrEqual(8);
    const jobs = await e.cluster.batch.listNamespacedJob({ namespace: ns(), labelSelector: `codeplane.dev/run=${runId}` });
    expect(jobs.items).toHaveLength(0);
  });
});
