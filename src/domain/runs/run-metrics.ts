import { sql } from "kysely";
import type { Db } from "../../db/database.ts";
import { notFound } from "../errors.ts";
import { METRIC_MARKER, parseMetricLine, parseMetricRecord, type MetricRecord } from "./metric-form.ts";
import { findRun } from "./run-rows.ts";
import type { ArchiveBatchHook } from "../workloads/log-archive-rows.ts";

// A run's metric series in Postgres (migration 0017): the points, one row per
// series with its count and final value, and the run's final_metrics. Written
// by the log archiver in the transaction that stores the lines they came from,
// so a point is counted once however often the log is read again.

/** The bounds on what one run may store (CODEPLANE_METRICS_*), checked before anything is written. */
export interface MetricLimits {
  maxSeries: number;
  maxPointsPerSeries: number;
  maxNameLength: number;
}

/** What the log carried that may hold metrics: stdout lines, and the runner's frames of $CODEPLANE_METRICS_FILE records. */
export interface MetricSource {
  seq: number;
  ts: string;
  kind: "stdout" | "file";
  text: string;
}

export interface MetricPoint {
  step: number;
  value: number;
  ts: string;
}

export interface RunMetrics {
  series: { name: string; points: MetricPoint[] }[];
  final: Record<string, number>;
  dropped: number;
}

/** The sources' records, in seq order, each with the place it came from (`<seq>` or `<seq>.<n>`). */
export function metricRecordsOf(sources: readonly MetricSource[]): { source: string; seq: number; ts: string; record: MetricRecord }[] {
  const out: { source: string; seq: number; ts: string; record: MetricRecord }[] = [];
  for (const s of [...sources].sort((a, b) => a.seq - b.seq)) {
    const parsed = s.kind === "stdout" ? parseMetricLine(s.text) : parseMetricRecord(s.text);
    if (!parsed || "error" in parsed) continue;
    parsed.records.forEach((record, i) => out.push({ source: parsed.records.length === 1 ? String(s.seq) : `${s.seq}.${i}`, seq: s.seq, ts: s.ts, record }));
  }
  return out;
}

/**
 * Stores the metrics of a batch of the run's log (call inside the transaction that stores its lines).
 * Frames at or below the run's metrics_seq were taken before and are skipped; beyond the bounds,
 * points are refused and counted in metrics_dropped. Returns how many were stored and refused.
 */
export async function recordRunMetrics(
  tx: Db,
  runId: string,
  sources: readonly MetricSource[],
  limits: MetricLimits,
): Promise<{ stored: number; dropped: number }> {
  if (sources.length === 0) return { stored: 0, dropped: 0 };
  // The row lock orders concurrent writers of one run (there is one archiver per run, but a new leader may overlap an old one).
  const run = await tx.selectFrom("runs").select(["metrics_seq"]).where("id", "=", runId).forUpdate().executeTakeFirst();
  if (!run) return { stored: 0, dropped: 0 };
  const after = Number(run.metrics_seq);
  const fresh = sources.filter((s) => s.seq > after);
  if (fresh.length === 0) return { stored: 0, dropped: 0 };
  const maxSeq = Math.max(...fresh.map((s) => s.seq));
  const records = metricRecordsOf(fresh);
  const series = new Map<string, { points: number; lastStep: number; lastValue: number; changed: boolean }>();
  if (records.length > 0) {
    const rows = await tx.selectFrom("run_metric_series").select(["name", "points", "last_step", "last_value"]).where("run_id", "=", runId).execute();
    for (const r of rows) series.set(r.name, { points: r.points, lastStep: Number(r.last_step), lastValue: r.last_value, changed: false });
  }
  const points: { run_id: string; source: string; name: string; step: number; value: number; ts: Date }[] = [];
  let dropped = 0;
  for (const { source, ts, record } of records) {
    let s = series.get(record.name);
    if (record.name.length > limits.maxNameLength || (!s && series.size >= limits.maxSeries) || (s && s.points >= limits.maxPointsPerSeries)) {
      dropped += 1;
      continue;
    }
    if (!s) {
      s = { points: 0, lastStep: -1, lastValue: 0, changed: true };
      series.set(record.name, s);
    }
    const step = record.step ?? s.points;
    points.push({ run_id: runId, source, name: record.name, step, value: record.value, ts: new Date(ts) });
    s.points += 1;
    s.changed = true;
    // The final value is the one at the highest step; at equal steps, the later one.
    if (step >= s.lastStep) {
      s.lastStep = step;
      s.lastValue = record.value;
    }
  }
  if (points.length > 0) {
    for (let i = 0; i < points.length; i += 1000) {
      await tx
        .insertInto("run_metric_points")
        .values(points.slice(i, i + 1000))
        .onConflict((oc) => oc.columns(["run_id", "source"]).doNothing())
        .execute();
    }
    const changed = [...series].filter(([, s]) => s.changed);
    await tx
      .insertInto("run_metric_series")
      .values(changed.map(([name, s]) => ({ run_id: runId, name, points: s.points, last_step: s.lastStep, last_value: s.lastValue })))
      .onConflict((oc) =>
        oc.columns(["run_id", "name"]).doUpdateSet((eb) => ({
          points: eb.ref("excluded.points"),
          last_step: eb.ref("excluded.last_step"),
          last_value: eb.ref("excluded.last_value"),
        })),
      )
      .execute();
  }
  const final = Object.fromEntries([...series].map(([name, s]) => [name, s.lastValue]));
  await tx
    .updateTable("runs")
    .set({
      metrics_seq: maxSeq,
      ...(points.length > 0 && { final_metrics: JSON.stringify(final) }),
      ...(dropped > 0 && { metrics_dropped: sql<number>`metrics_dropped + ${dropped}` }),
    })
    .where("id", "=", runId)
    .execute();
  return { stored: points.length, dropped };
}

/** GET /v1/runs/{run_id}/metrics: every series in name order, its points by step (then as reported). */
export async function readRunMetrics(db: Db, accountId: string, runId: string): Promise<RunMetrics> {
  const run = await findRun(db, accountId, runId);
  if (!run) throw notFound("Run");
  const rows = await db
    .selectFrom("run_metric_points")
    .select(["name", "step", "value", "ts"])
    .where("run_id", "=", runId)
    .orderBy("name")
    .orderBy("step")
    .orderBy("ts")
    .orderBy("source")
    .execute();
  const series: RunMetrics["series"] = [];
  for (const r of rows) {
    let last = series.at(-1);
    if (last?.name !== r.name) series.push((last = { name: r.name, points: [] }));
    last.points.push({ step: Number(r.step), value: r.value, ts: r.ts.toISOString() });
  }
  return { series, final: run.final_metrics, dropped: run.metrics_dropped };
}

/** The log archiver's hook for runs: each batch's stdout lines and metrics-file records become points. */
export function runMetricsArchiveHook(limits: MetricLimits): ArchiveBatchHook {
  return async (tx, id, batch) => {
    const sources: MetricSource[] = [];
    // Only lines that may be metrics: ordinary output costs no query.
    for (const l of batch.lines)
      if (l.stream === "stdout" && l.line.startsWith(METRIC_MARKER)) sources.push({ seq: l.seq, ts: l.ts, kind: "stdout", text: l.line });
    for (const m of batch.metrics) sources.push({ seq: m.seq, ts: m.ts, kind: "file", text: m.record });
    await recordRunMetrics(tx, id, sources, limits);
  };
}
