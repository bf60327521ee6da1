import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyCrds } from "../../src/k8s/install.ts";
import { gitListenerEnv, until, type TestCluster } from "../helpers/cluster.ts";
import { startE2E, type E2E } from "../helpers/e2e.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";
import { sseClient } from "../helpers/sse-client.ts";

// A run's retry policy on a real cluster (design.md, Results: `retries` on
// creation, `attempts` on the run): a pod deleted mid-run is an
// infrastructure failure, retried as a new Job while retries are left; a
// command's own non-zero exit never is; without retries the run fails as it
// always did. The log stays one ordered sequence across attempts, with
// codeplane's own line between them, in the stored log and on the live stream.

let cluster: TestCluster;
let svc: TestService;
let alice: Tenant;
let repoId: string;
let e: E2E;

beforeAll(async () => {
  e = await startE2E("cp-e2e-retries", { env: { CODEPLANE_LOG_LEVEL: process.env.RETRIES_E2E_LOG_LEVEL ?? "info" } });
  ({ cluster, svc, alice, repoId } = e);
});
afterAll(async () => {
  if (process.env.RETRIES_E2E_LOGS) (await import("node:fs")).writeFileSync(process.env.RETRIES_E2E_LOGS, svc.logs.join("\n"));
  await e?.close();
});

interface ApiRun {
  run_id: string;
  status: string;
  error: string | null;
  exit_code: number | null;
  run_config: { retries: number };
  attempts: {
    attempt: number;
    job_name: string;
    reason: string | null;
    error: string | null;
    started_at: string | null;
    ended_at: string | null;
    first_seq: number;
  }[];
}

/**
 * The cluster is shared: another checkout's tests may apply older CRDs (without `retries`, whose
 * API server then drops the field) at any time. Apply this checkout's, and start the run again if
 * its Run lost `retries` all the same.
 */
async function startRun(json: { retries?: number } & Record<string, unknown>): Promise<ApiRun> {
  for (let i = 0; ; i++) {
    await until("this checkout's CRDs to be applied", 60_000, () =>
      applyCrds(cluster.kc).then(
        () => true,
        () => undefined,
      ),
    );
    const res = await alice.api(`/v1/repositories/${repoId}/main/runs`, { method: "POST", json });
    expect(res.status, await res.clone().text()).toBe(201);
    const run = (await res.json()) as ApiRun;
    const stored = (await cluster.custom.getNamespacedCustomObject({
      group: "codeplane.dev",
      version: "v1alpha1",
      namespace: cluster.namespace,
      plural: "runs",
      name: `run-${run.run_id}`,
    })) as { spec: { retries?: number } };
    if (!json.retries || stored.spec.retries === json.retries || i >= 3) return run;
    await alice.api(`/v1/runs/${run.run_id}`, { method: "DELETE" });
  }
}

const getRun = async (id: string): Promise<ApiRun> => (await alice.api(`/v1/runs/${id}`)).json();

async function finished(runId: string, timeoutMs = 240_000): Promise<ApiRun> {
  return until(`run ${runId} to finish`, timeoutMs, async () => {
    const run = await getRun(runId);
    return ["completed", "failed", "cancelled"].includes(run.status) ? run : undefined;
  });
}

/** Every stored line of the run, both streams, in seq order (the paged log). */
async function storedLines(runId: string): Promise<{ seq: number; stream: string; line: string }[]> {
  const out: { seq: number; stream: string; line: string }[] = [];
  let after = 0;
  for (;;) {
    const page = await (await alice.api(`/v1/runs/${runId}/logs?after=${after}&limit=1000`)).json();
    out.push(...page.lines);
    if (page.next_after === null) return out;
    after = page.next_after;
  }
}

async function logsComplete(runId: string): Promise<void> {
  await until("the run's logs to be complete", 60_000, async () => {
    const row = await svc.db.selectFrom("runs").select("logs_complete").where("id", "=", runId).executeTakeFirst();
    return row?.logs_complete || undefined;
  });
}

/** Deletes the run's (current) pod once its command has printed `marker`. */
async function deletePodAfter(runId: string, marker: string): Promise<string> {
  await until(`run ${runId} to print ${marker}`, 180_000, async () => (await storedLines(runId)).some((l) => l.line === marker) || undefined);
  const pods = await cluster.core.listNamespacedPod({ namespace: cluster.namespace, labelSelector: `codeplane.dev/run=${runId}` });
  const pod = pods.items.find((p) => p.status?.phase === "Running");
  expect(pod, "a running pod").toBeDefined();
  await cluster.core.deleteNamespacedPod({ name: pod!.metadata!.name!, namespace: cluster.namespace, gracePeriodSeconds: 0 });
  return pod!.metadata!.name!;
}

// The first attempt prints a line, then waits long enough to be deleted; every attempt prints the same.
const SCRIPT = 'echo "begin"; echo "warming up" >&2; sleep 25; echo "end"';

describe("retries on a real cluster", () => {
  it("retries a run whose pod is deleted mid-run once, as a new Job; the run completes, its log shows both attempts in order without duplicates", async () => {
    const created = await startRun({ command: ["sh", "-c", SCRIPT], retries: 1 });
    expect(created.run_config.retries).toBe(1);
    const stream = sseClient(`${svc.url}/v1/runs/${created.run_id}/logs/stream`, alice.key);
    const lost = await deletePodAfter(created.run_id, "begin");

    const run = await finished(created.run_id);
    expect(run, JSON.stringify(run)).toMatchObject({ status: "completed", exit_code: 0, error: null });
    expect(run.attempts.map((a) => [a.attempt, a.reason])).toEqual([
      [1, expect.stringMatching(/^(PodLost|PodDisrupted)$/)],
      [2, "Completed"],
    ]);
    expect(run.attempts[0]!.job_name).toBe(`run-${run.run_id}`);
    expect(run.attempts[1]!.job_name).toBe(`run-${run.run_id}-attempt-2`);
    expect(run.attempts[0]!.error).toMatch(/deleted|stopped|lost|evicted/);
    expect(run.attempts[0]!.ended_at).not.toBeNull();
    expect(run.attempts[1]!.started_at).not.toBeNull();
    // Each attempt is a Job of its own, owned by the Run like any run's.
    const jobs = await cluster.batch.listNamespacedJob({ namespace: cluster.namespace, labelSelector: `codeplane.dev/run=${run.run_id}` });
    expect(jobs.items.map((j) => j.metadata!.name).sort()).toEqual([`run-${run.run_id}`, `run-${run.run_id}-attempt-2`].sort());
    for (const j of jobs.items) expect(j.metadata!.ownerReferences?.[0]).toMatchObject({ kind: "Run", name: `run-${run.run_id}`, controller: true });

    // The stored log: attempt 1's lines, the marker, attempt 2's, each seq once and increasing.
    await logsComplete(run.run_id);
    const lines = await storedLines(run.run_id);
    const seqs = lines.map((l) => l.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    const text = lines.map((l) => `${l.stream}:${l.line}`);
    const marker = text.findIndex((t) => t.startsWith("stderr:[codeplane] attempt 2 of 2 started"));
    expect(marker, text.join("\n")).toBeGreaterThan(0);
    expect(text.slice(0, marker)).toEqual(["stdout:begin", "stderr:warming up"]);
    expect(text.slice(marker + 1)).toEqual(["stdout:begin", "stderr:warming up", "stdout:end"]);
    // The marker opens attempt 2's range of the log; attempt 1's lines are below it.
    expect(lines[marker]!.seq).toBe(run.attempts[1]!.first_seq);
    expect(lines[marker - 1]!.seq).toBeLessThan(run.attempts[1]!.first_seq);
    expect(run.attempts[0]!.first_seq).toBe(1);
    const stdout = await (await alice.api(`/v1/runs/${run.run_id}/logs/stdout`)).json();
    expect(stdout.content).toBe("begin\nbegin\nend\n");

    // A client that followed the run from the start saw the same sequence, then the end.
    await Promise.race([stream.ended, new Promise((_, reject) => setTimeout(() => reject(new Error(JSON.stringify(stream.events))), 60_000))]);
    const live = stream.lines.map((l) => `${l.type}:${l.data.line}`);
    expect(live).toEqual(text);
    expect(stream.lines.map((l) => l.data.seq)).toEqual(seqs);
    expect(stream.events.at(-1)).toMatchObject({ type: "end", data: { status: "completed", exit_code: 0 } });

    // One Event on the Run for the retry, naming the lost pod's attempt.
    const events = await cluster.kc.makeApiClient(k8s.EventsV1Api).listNamespacedEvent({ namespace: cluster.namespace });
    const retrying = events.items.filter((ev) => ev.regarding?.name === `run-${run.run_id}` && ev.reason === "Retrying");
    expect(retrying.length, JSON.stringify(events.items.map((ev) => [ev.reason, ev.note]))).toBe(1);
    expect(retrying[0]!.type).toBe("Warning");
    expect(retrying[0]!.note).toMatch(/^attempt 2 of 2 started: attempt 1 failed \((PodLost|PodDisrupted)\)/);
    expect(lost).toMatch(new RegExp(`^run-${run.run_id}-`));
  });

  it("never retries a command's own failure", async () => {
    const created = await startRun({ command: ["sh", "-c", "echo once; exit 1"], retries: 2 });
    const run = await finished(created.run_id);
    expect(run).toMatchObject({ status: "failed", exit_code: 1, error: "command exited with code 1" });
    expect(run.attempts.map((a) => [a.attempt, a.reason])).toEqual([[1, "NonZeroExit"]]);
    await logsComplete(run.run_id);
    expect((await storedLines(run.run_id)).map((l) => l.line)).toEqual(["once"]);
    const jobs = await cluster.batch.listNamespacedJob({ namespace: cluster.namespace, labelSelector: `codeplane.dev/run=${run.run_id}` });
    expect(jobs.items.map((j) => j.metadata!.name)).toEqual([`run-${run.run_id}`]);
  });

  it("fails a run without retries whose pod is deleted, with a clear reason and one attempt", async () => {
    const created = await startRun({ command: ["sh", "-c", SCRIPT], retries: 0 });
    await deletePodAfter(created.run_id, "begin");
    const run = await finished(created.run_id);
    expect(run.status).toBe("failed");
    expect(run.error).toMatch(/pod was deleted before it finished|pod was stopped|evicted|lost/);
    expect(run.attempts.map((a) => [a.attempt, a.reason])).toEqual([[1, expect.stringMatching(/^(PodLost|PodDisrupted)$/)]]);
    await logsComplete(run.run_id);
    expect((await storedLines(run.run_id)).map((l) => l.line)).toEqual(["begin", "warming up"]);
  });

  // Last: it stops the service the others use.
  it("starts the next attempt once when the controller restarts between the loss of one and the start of the next", async () => {
    const created = await startRun({ command: ["sh", "-c", SCRIPT], retries: 1 });
    await until(`run ${created.run_id} to print begin`, 180_000, async () => (await storedLines(created.run_id)).some((l) => l.line === "begin") || undefined);
    // The pod is lost while no controller runs; the next one finds the Job failed and must retry it once, not twice.
    await svc.stop();
    const pods = await cluster.core.listNamespacedPod({ namespace: cluster.namespace, labelSelector: `codeplane.dev/run=${created.run_id}` });
    const pod = pods.items.find((p) => p.status?.phase === "Running");
    expect(pod, "a running pod").toBeDefined();
    await cluster.core.deleteNamespacedPod({ name: pod!.metadata!.name!, namespace: cluster.namespace, gracePeriodSeconds: 0 });
    const next = await startTestService({
      KUBECONFIG: cluster.kubeconfig,
      CODEPLANE_NAMESPACE: cluster.namespace,
      CODEPLANE_IMAGE_PULL_POLICY: "Never",
      ...gitListenerEnv(),
      DATABASE_URL: svc.databaseUrl,
      CODEPLANE_ENCRYPTION_KEY: svc.encryptionKey,
    });
    try {
      const get = async (): Promise<ApiRun> =>
        (await fetch(`${next.url}/v1/runs/${created.run_id}`, { headers: { authorization: `Bearer ${alice.key}` } })).json();
      const run = await until(`run ${created.run_id} to finish`, 300_000, async () => {
        const r = await get();
        return ["completed", "failed", "cancelled"].includes(r.status) ? r : undefined;
      });
      expect(run, JSON.stringify(run)).toMatchObject({ status: "completed", exit_code: 0, error: null });
      expect(run.attempts.map((a) => [a.attempt, a.reason])).toEqual([
        [1, expect.stringMatching(/^(PodLost|PodDisrupted)$/)],
        [2, "Completed"],
      ]);
      const jobs = await cluster.batch.listNamespacedJob({ namespace: cluster.namespace, labelSelector: `codeplane.dev/run=${run.run_id}` });
      expect(jobs.items.map((j) => j.metadata!.name).sort()).toEqual([`run-${run.run_id}`, `run-${run.run_id}-attempt-2`].sort());
      const events = await cluster.kc.makeApiClient(k8s.EventsV1Api).listNamespacedEvent({ namespace: cluster.namespace });
      const retrying = events.items.filter((ev) => ev.regarding?.name === `run-${run.run_id}` && ev.reason === "Retrying");
      expect(retrying.length, JSON.stringify(events.items.map((ev) => [ev.reason, ev.note]))).toBe(1);
      // The second attempt's lines follow its marker, once.
      await until("the run's logs to be complete", 60_000, async () => {
        const row = await svc.db.selectFrom("runs").select("logs_complete").where("id", "=", run.run_id).executeTakeFirst();
        return row?.logs_complete || undefined;
      });
      const stdout = await (await fetch(`${next.url}/v1/runs/${run.run_id}/logs/stdout`, { headers: { authorization: `Bearer ${alice.key}` } })).json();
      expect(stdout.content).toBe("begin\nbegin\nend\n");
    } finally {
      await next.close();
    }
  });
});
