// Collapsible groups in a run's log: a line `::group::<title>` opens a group
// and `::endgroup::` closes it (the markers GitHub Actions' runners print). A
// group ends at its `::endgroup::`, or at the line before the next
// `::group::` (groups do not nest). A closed group is shown collapsed to its
// title line unless the reader opened it; a group still being written stays
// open. The log view's rows are the run's seqs minus the collapsed groups'
// inner lines (their `::endgroup::` included): `rows`, `seqAt` and `rowOf` map
// between the two with a binary search over the collapsed ranges, so a log of
// a million lines with thousands of groups maps a row in microseconds.

export type Marker = { kind: "start"; title: string } | { kind: "end" };

/** The group marker a line is, if any: at the line's start, as the server's GET .../logs/groups lists them. */
export function groupMarker(line: string): Marker | null {
  const t = line;
  if (t.startsWith("::group::")) return { kind: "start", title: t.slice("::group::".length).trim() };
  if (t.startsWith("::endgroup::")) return { kind: "end" };
  return null;
}

export interface Group {
  /** The seq of its `::group::` line (its title row). */
  start: number;
  /** The seq of its last line (its `::endgroup::`, or the line before the next group), null while it is open. */
  end: number | null;
  title: string;
  collapsed: boolean;
  /** The reader opened or closed it: its end does not collapse it. */
  chosen: boolean;
}

interface Range {
  a: number;
  b: number;
  /** The row of the first seq after it. */
  row: number;
  /** Seqs hidden up to and including this range. */
  hidden: number;
}

export class LogGroups {
  readonly #byStart = new Map<number, Group>();
  readonly #seen = new Set<number>();
  #open: Group | null = null;
  #ranges: Range[] | null = [];

  /** A marker line at seq, in seq order (a marker already seen is ignored). True when the groups changed. */
  add(seq: number, line: string): boolean {
    const m = groupMarker(line);
    if (!m || this.#seen.has(seq)) return false;
    this.#seen.add(seq);
    if (m.kind === "start") {
      if (this.#open) this.#close(this.#open, seq - 1);
      const g: Group = { start: seq, end: null, title: m.title || "group", collapsed: false, chosen: false };
      this.#byStart.set(seq, g);
      this.#open = g;
    } else if (this.#open) this.#close(this.#open, seq);
    else return false;
    this.#ranges = null;
    return true;
  }

  #close(g: Group, end: number): void {
    g.end = end;
    if (!g.chosen) g.collapsed = end > g.start;
    this.#open = null;
  }

  /** An attempt of a retried run ended at seq (logsegments.ts): a group still open ends with it, not in the next attempt. */
  cut(seq: number): boolean {
    const g = this.#open;
    if (!g || g.start > seq) return false;
    this.#close(g, seq);
    this.#ranges = null;
    return true;
  }

  /** The group whose title line is seq. */
  at(seq: number): Group | undefined {
    return this.#byStart.get(seq);
  }

  get size(): number {
    return this.#byStart.size;
  }

  /** Opens or closes a finished group (a group still being written stays open). */
  toggle(start: number): boolean {
    const g = this.#byStart.get(start);
    if (!g || g.end === null || g.end === g.start) return false;
    g.collapsed = !g.collapsed;
    g.chosen = true;
    this.#ranges = null;
    return true;
  }

  /** Opens the collapsed group seq is hidden in, if any (an anchor or a search match there). */
  reveal(seq: number): boolean {
    const r = this.#rangeAt(seq);
    if (!r || seq < r.a || seq > r.b) return false;
    return this.toggle(r.a - 1);
  }

  /** The collapsed groups' hidden seqs, sorted. */
  get #list(): Range[] {
    if (this.#ranges) return this.#ranges;
    const starts = [...this.#byStart.values()].filter((g) => g.collapsed && g.end !== null).sort((x, y) => x.start - y.start);
    let hidden = 0;
    this.#ranges = starts.map((g) => {
      const a = g.start + 1;
      const b = g.end!;
      const row = a - 1 - hidden;
      hidden += b - a + 1;
      return { a, b, row, hidden };
    });
    return this.#ranges;
  }

  /** The last range starting at or before seq. */
  #rangeAt(seq: number): Range | undefined {
    const l = this.#list;
    let lo = 0;
    let hi = l.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (l[mid]!.a <= seq) lo = mid + 1;
      else hi = mid;
    }
    return l[lo - 1];
  }

  /** How many rows seqs 1..last take. */
  rows(last: number): number {
    const r = this.#rangeAt(last);
    if (!r) return last;
    return last - (last >= r.b ? r.hidden : r.hidden - (r.b - last));
  }

  /** The seq shown at a row (0-based). */
  seqAt(row: number): number {
    const l = this.#list;
    let lo = 0;
    let hi = l.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (l[mid]!.row <= row) lo = mid + 1;
      else hi = mid;
    }
    return row + 1 + (lo ? l[lo - 1]!.hidden : 0);
  }

  /** The row of seq: its group's title row when it is hidden in a collapsed group. */
  rowOf(seq: number): number {
    const r = this.#rangeAt(seq);
    if (!r) return seq - 1;
    if (seq <= r.b) return r.row - 1;
    return seq - 1 - r.hidden;
  }
}
