import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/cluster.ts";
import { startE2E, type E2E } from "../helpers/e2e.ts";
import type { Tenant } from "../helpers/service.ts";

// Results on a real cluster: a run's printed ::metric lines become series through the
// controller's log archiver; a rerun repeats the run on the same commit and says so;
// concurrent creations with one Idempotency-Key make one run.

let e: E2E;
let bob: Tenant;
let tip: string;

// Prints its metrics among ordinary output, as a training script would.
const TRAIN = `#!/bin/sh
loss=8
for step in 0 1 2 3; do
  echo "epoch $step"
  echo "::metric name=loss,step=$step::$loss"
  loss=$((loss / 2))
done
echo '::metric::{"metrics":{"accuracy":0.75,"f1":0.5},"step":3}'
echo "::metric name=bad::not-a-number"
echo "trained with \${LR:-default}"
`;

beforeAll(async () => {
  e = await startE2E("cp-e2e-results", {
    env: { CODEPLANE_LOG_LEVEL: "info" },
    prepare: async (f) => void (tip = await f.commit("main", { "train.sh": { exec: TRAIN } })),
  });
  bob = await e.svc.tenant();
});
afterAll(() => e?.close());

type RunBody = {
  run_id: string;
  status: string;
  commit_hash: string;
  rerun_of: string | null;
  final_metrics: Record<string, number>;
  exit_code: number | null;
};

async function finished(runId: string): Promise<RunBody> {
  return until(`run ${runId} to finish and its log to be archived`, 300_000, async () => {
    const run = (await (await e.alice.api(`/v1/runs/${runId}`)).json()) as RunBody;
    if (!["completed", "failed", "cancelled"].includes(run.status)) return undefined;
    const row = await e.svc.db.selectFrom("runs").select("logs_complete").where("id", "=", runId).executeTakeFirst();
    return row?.logs_complete ? ((await (await e.alice.api(`/v1/runs/${runId}`)).json()) as RunBody) : undefined;
  });
}

describe("run results on a real cluster", () => {
  let first: RunBody;

  it("records the metrics a run prints, with the final values on the run", { timeout: 360_000 }, async () => {
    const res = await e.alice.api(`/v1/repositories/${e.repoId}/main/runs`, { method: "POST", json: { command: ["sh", "train.sh"] } });
    expect(res.status, await res.clone().text()).toBe(201);
    first = await finished(((await res.json()) as RunBody).run_id);
    expect(first).toMatchObject({ status: "completed", exit_code: 0, commit_hash: tip, rerun_of: null });
    expect(first.final_metrics).toEqual({ loss: 1, accuracy: 0.75, f1: 0.5 });
    const metrics = await (await e.alice.api(`/v1/runs/${first.run_id}/metrics`)).json();
    expect(metrics.series.map((s: { name: string; points: { step: number; value: number }[] }) => [s.name, s.points.map((p) => [p.step, p.value])])).toEqual([
      ["accuracy", [[3, 0.75]]],
      ["f1", [[3, 0.5]]],
      [
        "loss",
        [
          [0, 8],
          [1, 4],
          [2, 2],
          [3, 1],
        ],
      ],
    ]);
    expect(metrics.dropped).toBe(0);
    // The lines stay in stdout: they are output the program printed.
    const stdout = await (await e.alice.api(`/v1/runs/${first.run_id}/logs/stdout`)).json();
    expect(stdout.content).toContain("::metric name=loss,step=0::8\n");
  });

  // Needs the codeplane image built from this tree (make images; make test does it): the pod's
  // runner comes from it. test/db/metrics-file.test.ts covers the same path without a cluster.
  it("records what a run appends to $CODEPLANE_METRICS_FILE", { timeout: 360_000 }, async () => {
    const script = [
      `echo '{"name":"loss","value":3,"step":0}' >> "$CODEPLANE_METRICS_FILE"`,
      "sleep 1",
      `echo '{"step":1,"metrics":{"loss":1.5,"accuracy":0.5}}' >> "$CODEPLANE_METRICS_FILE"`,
      "echo trained",
    ].join("; ");
    const res = await e.alice.api(`/v1/repositories/${e.repoId}/main/runs`, { method: "POST", json: { command: ["sh", "-c", script] } });
    expect(res.status, await res.clone().text()).toBe(201);
    const run = await finished(((await res.json()) as RunBody).run_id);
    expect(run).toMatchObject({ status: "completed", final_metrics: { loss: 1.5, accuracy: 0.5 } });
    const metrics = await (await e.alice.api(`/v1/runs/${run.run_id}/metrics`)).json();
    expect(metrics.series.map((s: { name: string; points: { step: number; value: number }[] }) => [s.name, s.points.map((p) => [p.step, p.value])])).toEqual([
      ["accuracy", [[1, 0.5]]],
      [
        "loss",
        [
          [0, 3],
          [1, 1.5],
        ],
      ],
    ]);
    expect((await (await e.alice.api(`/v1/runs/${run.run_id}/logs/stdout`)).json()).content).toBe("trained\n");
  });

  it("reruns it on the same commit, linked to the original, with the same output", { timeout: 360_000 }, async () => {
    const res = await e.alice.api(`/v1/runs/${first.run_id}/rerun`, { method: "POST", json: { timeout_seconds: 300 } });
    expect(res.status, await res.clone().text()).toBe(201);
    const created = (await res.json()) as RunBody;
    expect(created).toMatchObject({ rerun_of: first.run_id, commit_hash: tip });
    expect(created.run_id).not.toBe(first.run_id);
    const again = await finished(created.run_id);
    expect(again).toMatchObject({ status: "completed", final_metrics: first.final_metrics });
    const [a, b] = await Promise.all([first.run_id, again.run_id].map(async (id) => (await (await e.alice.api(`/v1/runs/${id}/logs/stdout`)).json()).content));
    expect(b).toBe(a);
    // Another account sees neither.
    expect((await bob.api(`/v1/runs/${first.run_id}/rerun`, { method: "POST", json: {} })).status).toBe(404);
  });

  it("makes one run of concurrent creations with one Idempotency-Key", { timeout: 120_000 }, async () => {
    const key = `train-${Date.now()}`;
    const post = (json: unknown) => e.alice.api(`/v1/repositories/${e.repoId}/main/runs`, { method: "POST", json, headers: { "Idempotency-Key": key } });
    const answers = await Promise.all(Array.from({ length: 5 }, () => post({ command: ["sh", "train.sh", key] })));
    expect(answers.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    const ids = await Promise.all(answers.map(async (r) => ((await r.json()) as RunBody).run_id));
    expect(new Set(ids).size).toBe(1);
    expect(answers.filter((r) => r.headers.get("idempotent-replayed") === "true")).toHaveLength(4);
    // One row and one Run resource with this command: no duplicate was started.
    const rows = await e.svc.db.selectFrom("runs").select(["id", "run_config"]).where("account_id", "=", e.alice.accountId).execute();
    expect(rows.filter((r) => r.run_config.command.includes(key)).map((r) => r.id)).toEqual([ids[0]]);
    const resources = await e.cluster.custom.listNamespacedCustomObject({
      group: "codeplane.dev",
      version: "v1alpha1",
      namespace: e.cluster.namespace,
      plural: "runs",
    });
    const made = (resources as { items: { spec: { runId: string; command: string[] } }[] }).items.filter((r) => r.spec.command.includes(key));
    expect(made.map((r) => r.spec.runId)).toEqual([ids[0]]);
    // The same key with another body is refused.
    const other = await post({ command: ["sh", "-c", "true"] });
    expect(other.status).toBe(409);
    expect((await other.json()).detail).toMatch(/another request/);
  });
});
