// The run page's view of a run's whole output, without holding all of it: the
// stored log is read from the server in blocks of BLOCK sequence numbers
// (GET /v1/runs/{id}/logs?after=&limit=), as the rows on screen need them, and
// the least recently used blocks beyond MAX_BLOCKS are forgotten (read again
// if scrolled back to). Lines that arrive live (the SSE stream) go into their
// block. A seq in a read block with no line is a gap (`null`): the stream
// skips numbers, e.g. a stream cut at its stored size.

export type Stream = "stdout" | "stderr";

export interface LogLine {
  seq: number;
  ts: string;
  stream: Stream;
  line: string;
}

export const BLOCK = 1000;
export const MAX_BLOCKS = 120;

/** A block's slots, seq k*BLOCK+1+i at i: a line, null (no such line), or undefined (not known yet). */
type Slots = (LogLine | null | undefined)[];

export class LogStore {
  readonly #blocks = new Map<number, Slots>();
  readonly #loading = new Set<number>();
  /** The highest seq known to exist. */
  lastSeq = 0;
  /** Every line after this seq comes live (the stream was opened after it): their blocks need no read. */
  liveAfter = Number.POSITIVE_INFINITY;
  /** Lines refused as already known (a reconnection that overlapped). */
  duplicates = 0;

  static blockOf(seq: number): number {
    return Math.floor((seq - 1) / BLOCK);
  }

  #slots(k: number, create: boolean): Slots | undefined {
    let b = this.#blocks.get(k);
    if (b) {
      // Most recently used last.
      this.#blocks.delete(k);
      this.#blocks.set(k, b);
    } else if (create) {
      b = new Array<LogLine | null | undefined>(BLOCK);
      this.#blocks.set(k, b);
    }
    return b;
  }

  /** The line at seq: a line, null (a gap), or undefined (its block is not read: `wants` says so). */
  get(seq: number): LogLine | null | undefined {
    const b = this.#slots(LogStore.blockOf(seq), false);
    if (!b) return undefined;
    const l = b[(seq - 1) % BLOCK];
    // The live stream sends every line after liveAfter: one it did not send is not there.
    return l === undefined && seq > this.liveAfter && seq <= this.lastSeq ? null : l;
  }

  /** A live line; false when its seq was already known. */
  addLive(l: LogLine): boolean {
    const b = this.#slots(LogStore.blockOf(l.seq), true)!;
    const i = (l.seq - 1) % BLOCK;
    if (b[i]) {
      this.duplicates++;
      return false;
    }
    b[i] = l;
    if (l.seq > this.lastSeq) this.lastSeq = l.seq;
    this.#evict();
    return true;
  }

  /** Whether seq's block must be read from the server (not read, or read short of what is stored now, and not being read). */
  wants(seq: number): boolean {
    const k = LogStore.blockOf(seq);
    if (this.#loading.has(k)) return false;
    const b = this.#blocks.get(k);
    if (!b) return k * BLOCK < this.lastSeq;
    // Lines after liveAfter come live (a slot still empty there is a gap); below it, an empty slot is not read yet.
    const top = Math.min((k + 1) * BLOCK, this.lastSeq, this.liveAfter);
    for (let s = top; s > k * BLOCK; s--) if (b[(s - 1) % BLOCK] === undefined) return true;
    return false;
  }

  loading(k: number): void {
    this.#loading.add(k);
  }

  /** A block's read failed: it may be asked for again. */
  failed(k: number): void {
    this.#loading.delete(k);
  }

  /**
   * A read of block k: `lines` are every stored line in it up to `upTo` (the log's last stored seq
   * when read); the slots below that without a line are gaps. Live lines already there stay.
   */
  fill(k: number, lines: LogLine[], upTo: number): void {
    this.#loading.delete(k);
    const b = this.#slots(k, true)!;
    const top = Math.min((k + 1) * BLOCK, upTo);
    for (let s = k * BLOCK + 1; s <= top; s++) if (b[(s - 1) % BLOCK] === undefined) b[(s - 1) % BLOCK] = null;
    for (const l of lines) if (LogStore.blockOf(l.seq) === k) b[(l.seq - 1) % BLOCK] = l;
    if (upTo > this.lastSeq) this.lastSeq = upTo;
    this.#evict();
  }

  /** Forgets the least recently used blocks beyond MAX_BLOCKS (never the last one, which live lines fill). */
  #evict(): void {
    for (const k of this.#blocks.keys()) {
      if (this.#blocks.size <= MAX_BLOCKS) return;
      if ((k + 1) * BLOCK >= this.lastSeq) continue;
      this.#blocks.delete(k);
    }
  }

  get blockCount(): number {
    return this.#blocks.size;
  }
}
