// A run's metrics, stored where its log is archived (the archiver's batch hook, in the
// transaction that stores the lines): printed `::metric` lines and forwarded metrics-file
// records become series; a log read again is not counted again; the bounds refuse points
// before anything is stored, and count them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LogLine, MetricFrame } from "@codeplane/frames";
import { RUN_TABLE } from "../../src/db/workload-tables.ts";
import { readRunMetrics, runMetricsArchiveHook, type MetricLimits } from "../../src/domain/runs/run-metrics.ts";
import { findRun, listRuns, toRun } from "../../src/domain/runs/run-rows.ts";
import { logArchiveRows } from "../../src/domain/workloads/log-archive-rows.ts";
import { insertRunRow, seedAccountWithRepository } from "../helpers/seed.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/service.ts";

let database: TestDatabase;
let accountId: string;
let repositoryId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ accountId, repositoryId } = await seedAccountWithRepository(database.db));
});
afterAll(async () => {
  await database?.drop();
});

const LIMITS: MetricLimits = { maxSeries: 100, maxPointsPerSeries: 10_000, maxNameLength: 128 };
const ts = (seq: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, seq)).toISOString();
const out = (seq: number, line: string, stream: "stdout" | "stderr" = "stdout"): LogLine => ({ seq, stream, ts: ts(seq), line });
const file = (seq: number, record: unknown): MetricFrame => ({ seq, ts: ts(seq), record: typeof record === "string" ? record : JSON.stringify(record) });

async function archive(runId: string, lines: LogLine[], metrics: MetricFrame[] = [], limits = LIMITS) {
  const rows = logArchiveRows(database.db, RUN_TABLE, runMetricsArchiveHook(limits));
  const bytes = { stdout: 0, stderr: 0 };
  await rows.write(runId, lines, bytes, { stdout: false, stderr: false }, { lines, metrics });
}

const newRun = (experiment?: string, parameters: Record<string, unknown> = {}) =>
  insertRunRow(database.db, {
    accountId,
    repositoryId,
    status: "running",
    set: {
      experiment_id: experiment ?? null,
      run_config: JSON.stringify({ command: ["python", "train.py"], parameters, timeout_seconds: 60 }),
    },
  });

describe("run metrics", () => {
  it("records printed lines and file records as series, with steps, times and final values", async () => {
    const id = await newRun();
    await archive(
      id,
      [
        out(1, "epoch 1"),
        out(2, "::metric name=loss::0.9"),
        out(3, "::metric name=loss::0.5"),
        out(4, "::metric name=loss,step=10::0.25"),
        out(5, "::metric name=loss::oops"),
        out(6, "::metric name=acc::0.7", "stderr"),
      ],
      [file(7, { name: "acc", value: 0.8, step: 1 }), file(8, { step: 2, metrics: { acc: 0.9, lr: 0.01 } }), file(9, "not json")],
    );
    const metrics = await readRunMetrics(database.db, accountId, id);
    expect(metrics).toEqual({
      series: [
        {
          name: "acc",
          points: [
            { step: 1, value: 0.8, ts: ts(7) },
            { step: 2, value: 0.9, ts: ts(8) },
          ],
        },
        {
          name: "loss",
          points: [
            { step: 0, value: 0.9, ts: ts(2) },
            { step: 1, value: 0.5, ts: ts(3) },
            { step: 10, value: 0.25, ts: ts(4) },
          ],
        },
        { name: "lr", points: [{ step: 2, value: 0.01, ts: ts(8) }] },
      ],
      final: { acc: 0.9, loss: 0.25, lr: 0.01 },
      dropped: 0,
    });
    // The run shows its final values.
    expect(toRun((await findRun(database.db, accountId, id))!).final_metrics).toEqual({ acc: 0.9, loss: 0.25, lr: 0.01 });
  });

  it("counts nothing twice when the log is read again (a controller restart, a reconnect)", async () => {
    const id = await newRun();
    const first = [out(1, "::metric name=loss::3"), out(2, "::metric name=loss::2")];
    await archive(id, first, [file(3, { name: "acc", value: 0.1 })]);
    // The follow after a restart repeats what was stored, then goes on.
    await archive(id, [...first, out(4, "::metric name=loss::1")], [file(3, { name: "acc", value: 0.1 }), file(5, { name: "acc", value: 0.2 })]);
    const metrics = await readRunMetrics(database.db, accountId, id);
    expect(metrics.series.map((s) => [s.name, s.points.map((p) => [p.step, p.value])])).toEqual([
      [
        "acc",
        [
          [0, 0.1],
          [1, 0.2],
        ],
      ],
      [
        "loss",
        [
          [0, 3],
          [1, 2],
          [2, 1],
        ],
      ],
    ]);
    const count = await database.db
      .selectFrom("run_metric_points")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .where("run_id", "=", id)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(5);
  });

  it("takes the final value at the highest step, the later one at equal steps", async () => {
    const id = await newRun();
    await archive(id, [out(1, "::metric name=m,step=5::1"), out(2, "::metric name=m,step=3::2"), out(3, "::metric name=m,step=5::3")]);
    expect((await readRunMetrics(database.db, accountId, id)).final).toEqual({ m: 3 });
  });

  it("refuses points beyond the bounds before storing them, and counts them", async () => {
    const limits: MetricLimits = { maxSeries: 3, maxPointsPerSeries: 4, maxNameLength: 10 };
    const id = await newRun();
    const lines: LogLine[] = [];
    let seq = 0;
    // 5 names x 6 points, one name too long: 3 series of 4 points are kept.
    for (let step = 0; step < 6; step++) for (const name of ["a", "b", "c", "d", "e"]) lines.push(out(++seq, `::metric name=${name},step=${step}::${step}`));
    lines.push(out(seq + 1, "::metric name=abcdefghijk::1"));
    // In two batches, so the bounds hold across them.
    await archive(id, lines.slice(0, 13), [], limits);
    await archive(id, lines.slice(13), [], limits);
    const metrics = await readRunMetrics(database.db, accountId, id);
    expect(metrics.series.map((s) => [s.name, s.points.length])).toEqual([
      ["a", 4],
      ["b", 4],
      ["c", 4],
    ]);
    expect(metrics.final).toEqual({ a: 3, b: 3, c: 3 });
    expect(metrics.dropped).toBe(31 - 12);
    const count = await database.db
      .selectFrom("run_metric_points")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .where("run_id", "=", id)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(12);
  });

  it("takes metrics from lines past the log cap too (the batch, not only the kept lines)", async () => {
    const id = await newRun();
    const lines = [out(1, "::metric name=loss::1"), out(2, "::metric name=loss::0.5")];
    const rows = logArchiveRows(database.db, RUN_TABLE, runMetricsArchiveHook(LIMITS));
    await rows.write(id, [lines[0]!], { stdout: 22, stderr: 0 }, { stdout: true, stderr: false }, { lines, metrics: [] });
    expect((await readRunMetrics(database.db, accountId, id)).final).toEqual({ loss: 0.5 });
  });

  it("lists one experiment's runs with their parameters and final metrics", async () => {
    const experiment = `exp-${Math.random()}`;
    const a = await newRun(experiment, { lr: 0.1 });
    const b = await newRun(experiment, { lr: 0.01 });
    await newRun("other", { lr: 1 });
    await archive(a, [out(1, "::metric name=acc::0.7")]);
    await archive(b, [out(1, "::metric name=acc::0.9")]);
    const rows = await listRuns(database.db, accountId, { experimentId: experiment, repositoryId }, { limit: 20 });
    const listed = rows.map((r) => toRun(r)).map((r) => [r.run_id, r.parameters, r.final_metrics]);
    expect(listed).toHaveLength(2);
    expect(listed).toEqual(
      expect.arrayContaining([
        [b, { lr: 0.01 }, { acc: 0.9 }],
        [a, { lr: 0.1 }, { acc: 0.7 }],
      ]),
    );
  });

  it("leaves the run alone for ordinary output (no metric query per batch)", async () => {
    const id = await newRun();
    await archive(id, [out(1, "epoch 1"), out(2, "metric name=loss::1"), out(3, "::metric name=x::1", "stderr")]);
    const row = await database.db.selectFrom("runs").select(["metrics_seq", "final_metrics", "metrics_dropped"]).where("id", "=", id).executeTakeFirstOrThrow();
    expect([Number(row.metrics_seq), row.final_metrics, row.metrics_dropped]).toEqual([0, {}, 0]);
  });

  it("is another account's run: not found", async () => {
    const id = await newRun();
    const other = await seedAccountWithRepository(database.db);
    await expect(readRunMetrics(database.db, other.accountId, id)).rejects.toMatchObject({ kind: "not_found" });
  });
});
