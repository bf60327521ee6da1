import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until, type TestCluster } from "../helpers/cluster.ts";
import { startE2E, type E2E } from "../helpers/e2e.ts";
import type { Tenant, TestService } from "../helpers/service.ts";
import { sseClient } from "../helpers/sse-client.ts";

// Analyses end to end: the API creates an Analysis, the controller runs the
// analyzer from codeplane's image on a real kubelet against a clone from the
// cluster's git daemon, the result comes back through the pod log; then the
// primary experiment runs with one parameter overridden and the variable the
// analysis said was missing.

let cluster: TestCluster;
let svc: TestService;
let alice: Tenant;
let bob: Tenant;
let repoId: string;
let tip: string;
let e: E2E;

const TRAIN = `"""Train a tiny model.

Fits a line and prints what it was given.
"""
import argparse
import json
import os
import sys


def main():
    parser = argparse.ArgumentParser(description="Fits a line to the data.")
    parser.add_argument("--epochs", type=int, default=3, help="passes over the data")
    parser.add_argument("--lr", type=float, default=0.01, help="learning rate")
    parser.add_argument("--optimizer", choices=["adam", "sgd"], default="adam")
    args = parser.parse_args()
    token = os.environ["API_TOKEN"]
    print(json.dumps({"argv": sys.argv[1:], "token": token, "epochs": args.epochs}))


if __name__ == "__main__":
    main()
`;

// Things that must not trip the analyzer: a syntax error, a symlink loop, a
// file too large to read and a binary file.
const BROKEN = "def broken(:\n    return (\n";

beforeAll(async () => {
  e = await startE2E("cp-e2e-analyses", {
    env: { CODEPLANE_LOG_LEVEL: "info" },
    prepare: async (f) =>
      void (tip = await f.commit("main", {
        "README.md": "# Tiny trainer\n\nFits a line to a handful of points.\n\nRun `python3 train.py --epochs 5`.\n",
        "train.py": TRAIN,
        "helpers/broken.py": BROKEN,
        "loop-a": { symlink: "loop-b" },
        "loop-b": { symlink: "loop-a" },
        "data/huge.py": "x = 1\n".repeat(600_000),
        "data/blob.bin": Buffer.from([0, 1, 2, 3, 0, 255, 254, 0]),
      })),
  });
  ({ cluster, svc, alice, repoId } = e);
  bob = await svc.tenant();
});
afterAll(() => e?.close());

describe("analyses on a real cluster", () => {
  let analysisId: string;

  it("analyses a commit once, streams its progress to end, and stores the result", async () => {
    const res = await alice.api(`/v1/repositories/${repoId}/analysis/main`, { method: "POST", json: { language: "en" } });
    expect(res.status, await res.clone().text()).toBe(201);
    const created = await res.json();
    analysisId = created.id;
    expect(created).toMatchObject({
      status: "pending",
      commit_hash: tip,
      branch: "main",
      workflow_id: `${cluster.namespace}/analysis-${created.id}`,
      env_vars: null,
      experiments: [],
    });

    const again = await alice.api(`/v1/repositories/${repoId}/analysis/${tip.slice(0, 10)}`, { method: "POST", json: {} });
    expect(again.status).toBe(200);
    expect((await again.json()).id).toBe(analysisId);
    expect((await bob.api(`/v1/repositories/${repoId}/analysis/main`)).status).toBe(404);

    const stream = sseClient(`${svc.url}/v1/repositories/${repoId}/analysis/main/logs/stream`, alice.key);
    await Promise.race([
      stream.ended,
      new Promise((_, reject) => setTimeout(() => reject(new Error(`no end; events: ${JSON.stringify(stream.events)}`)), 180_000)),
    ]);
    const end = stream.events.at(-1)!;
    expect(end).toMatchObject({ type: "end", data: { status: "completed", exit_code: 0 } });
    expect(stream.lines.map((l) => l.data.line)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^listed \d+ files/), expect.stringMatching(/^found \d+ experiment/)]),
    );
    // The result travels in its own frames, never as a log line.
    expect(stream.lines.some((l) => l.data.line?.includes('"repo_summary"'))).toBe(false);

    const analysis = await (await alice.api(`/v1/repositories/${repoId}/analysis/${tip}`)).json();
    expect(analysis).toMatchObject({ id: analysisId, status: "completed", error: null, primary_ids: expect.arrayContaining(["python:train.py"]) });
    expect(analysis.primary_ids[0]).toBe("python:train.py");
    expect(analysis.started_at).not.toBeNull();
    expect(analysis.completed_at).not.toBeNull();
    const train = analysis.experiments.find((x: { id: string }) => x.id === "python:train.py");
    expect(train).toMatchObject({ entry_point: "python3 train.py", language: "python", kind: "python-script" });
    expect(train.parameters.map((p: { name: string }) => p.name)).toEqual(["epochs", "lr", "optimizer"]);
    expect(train.parameters[0]).toMatchObject({ name: "epochs", value: 3, category: "integer", cli_option: "--epochs", description: "passes over the data" });
    expect(analysis.env_vars).toEqual({ valid: false, required_env_vars: ["API_TOKEN"], missing_env_vars: ["API_TOKEN"] });
    expect(analysis.repo_summary.title).toBe("Tiny trainer");
    // The base fixture has a symlink of its own besides the two added here.
    expect(analysis.repo_summary.skipped.symlinks).toBeGreaterThanOrEqual(2);
    expect(analysis.repo_summary.skipped.too_large).toBe(1);

    // kubectl's view.
    const cr = (await cluster.custom.getNamespacedCustomObject({
      group: "codeplane.dev",
      version: "v1alpha1",
      namespace: cluster.namespace,
      plural: "analyses",
      name: `analysis-${analysisId}`,
    })) as {
      status: { phase: string; experiments: number; conditions: { type: string; status: string }[] };
    };
    expect(cr.status.phase).toBe("completed");
    expect(cr.status.experiments).toBe(analysis.experiments.length);
    expect(cr.status.conditions.find((c) => c.type === "Finished")).toMatchObject({ status: "True" });
    const job = await cluster.batch.readNamespacedJob({ name: `analysis-${analysisId}`, namespace: cluster.namespace });
    expect(job.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "Analysis", controller: true });
    expect(job.spec?.template.spec?.automountServiceAccountToken).toBe(false);
  }, 240_000);

  it("refuses to run the primary experiment until its variable is set, then runs it with exactly the given arguments", async () => {
    const refused = await alice.api(`/v1/repositories/${repoId}/main/runs`, {
      method: "POST",
      json: { analyzed_experiment: "python:train.py", parameters: { epochs: 7 } },
    });
    expect(refused.status).toBe(422);
    expect((await refused.json()).detail[0].msg).toMatch(/missing environment variables: API_TOKEN/);

    const set = await alice.api("/v1/environment-variables", {
      method: "POST",
      json: { name: "API_TOKEN", value: "tok-e2e", secret: true, repository_id: repoId },
    });
    expect(set.status).toBe(201);
    const valid = await (await alice.api(`/v1/repositories/${repoId}/analysis/main`)).json();
    expect(valid.env_vars).toEqual({ valid: true, required_env_vars: ["API_TOKEN"], missing_env_vars: [] });

    const res = await alice.api(`/v1/repositories/${repoId}/main/runs`, {
      method: "POST",
      json: { analyzed_experiment: "python:train.py", parameters: { epochs: "7" } },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    const run = await res.json();
    expect(run).toMatchObject({
      experiment_id: "python:train.py",
      run_config: { command: ["python3", "train.py", "--epochs", "7"], parameters: { epochs: 7, lr: 0.01, optimizer: "adam" } },
    });
    const done = await until("the run to finish", 180_000, async () => {
      const r = await (await alice.api(`/v1/runs/${run.run_id}`)).json();
      return ["completed", "failed", "cancelled"].includes(r.status) ? r : undefined;
    });
    expect(done).toMatchObject({ status: "completed", exit_code: 0 });
    await until(
      "logs to be archived",
      30_000,
      async () => (await svc.db.selectFrom("runs").select("logs_complete").where("id", "=", run.run_id).executeTakeFirst())?.logs_complete,
    );
    const stdout = await (await alice.api(`/v1/runs/${run.run_id}/logs/stdout`)).json();
    expect(JSON.parse(stdout.content)).toEqual({ argv: ["--epochs", "7"], token: "tok-e2e", epochs: 7 });
  }, 240_000);

  it("cancels, deletes, and analyses the same commit again after a delete", async () => {
    const del = await alice.api(`/v1/repositories/${repoId}/analysis/main`, { method: "DELETE" });
    expect(del.status).toBe(204);
    expect((await alice.api(`/v1/repositories/${repoId}/analysis/main`)).status).toBe(404);
    await until("the Analysis resource to be gone", 60_000, async () => {
      const list = (await cluster.custom.listNamespacedCustomObject({
        group: "codeplane.dev",
        version: "v1alpha1",
        namespace: cluster.namespace,
        plural: "analyses",
      })) as { items: { metadata: { name: string } }[] };
      return !list.items.some((i) => i.metadata.name === `analysis-${analysisId}`);
    });

    const res = await alice.api(`/v1/repositories/${repoId}/analysis/main`, { method: "POST", json: { language: "ja" } });
    expect(res.status).toBe(201);
    const second = await res.json();
    expect(second.id).not.toBe(analysisId);
    const cancel = await alice.api(`/v1/repositories/${repoId}/analysis/main/cancel`, { method: "POST" });
    expect(cancel.status).toBe(202);
    const final = await until("the analysis to be cancelled", 60_000, async () => {
      const a = await (await alice.api(`/v1/repositories/${repoId}/analysis/main`)).json();
      return ["completed", "failed", "cancelled"].includes(a.status) ? a : undefined;
    });
    // A fast analyzer may have finished before the cancel reached it; either way it ended cleanly.
    expect(["cancelled", "completed"]).toContain(final.status);
  }, 180_000);
});
