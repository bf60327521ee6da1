import type { LogLine } from "./contracts.ts";

/**
 * A fixed-size ring of a stream's newest lines, in seq order. It lets subscribers near the head
 * (late joiners, briefly slow clients) catch up without a Postgres query.
 */
export class Ring {
  readonly #buf: (LogLine | undefined)[];
  #start = 0;
  #len = 0;
  /** Every upstream line with seq > floor is in the ring. */
  floor = 0;

  constructor(size: number) {
    this.#buf = new Array<LogLine | undefined>(size);
  }

  get length(): number {
    return this.#len;
  }

  reset(floor: number): void {
    this.#buf.fill(undefined);
    this.#start = 0;
    this.#len = 0;
    this.floor = floor;
  }

  push(l: LogLine): void {
    const cap = this.#buf.length;
    if (this.#len === cap) {
      this.floor = this.at(0).seq;
      this.#start = (this.#start + 1) % cap;
      this.#len--;
    }
    this.#buf[(this.#start + this.#len) % cap] = l;
    this.#len++;
  }

  at(i: number): LogLine {
    return this.#buf[(this.#start + i) % this.#buf.length] as LogLine;
  }

  /** Index of the first line with seq > seq (length when none). */
  firstAfter(seq: number): number {
    let lo = 0;
    let hi = this.#len;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.at(mid).seq > seq) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}
