// The run page's memory: the newest `cap` lines only, in seq order, each seq
// once. A log of a million lines keeps the tab at `cap` lines; the rest is a
// download away.

export type Stream = "stdout" | "stderr";

export interface LogLine {
  seq: number;
  ts: string;
  stream: Stream;
  line: string;
}

export class LogBuffer {
  readonly cap: number;
  #lines: LogLine[] = [];
  #start = 0;
  /** The highest seq seen: what a reconnection resumes after. */
  lastSeq = 0;
  /** Lines that fell out of the window. */
  dropped = 0;
  /** Lines refused as already seen (a reconnection that overlapped). */
  duplicates = 0;

  constructor(cap: number) {
    this.cap = cap;
  }

  /** Adds a line; false when its seq was already seen. */
  add(l: LogLine): boolean {
    if (l.seq <= this.lastSeq) {
      this.duplicates++;
      return false;
    }
    this.lastSeq = l.seq;
    this.#lines.push(l);
    if (this.#lines.length - this.#start > this.cap) {
      this.#start++;
      this.dropped++;
      // Compact now and then, so the array does not keep what fell out.
      if (this.#start >= this.cap) {
        this.#lines = this.#lines.slice(this.#start);
        this.#start = 0;
      }
    }
    return true;
  }

  get size(): number {
    return this.#lines.length - this.#start;
  }

  /** The newest `max` lines that pass `keep`, oldest first. */
  last(max: number, keep: (l: LogLine) => boolean): LogLine[] {
    const out: LogLine[] = [];
    for (let i = this.#lines.length - 1; i >= this.#start && out.length < max; i--) {
      const l = this.#lines[i]!;
      if (keep(l)) out.push(l);
    }
    return out.reverse();
  }
}
