import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSecretName } from "../../src/resources/labels.ts";
import { until, type TestCluster } from "../helpers/cluster.ts";
import { startE2E, type E2E } from "../helpers/e2e.ts";
import type { Tenant, TestService } from "../helpers/service.ts";

// Runs end to end: the API creates a Run, the controller launches a Job on a
// real kubelet, the pod clones the commit from the cluster's git daemon, and
// status and logs come back through Postgres.

let cluster: TestCluster;
let svc: TestService;
let alice: Tenant;
let bob: Tenant;
let repoId: string;
let tip: string;
let e: E2E;

const PRINT = "#!/bin/sh\necho out1\necho err1 >&2\necho out2\necho err2 >&2\nexit 3\n";

beforeAll(async () => {
  e = await startE2E("cp-e2e-runs", {
    env: { CODEPLANE_LOG_LEVEL: "info" },
    prepare: async (f) => void (tip = await f.commit("main", { "print.sh": { exec: PRINT } })),
  });
  ({ cluster, svc, alice, repoId } = e);
  bob = await svc.tenant();
});
afterAll(() => e?.close());

async function startRun(json: unknown, t: Tenant = alice): Promise<{ run_id: string; status: string; workflow_id: string }> {
  const res = await t.api(`/v1/repositories/${repoId}/main/runs`, { method: "POST", json });
  expect(res.status, await res.clone().text()).toBe(201);
  return res.json();
}

async function finished(runId: string, timeoutMs = 120_000) {
  return until(`run ${runId} to finish`, timeoutMs, async () => {
    const run = await (await alice.api(`/v1/runs/${runId}`)).json();
    return ["completed", "failed", "cancelled"].includes(run.status) ? run : undefined;
  });
}

describe("runs on a real cluster", () => {
  it("runs a command in the checkout, keeps stdout and stderr apart, and records the exit", async () => {
    const created = await startRun({ command: ["sh", "print.sh"] });
    expect(created.status).toBe("pending");
    expect(created.workflow_id).toBe(`${cluster.namespace}/run-${created.run_id}`);
    const run = await finished(created.run_id);
    expect(run).toMatchObject({ status: "failed", exit_code: 3, error: "command exited with code 3", commit_hash: tip });
    expect(run.start_time).not.toBeNull();
    expect(run.close_time).not.toBeNull();
    expect(run.duration_seconds).toBeGreaterThanOrEqual(0);

    await until("logs to be archived", 30_000, async () => {
      const row = await svc.db.selectFrom("runs").select("logs_complete").where("id", "=", created.run_id).executeTakeFirst();
      return row?.logs_complete;
    });
    const stdout = await (await alice.api(`/v1/runs/${created.run_id}/logs/stdout`)).json();
    expect(stdout).toEqual({ run_id: created.run_id, stream: "stdout", content: "out1\nout2\n", size: 10, truncated: false });
    const stderr = await (await alice.api(`/v1/runs/${created.run_id}/logs/stderr`)).json();
    expect(stderr.content).toBe("err1\nerr2\n");

    // kubectl's view: the resource, its status and its children.
    const cr = (await cluster.custom.getNamespacedCustomObject({
      group: "codeplane.dev",
      version: "v1alpha1",
      namespace: cluster.namespace,
      plural: "runs",
      name: `run-${created.run_id}`,
    })) as {
      spec: Record<string, unknown>;
      status: { phase: string; exitCode: number; conditions: { type: string; status: string; observedGeneration: number }[] };
    };
    expect(cr.status.phase).toBe("failed");
    expect(cr.status.exitCode).toBe(3);
    expect(cr.status.conditions.find((c) => c.type === "Finished")).toMatchObject({ status: "True", observedGeneration: 1 });
    const job = await cluster.batch.readNamespacedJob({ name: `run-${created.run_id}`, namespace: cluster.namespace });
    expect(job.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "Run", controller: true });
    expect(job.spec?.template.spec?.automountServiceAccountToken).toBe(false);

    // The logs outlive the Job and its pod.
    await cluster.batch.deleteNamespacedJob({ name: `run-${created.run_id}`, namespace: cluster.namespace, propagationPolicy: "Foreground" });
    await until("the pod to be gone", 60_000, async () => {
      const pods = await cluster.core.listNamespacedPod({ namespace: cluster.namespace, labelSelector: `codeplane.dev/run=${created.run_id}` });
      return pods.items.length === 0;
    });
    expect((await (await alice.api(`/v1/runs/${created.run_id}/logs/stdout`)).json()).content).toBe("out1\nout2\n");
    expect((await (await alice.api(`/v1/runs/${created.run_id}`)).json()).status).toBe("failed");
  });

  it("passes environment variables through a Secret the Run owns (gone once the command started), never through its spec", async () => {
    const secretValue = `v-${Date.now()}`;
    await alice.api("/v1/environment-variables", { method: "POST", json: { name: "GREETING", value: secretValue } });
    await alice.api("/v1/environment-variables", { method: "POST", json: { name: "SCOPE", value: "account", secret: false } });
    await alice.api("/v1/environment-variables", { method: "POST", json: { name: "SCOPE", value: "repository", secret: false, repository_id: repoId } });
    const created = await startRun({ command: ["sh", "-c", 'echo "$GREETING $SCOPE"'] });
    const run = await finished(created.run_id);
    expect(run).toMatchObject({ status: "completed", exit_code: 0, error: null });
    await until(
      "logs",
      30_000,
      async () => (await (await alice.api(`/v1/runs/${created.run_id}/logs/stdout`)).json()).content === `${secretValue} repository\n`,
    );
    const cr = await cluster.custom.getNamespacedCustomObject({
      group: "codeplane.dev",
      version: "v1alpha1",
      namespace: cluster.namespace,
      plural: "runs",
      name: `run-${created.run_id}`,
    });
    expect(JSON.stringify(cr)).not.toContain(secretValue);
    // The values reached the process; the Secret that carried them (owned by the Run: see the
    // reconciler's tables) does not stay in etcd once the command has started.
    const secret = await cluster.core
      .readNamespacedSecret({ name: runSecretName(created.run_id), namespace: cluster.namespace })
      .catch((err: { code?: number }) => err);
    expect((secret as { code?: number }).code).toBe(404);
    expect(svc.logs.join("\n")).not.toContain(secretValue);
  });

  it("cancels a running run within seconds", async () => {
    const created = await startRun({ command: ["sleep", "300"] });
    await until("the run to be running", 90_000, async () => (await (await alice.api(`/v1/runs/${created.run_id}`)).json()).status === "running");
    const res = await alice.api(`/v1/runs/${created.run_id}/cancel`, { method: "POST" });
    expect(res.status).toBe(202);
    const t0 = Date.now();
    const run = await finished(created.run_id, 30_000);
    expect(run.status).toBe("cancelled");
    expect(Date.now() - t0).toBeLessThan(20_000);
    const again = await alice.api(`/v1/runs/${created.run_id}/cancel`, { method: "POST" });
    expect(again.status).toBe(409);
  });

  it("fails a run that runs past its timeout, saying so", async () => {
    const created = await startRun({ command: ["sleep", "120"], timeout_seconds: 5 });
    const run = await finished(created.run_id, 90_000);
    expect(run).toMatchObject({ status: "failed", error: "timed out after 5s" });
  });

  it("fails a run whose pod is deleted mid-run, with a clear error", async () => {
    const created = await startRun({ command: ["sleep", "300"] });
    await until("the run to be running", 90_000, async () => (await (await alice.api(`/v1/runs/${created.run_id}`)).json()).status === "running");
    const pods = await cluster.core.listNamespacedPod({ namespace: cluster.namespace, labelSelector: `codeplane.dev/run=${created.run_id}` });
    await cluster.core.deleteNamespacedPod({ name: pods.items[0]!.metadata!.name!, namespace: cluster.namespace, gracePeriodSeconds: 0 });
    const run = await finished(created.run_id, 60_000);
    expect(run.status).toBe("failed");
    expect(run.error).toMatch(/pod|deleted|disrupt|exit/i);
  });

  it("keeps tenants apart and deletes a run with everything it owns", async () => {
    const created = await startRun({ command: ["true"] });
    for (const [method, path] of [
      ["GET", `/v1/runs/${created.run_id}`],
      ["GET", `/v1/runs/${created.run_id}/logs/stdout`],
      ["POST", `/v1/runs/${created.run_id}/cancel`],
      ["DELETE", `/v1/runs/${created.run_id}`],
    ] as const) {
      const res = await bob.api(path, { method });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await (await bob.api("/v1/runs")).json()).items).toEqual([]);
    await finished(created.run_id);
    expect((await alice.api(`/v1/runs/${created.run_id}`, { method: "DELETE" })).status).toBe(204);
    expect((await alice.api(`/v1/runs/${created.run_id}`)).status).toBe(404);
    await until("the Run resource to be gone", 30_000, async () => {
      try {
        await cluster.custom.getNamespacedCustomObject({
          group: "codeplane.dev",
          version: "v1alpha1",
          namespace: cluster.namespace,
          plural: "runs",
          name: `run-${created.run_id}`,
        });
        return false;
      } catch {
        return true;
      }
    });
  });
});
