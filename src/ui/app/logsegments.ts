// A retried run's log skips seq numbers between attempts (docs/users/runs.md#retries):
// attempt k's lines have seq from max(1, (k-1) × ATTEMPT_SEQ_STRIDE) (its `first_seq`,
// the retried attempt's own marker line there), so the second attempt starts at
// 1,000,000,000. The log view's rows must stay dense over the seqs that exist, so
// rows are drawn in positions: 1..N, one per seq from 1 to attempt 1's last, then
// on from attempt 2's first_seq, and so on. A segment (an attempt's seq range) is
// placed once the end of the one before it is known, and never moves after: the
// positions of what is drawn (and the groups built on them, loggroups.ts) stay.

/** Seqs each attempt has of its own (src/resources/run.ts ATTEMPT_SEQ_STRIDE, documented in docs/users/runs.md). */
export const ATTEMPT_SEQ_STRIDE = 1_000_000_000;

/** The segment (attempt - 1) a seq is in. */
export const segmentOf = (seq: number): number => Math.floor(seq / ATTEMPT_SEQ_STRIDE);

/** A segment's first seq: its attempt's `first_seq`. */
export const segmentStart = (k: number): number => Math.max(1, k * ATTEMPT_SEQ_STRIDE);

export class SeqSegments {
  /** ends[k]: the last seq of segment k (start(k) - 1 when it has no line), for every segment before the last placed one. */
  readonly #ends: number[] = [];
  /** before[k]: positions taken by the segments before k. */
  readonly #before: number[] = [0];

  /** Segments placed: 0..placed-1 have a position; the last of them is open-ended. */
  get placed(): number {
    return this.#before.length;
  }

  /** The last seq of segment k, once a later one is placed. */
  endOf(k: number): number | undefined {
    return this.#ends[k];
  }

  /** Segment k, the last placed, ends at seq `end` (its last line's, or lower when it has none): the next one is placed after it. */
  end(k: number, end: number): boolean {
    if (k !== this.#ends.length) return false;
    const e = Math.max(segmentStart(k) - 1, Math.min(end, segmentStart(k + 1) - 1));
    this.#ends.push(e);
    this.#before.push(this.#before[k]! + e - segmentStart(k) + 1);
    return true;
  }

  /** Whether seq has a position (its segment is placed). */
  has(seq: number): boolean {
    return segmentOf(seq) < this.placed;
  }

  /**
   * The position (1-based) of seq. A seq past its segment's end takes that end's position; one in a
   * segment not placed yet, the last position before the last placed segment (none of that is drawn yet).
   */
  pos(seq: number): number {
    const k = Math.min(segmentOf(seq), this.placed - 1);
    if (k < segmentOf(seq) && this.#ends[k] === undefined) return this.#before[k]!;
    const s = Math.min(seq, this.#ends[k] ?? seq);
    return this.#before[k]! + Math.max(0, s - segmentStart(k) + 1);
  }

  /** The positions seqs up to `last` (the highest known) take: those of the placed segments only. */
  count(last: number): number {
    return last < 1 ? 0 : this.pos(last);
  }

  /** The seq at a position (1-based). */
  seq(pos: number): number {
    const b = this.#before;
    let k = b.length - 1;
    while (k > 0 && b[k]! >= pos) k--;
    return segmentStart(k) + pos - b[k]! - 1;
  }
}
