// How results are printed: aligned tables for people (the default), JSON
// (`-o json`: the API's objects as they came) for scripts.

export interface Writer {
  write(text: string | Uint8Array): unknown;
}

export interface Io {
  stdout: Writer & { isTTY?: boolean };
  stderr: Writer & { isTTY?: boolean };
  /** All of stdin, as text (an API key, a variable's value). */
  readStdin(): Promise<string>;
  env: Record<string, string | undefined>;
  /** Opens a URL in the browser (login); tests drive the sign-in page instead. */
  openBrowser?(url: string): Promise<void>;
  /** Aborted on Ctrl-C. */
  signal?: AbortSignal;
}

export type Column<T> = [header: string, cell: (row: T) => unknown];

// Display width: ANSI escapes count for nothing; East Asian wide characters would count for two, which this ignores.
const ANSI = /\x1b\[[0-9;]*m/g;
const width = (s: string) => s.replace(ANSI, "").length;

function cellText(v: unknown): string {
  if (v === null || v === undefined || v === "") return "-";
  if (Array.isArray(v)) return v.length ? v.map(cellText).join(",") : "-";
  if (typeof v === "object") return JSON.stringify(v);
  // One line per row: a newline in a value would break the table.
  return (typeof v === "string" ? v : JSON.stringify(v)).replace(/[\r\n\t]+/g, " ");
}

/** Rows as a table: upper-case headers, columns two spaces apart, the last one not padded. */
export function table<T>(rows: readonly T[], columns: readonly Column<T>[]): string {
  const cells = [columns.map(([h]) => h.toUpperCase()), ...rows.map((r) => columns.map(([, f]) => cellText(f(r))))];
  const widths = columns.map((_, i) => Math.max(...cells.map((row) => width(row[i]!))));
  return cells
    .map(
      (row) =>
        row
          .map((c, i) => (i === row.length - 1 ? c : c + " ".repeat(widths[i]! - width(c))))
          .join("  ")
          .trimEnd() + "\n",
    )
    .join("");
}

/** `key: value` lines for one object. */
export function fields(pairs: readonly [string, unknown][]): string {
  const w = Math.max(...pairs.map(([k]) => k.length)) + 1;
  return pairs.map(([k, v]) => `${`${k}:`.padEnd(w)} ${cellText(v)}\n`).join("");
}

export const json = (value: unknown) => JSON.stringify(value, null, 2) + "\n";

/** How long ago an RFC 3339 time was, roughly ("5s ago", "3m ago", "2h ago", "4d ago"). */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "-";
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

/** Seconds as "42s", "3m05s", "1h02m". */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return "-";
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}
