// The results API over real HTTP and Postgres, without a cluster: metrics read back as stored,
// the comparison list, the Idempotency-Key header's validation and its release on failure,
// and reruns' validation. (Runs made and rerun on a cluster: test/e2e/results.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUN_TABLE } from "../../src/db/workload-tables.ts";
import { runMetricsArchiveHook } from "../../src/domain/runs/run-metrics.ts";
import { logArchiveRows } from "../../src/domain/workloads/log-archive-rows.ts";
import { insertRunRow } from "../helpers/seed.ts";
import type { Tenant } from "../helpers/service.ts";
import { twoTenantsWithRepository, type TwoTenants } from "../helpers/two-tenants.ts";

let setup: TwoTenants;
let alice: Tenant;
let bob: Tenant;
let repoId: string;

beforeAll(async () => {
  setup = await twoTenantsWithRepository();
  ({ alice, bob, repoId } = setup);
});
afterAll(() => setup?.close());

const run = (experiment: string | null, parameters: Record<string, unknown>, command = ["python", "train.py"]) =>
  insertRunRow(setup.svc.db, {
    accountId: alice.accountId,
    repositoryId: repoId,
    status: "completed",
    set: { commit_hash: setup.fixture.commits.main, experiment_id: experiment, run_config: JSON.stringify({ command, parameters, timeout_seconds: 60 }) },
  });

async function printed(runId: string, lines: string[]) {
  const rows = logArchiveRows(setup.svc.db, RUN_TABLE, runMetricsArchiveHook({ maxSeries: 10, maxPointsPerSeries: 100, maxNameLength: 64 }));
  const batch = lines.map((line, i) => ({ seq: i + 1, stream: "stdout" as const, ts: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), line }));
  await rows.write(runId, batch, { stdout: 0, stderr: 0 }, { stdout: false, stderr: false }, { lines: batch, metrics: [] });
}

describe("metrics and comparison", () => {
  it("serves a run's series and final values, and 404 to another account", async () => {
    const id = await run(null, {});
    await printed(id, ["::metric name=loss::1", "hello", "::metric name=loss::0.5"]);
    const res = await alice.api(`/v1/runs/${id}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      series: [
        {
          name: "loss",
          points: [
            { step: 0, value: 1, ts: "2026-01-01T00:00:00.000Z" },
            { step: 1, value: 0.5, ts: "2026-01-01T00:00:02.000Z" },
          ],
        },
      ],
      final: { loss: 0.5 },
      dropped: 0,
    });
    expect((await bob.api(`/v1/runs/${id}/metrics`)).status).toBe(404);
    const shown = await (await alice.api(`/v1/runs/${id}`)).json();
    expect(shown).toMatchObject({ final_metrics: { loss: 0.5 }, parameters: {}, rerun_of: null });
  });

  it("lists one experiment's runs with parameters and final metrics", async () => {
    const a = await run("train", { lr: 0.1 });
    const b = await run("train", { lr: 0.01 });
    await run("evaluate", { lr: 0.1 });
    await printed(a, ['::metric::{"metrics":{"acc":0.7}}']);
    await printed(b, ['::metric::{"metrics":{"acc":0.9}}']);
    const res = await alice.api(`/v1/runs?experiment_id=train&repository_id=${repoId}`);
    expect(res.status).toBe(200);
    const items = (await res.json()).items as { run_id: string; parameters: unknown; final_metrics: unknown }[];
    expect(items.map((r) => [r.run_id, r.parameters, r.final_metrics]).sort()).toEqual(
      [
        [a, { lr: 0.1 }, { acc: 0.7 }],
        [b, { lr: 0.01 }, { acc: 0.9 }],
      ].sort(),
    );
    expect((await (await bob.api(`/v1/runs?experiment_id=train`)).json()).items).toEqual([]);
  });
});

describe("Idempotency-Key and rerun without a cluster", () => {
  it.each([["x".repeat(256)], ["caf\u00e9"], ["tab\tinside"]])("refuses a malformed key with 422: %j", async (key) => {
    const res = await alice.api(`/v1/repositories/${repoId}/main/runs`, { method: "POST", json: { command: ["true"] }, headers: { "Idempotency-Key": key } });
    expect(res.status).toBe(422);
    expect((await res.json()).detail).toEqual([expect.objectContaining({ loc: ["header", "Idempotency-Key"] })]);
  });

  it("gives the key back when the creation fails (503: no cluster), so nothing is held", async () => {
    const res = await alice.api(`/v1/repositories/${repoId}/main/runs`, {
      method: "POST",
      json: { command: ["true"] },
      headers: { "Idempotency-Key": "retry-me" },
    });
    expect(res.status).toBe(503);
    const held = await setup.svc.db.selectFrom("run_idempotency_keys").selectAll().where("key", "=", "retry-me").execute();
    expect(held).toEqual([]);
  });

  it("reruns: 404 for an unknown or another account's run, 422 for parameters on a command's run, 503 without a cluster", async () => {
    const command = await run(null, {}, ["sh", "-c", "true"]);
    expect((await alice.api(`/v1/runs/${crypto.randomUUID()}/rerun`, { method: "POST", json: {} })).status).toBe(404);
    expect((await bob.api(`/v1/runs/${command}/rerun`, { method: "POST", json: {} })).status).toBe(404);
    const withParameters = await alice.api(`/v1/runs/${command}/rerun`, { method: "POST", json: { parameters: { a: 1 } } });
    expect(withParameters.status).toBe(422);
    expect((await withParameters.json()).detail).toEqual([expect.objectContaining({ loc: ["body", "parameters"] })]);
    expect((await alice.api(`/v1/runs/${command}/rerun`, { method: "POST", json: { extra: 1 } })).status).toBe(422);
    expect((await alice.api(`/v1/runs/${command}/rerun`, { method: "POST", json: { compute_type: "huge" } })).status).toBe(422);
    const res = await alice.api(`/v1/runs/${command}/rerun`, { method: "POST", json: {} });
    expect(res.status).toBe(503);
  });
});
