// The pure parts of comparing runs (experiment.ts draws them): the columns of
// an experiment's table, sorting its rows, and the points of several series
// put on one x axis for a plot. Unit-tested in compare.test.ts.

export type Cell = string | number | boolean | null | undefined;

export interface ComparedRun {
  run_id: string;
  status: string;
  created_at: string;
  parameters: Record<string, unknown>;
  final_metrics: Record<string, number>;
}

/** Every parameter and metric name the runs have, each list in name order. */
export function columnsOf(runs: readonly ComparedRun[]): { parameters: string[]; metrics: string[] } {
  const parameters = new Set<string>();
  const metrics = new Set<string>();
  for (const r of runs) {
    for (const k of Object.keys(r.parameters)) parameters.add(k);
    for (const k of Object.keys(r.final_metrics)) metrics.add(k);
  }
  const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return { parameters: [...parameters].sort(byName), metrics: [...metrics].sort(byName) };
}

/** A parameter's value as the table shows it (objects and arrays as JSON). */
export function shownValue(v: unknown): string {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return JSON.stringify(v) ?? "";
}

export type SortKey = { kind: "parameter" | "metric"; name: string } | { kind: "created" } | { kind: "status" };

function cellOf(r: ComparedRun, key: SortKey): Cell {
  switch (key.kind) {
    case "parameter": {
      const v = r.parameters[key.name];
      return typeof v === "object" && v !== null ? JSON.stringify(v) : (v as Cell);
    }
    case "metric":
      return r.final_metrics[key.name];
    case "created":
      return r.created_at;
    case "status":
      return r.status;
  }
}

/** Numbers before strings (numbers by value, strings in their natural order), and a missing value last whichever the direction. */
function compareCells(a: Cell, b: Cell): number {
  const na = typeof a === "number" ? a : typeof a === "string" && a.trim() !== "" && Number.isFinite(Number(a)) ? Number(a) : null;
  const nb = typeof b === "number" ? b : typeof b === "string" && b.trim() !== "" && Number.isFinite(Number(b)) ? Number(b) : null;
  if (na !== null && nb !== null) return na - nb;
  if (na !== null) return -1;
  if (nb !== null) return 1;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}

/** The runs sorted by one column; a run without a value there stays last in either direction, and ties keep the given order. */
export function sortRuns<T extends ComparedRun>(runs: readonly T[], key: SortKey, direction: "ascending" | "descending"): T[] {
  const sign = direction === "ascending" ? 1 : -1;
  return runs
    .map((r, i) => ({ r, i, v: cellOf(r, key) }))
    .sort((a, b) => {
      const ma = a.v === undefined || a.v === null || a.v === "";
      const mb = b.v === undefined || b.v === null || b.v === "";
      if (ma || mb) return ma === mb ? a.i - b.i : ma ? 1 : -1;
      return sign * compareCells(a.v, b.v) || a.i - b.i;
    })
    .map((x) => x.r);
}

export interface Point {
  step: number;
  value: number;
}

/**
 * Several series on one x axis (uPlot's aligned data): the steps any of them has, ascending, and
 * each series' value at every step (null where it has none). Points at one step: the last one counts.
 */
export function alignSeries(series: readonly (readonly Point[])[]): [number[], ...(number | null)[][]] {
  const steps = [...new Set(series.flatMap((s) => s.map((p) => p.step)))].sort((a, b) => a - b);
  const at = new Map(steps.map((s, i) => [s, i]));
  const ys = series.map((s) => {
    const y: (number | null)[] = new Array<number | null>(steps.length).fill(null);
    for (const p of s) y[at.get(p.step)!] = p.value;
    return y;
  });
  return [steps, ...ys];
}

/** A short account of one series for a plot's caption: its points, step range, last, lowest and highest values. */
export function describeSeries(points: readonly Point[]): string {
  if (!points.length) return "no points";
  const values = points.map((p) => p.value);
  const last = points[points.length - 1]!;
  const fmt = (v: number) => String(Number(v.toPrecision(6)));
  const steps = points[0]!.step === last.step ? `step ${last.step}` : `steps ${points[0]!.step}–${last.step}`;
  return `${points.length} ${points.length === 1 ? "point" : "points"}, ${steps}; final ${fmt(last.value)}, lowest ${fmt(Math.min(...values))}, highest ${fmt(Math.max(...values))}`;
}
