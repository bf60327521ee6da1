// The forms in which a run reports metrics (docs/users/results.md, "Metrics"). Pure: the log
// archiver hands it each stdout line and each $CODEPLANE_METRICS_FILE record the runner forwards.
//
//   ::metric name=loss::0.25                       one point; its step is the series' next
//   ::metric name=loss,step=3::0.25                one point at step 3
//   ::metric::{"name":"loss","value":0.25,"step":3}
//   ::metric::{"step":3,"metrics":{"loss":0.25,"accuracy":0.91}}
//
// The metrics file holds the JSON objects alone, one per line. The marker must begin the line
// (GitHub Actions' workflow commands look the same), so ordinary output cannot be taken for it.

export const METRIC_MARKER = "::metric";

export interface MetricRecord {
  name: string;
  value: number;
  /** Absent: the series' next step (its number of points so far). */
  step?: number;
}

/** What one line or record gave: points, or why it gave none. */
export type MetricParse = { records: MetricRecord[] } | { error: string };

/** Names as MLflow allows them: letters, digits, `_ - . /` and spaces inside. Length is a setting, checked where points are stored. */
const NAME = /^[A-Za-z0-9_.\-/](?:[A-Za-z0-9_.\-/ ]*[A-Za-z0-9_.\-/])?$/;
const NUMBER = /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;
const STEP = /^[0-9]{1,15}$/;

function checkName(name: unknown): string | null {
  if (typeof name !== "string" || name === "") return "a metric needs a name";
  if (!NAME.test(name)) return `invalid metric name ${JSON.stringify(name.slice(0, 64))}: letters, digits, _ - . / and inner spaces only`;
  return null;
}

function numberOf(v: unknown): number | null {
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (typeof v === "string" && NUMBER.test(v.trim())) {
    const n = Number(v.trim());
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

function stepOf(v: unknown): number | null | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "number") return Number.isSafeInteger(v) && v >= 0 ? v : null;
  if (typeof v === "string" && STEP.test(v)) return Number(v);
  return null;
}

/** One JSON record (a metrics-file line, or what follows `::metric::`). */
export function parseMetricRecord(text: string): MetricParse {
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    return { error: "not JSON" };
  }
  if (typeof o !== "object" || o === null || Array.isArray(o)) return { error: "a metric record is a JSON object" };
  const r = o as Record<string, unknown>;
  const step = stepOf(r.step);
  if (step === null) return { error: "step must be a whole number >= 0" };
  const at = step === undefined ? {} : { step };
  if (r.metrics !== undefined) {
    if (typeof r.metrics !== "object" || r.metrics === null || Array.isArray(r.metrics)) return { error: "metrics must be an object of name: value" };
    const records: MetricRecord[] = [];
    for (const [name, raw] of Object.entries(r.metrics as Record<string, unknown>)) {
      const bad = checkName(name);
      if (bad) return { error: bad };
      const value = numberOf(raw);
      if (value === null) return { error: `the value of ${name} is not a finite number` };
      records.push({ name, value, ...at });
    }
    return { records };
  }
  const bad = checkName(r.name);
  if (bad) return { error: bad };
  const value = numberOf(r.value);
  if (value === null) return { error: "value must be a finite number" };
  return { records: [{ name: r.name as string, value, ...at }] };
}

/**
 * A printed line: null when it is not a metric line at all (ordinary output), else what it gave.
 * Only lines that begin with `::metric ` or `::metric::` are metric lines.
 */
export function parseMetricLine(line: string): MetricParse | null {
  if (!line.startsWith(METRIC_MARKER)) return null;
  const rest = line.slice(METRIC_MARKER.length).replace(/\r$/, "");
  if (rest.startsWith("::")) return parseMetricRecord(rest.slice(2));
  if (!rest.startsWith(" ")) return null;
  const end = rest.indexOf("::");
  if (end === -1) return { error: "expected ::metric name=<name>[,step=<n>]::<value>" };
  const props: Record<string, string> = {};
  for (const part of rest.slice(1, end).split(",")) {
    const eq = part.indexOf("=");
    if (eq <= 0) return { error: `expected key=value, got ${JSON.stringify(part.slice(0, 64))}` };
    const key = part.slice(0, eq).trim();
    if (key !== "name" && key !== "step") return { error: `unknown property ${JSON.stringify(key.slice(0, 64))}: name and step only` };
    props[key] = part.slice(eq + 1).trim();
  }
  const bad = checkName(props.name);
  if (bad) return { error: bad };
  const step = stepOf(props.step);
  if (step === null) return { error: "step must be a whole number >= 0" };
  const value = numberOf(rest.slice(end + 2));
  if (value === null) return { error: "the value must be a finite number" };
  return { records: [{ name: props.name!, value, ...(step !== undefined && { step }) }] };
}
