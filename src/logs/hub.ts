/**
 * The per-API-process fan-out of run logs to streaming clients (the SSE endpoint).
 *
 * For each run with at least one subscriber the hub keeps one channel: one upstream follow of
 * the run's live log, one poll of the run row, and a bounded ring of the newest lines. Each
 * subscriber is pumped on its own: it reads what it lacks from the ring when the ring still
 * holds it, from Postgres when not, and then receives live lines as they arrive. Because every
 * line carries a seq assigned where it was produced, "what it lacks" is simply "seq > the last
 * seq it was given", which is what makes the history/live seam, resumes and slow clients exact.
 *
 * Postgres is the record (the controller archives every line there and sets logs_complete when it
 * has all of them); the live upstream only makes lines arrive sooner. A run is over for a
 * subscriber when the run is terminal, logs_complete is set (or a grace period after the terminal
 * status ran out) and a read of Postgres started after that has found nothing it lacks.
 */
import type { Logger } from "../logger.ts";
import type { LogLine } from "./frames.ts";

export type { LogLine };
/** The workload's phase, as its kind names it (pending, running, completed, ...). */
export type RunStatus = string;

/**
 * The live upstream for one run: a follow of its pod's log (implemented elsewhere). Must call
 * onLine for each line in seq order (it may repeat lines after a reconnect; the hub drops
 * seq <= last delivered), onEnd when the stream is over for good. Returns a stop function.
 * Lines must be whole lines (pieces of a long line joined), as they are archived.
 */
export interface LiveLogSource {
  follow(runId: string, afterSeq: number, onLine: (l: LogLine) => void, onEnd: () => void): () => void;
}

export interface RunState {
  status: RunStatus;
  /** The status is final: once the logs are complete, nothing more will come. */
  terminal: boolean;
  exitCode: number | null;
  logsComplete: boolean;
}

export interface RunEnd {
  status: RunStatus;
  exit_code: number | null;
}

/** One streaming client, as the hub sees it. Calls never overlap and come in stream order. */
export interface Subscriber {
  /** Takes one line. false = the line was taken but no more can be taken now (backpressure). */
  line(l: LogLine): boolean;
  /**
   * The run's status, once on subscribing (when known) and again on every change. A terminal
   * status is held back until every line has been given, so it comes right before end.
   */
  status(s: RunStatus): void;
  /** Every line is delivered and the run is over; nothing else is called after this. */
  end(e: RunEnd): void;
  /**
   * Called after line() returned false: call resume once more lines can be taken. Without it the
   * hub retries on a short timer.
   */
  onDrain?(resume: () => void): void;
  /** The hub is shutting down: close the stream without end, so the client reconnects elsewhere. */
  close?(): void;
}

/** The little the hub reads from Postgres; an interface so unit tests can fake it. */
export interface LogStore {
  /** Lines with seq > afterSeq in seq order, at most limit of them. */
  readLines(runId: string, afterSeq: number, limit: number): Promise<LogLine[]>;
  /** The highest stored seq, 0 when none. */
  maxSeq(runId: string): Promise<number>;
  /** null when the run does not exist (any more). */
  readRun(runId: string): Promise<RunState | null>;
}

export interface LogHubOptions {
  /** Where lines and status are read from: Postgres (src/db/log-store.ts) or, in unit tests, a fake. */
  store: LogStore;
  /** null when no cluster is reachable from this process: new lines are then polled from Postgres. */
  live: LiveLogSource | null;
  logger: Logger;
  /** How often the run row is read for status changes; default 1000 ms. */
  pollIntervalMs?: number;
  /** How many recent lines each followed run keeps in memory; default 5000. */
  ringSize?: number;
  /** How often Postgres is polled for new lines when there is no live upstream (or it ended), and retried while the archiver lags; default 500 ms. */
  dbPollIntervalMs?: number;
  /** How long after a terminal status a stream waits for logs_complete before ending with what is stored; default 30 s. */
  terminalGraceMs?: number;
  /** Rows per history read; default 1000. */
  pageSize?: number;
  /**
   * How long a subscriber that fell behind the ring waits for the archiver to store the lines it
   * lacks before skipping to the ring (lines past a configured size are never stored); default 30 s.
   */
  archiveWaitMs?: number;
}

interface Settings {
  store: LogStore;
  live: LiveLogSource | null;
  logger: Logger;
  pollIntervalMs: number;
  ringSize: number;
  dbPollIntervalMs: number;
  terminalGraceMs: number;
  pageSize: number;
  archiveWaitMs: number;
}

export class LogHub {
  #settings: Settings;
  #channels = new Map<string, RunChannel>();
  #closed = false;

  constructor(opts: LogHubOptions) {
    const store = opts.store;
    const ringSize = opts.ringSize ?? 5000;
    if (!Number.isInteger(ringSize) || ringSize < 1) throw new Error("ringSize must be a positive integer");
    this.#settings = {
      store,
      live: opts.live,
      logger: opts.logger,
      pollIntervalMs: opts.pollIntervalMs ?? 1000,
      ringSize,
      dbPollIntervalMs: opts.dbPollIntervalMs ?? 500,
      terminalGraceMs: opts.terminalGraceMs ?? 30_000,
      pageSize: opts.pageSize ?? 1000,
      archiveWaitMs: opts.archiveWaitMs ?? 30_000,
    };
  }

  /** Streams lines with seq > afterSeq, then live lines, then end. Returns the unsubscribe function (idempotent). */
  subscribe(runId: string, afterSeq: number, sink: Subscriber): () => void {
    if (this.#closed) throw new Error("log hub is closed");
    let channel = this.#channels.get(runId);
    if (!channel) {
      channel = new RunChannel(runId, this.#settings, () => this.#channels.delete(runId));
      this.#channels.set(runId, channel);
    }
    const sub = channel.add(afterSeq, sink);
    const ch = channel;
    return () => ch.remove(sub);
  }

  /** Number of runs with an open channel (an upstream follow); for metrics and tests. */
  get activeRuns(): number {
    return this.#channels.size;
  }

  /** Stops every upstream and timer and asks every stream to close (without end). */
  close(): void {
    this.#closed = true;
    for (const channel of [...this.#channels.values()]) channel.shutdown();
    this.#channels.clear();
  }
}

interface Sub {
  sink: Subscriber;
  /** The last seq given to the sink. */
  delivered: number;
  /** Caught up with the ring: takes lines as they arrive. */
  live: boolean;
  /** line() returned false; waiting for drain. */
  paused: boolean;
  pumping: boolean;
  done: boolean;
  /** Waiting for the archiver to store lines the ring no longer holds. */
  waitTimer: NodeJS.Timeout | null;
  /** When Postgres was first found lacking lines the ring no longer holds (null: not lacking). */
  gapSince: number | null;
  sentStatus: RunStatus | null;
}

class RunChannel {
  readonly #runId: string;
  readonly #s: Settings;
  readonly #log: Logger;
  readonly #onClosed: () => void;
  readonly #subs = new Set<Sub>();
  readonly #ring: Ring;
  #state: RunState | null = null;
  /** Upstream started, ring floor known: subscribers may be pumped. */
  #ready = false;
  /** Postgres now holds every line that will be served (logs_complete, or the grace ran out). */
  #final = false;
  #closed = false;
  /** Highest seq taken from the upstream: repeats at or below it are dropped. */
  #lastSeq = 0;
  #stopUpstream: (() => void) | null = null;
  /** Bumped per follow, so callbacks from a stopped follow are ignored. */
  #followGen = 0;
  #statusTimer: NodeJS.Timeout | null = null;
  #graceTimer: NodeJS.Timeout | null = null;
  #initTimer: NodeJS.Timeout | null = null;
  #polling = false;

  constructor(runId: string, settings: Settings, onClosed: () => void) {
    this.#runId = runId;
    this.#s = settings;
    this.#log = settings.logger.child({ run_id: runId, component: "log-hub" });
    this.#onClosed = onClosed;
    this.#ring = new Ring(settings.ringSize);
    void this.#init();
  }

  add(afterSeq: number, sink: Subscriber): Sub {
    const sub: Sub = { sink, delivered: afterSeq, live: false, paused: false, pumping: false, done: false, waitTimer: null, gapSince: null, sentStatus: null };
    this.#subs.add(sub);
    this.#emitStatus(sub);
    if (this.#ready) void this.#pump(sub);
    return sub;
  }

  remove(sub: Sub): void {
    if (sub.done) return;
    sub.done = true;
    if (sub.waitTimer) clearTimeout(sub.waitTimer);
    sub.waitTimer = null;
    this.#subs.delete(sub);
    if (this.#subs.size === 0) this.#teardown();
  }

  shutdown(): void {
    for (const sub of [...this.#subs]) {
      this.remove(sub);
      try {
        sub.sink.close?.();
      } catch (err) {
        this.#log.warn({ err }, "closing a log stream failed");
      }
    }
    this.#teardown();
  }

  async #init(): Promise<void> {
    try {
      const state = await this.#s.store.readRun(this.#runId);
      if (this.#closed) return;
      if (!state) return this.#vanished();
      this.#applyState(state);
      if (!this.#final) {
        // Whatever is stored by now is read from Postgres; the upstream only has to supply what
        // comes after. Lines are archived in seq order, so nothing at or below this is missing.
        const stored = await this.#s.store.maxSeq(this.#runId);
        if (this.#closed) return;
        this.#lastSeq = stored;
        this.#ring.reset(stored);
        this.#follow(this.#s.live);
        this.#statusTimer = setInterval(() => void this.#poll(), this.#s.pollIntervalMs);
        this.#statusTimer.unref();
      }
      this.#ready = true;
      for (const sub of [...this.#subs]) void this.#pump(sub);
    } catch (err) {
      if (this.#closed) return;
      this.#log.warn({ err }, "reading the run for its log stream failed; retrying");
      this.#initTimer = setTimeout(() => {
        this.#initTimer = null;
        void this.#init();
      }, this.#s.pollIntervalMs);
      this.#initTimer.unref();
    }
  }

  #follow(source: LiveLogSource | null): void {
    const gen = ++this.#followGen;
    const isLive = source !== null;
    const upstream = source ?? new StorePoller(this.#s.store, this.#s.dbPollIntervalMs, this.#s.pageSize, this.#log);
    this.#stopUpstream = upstream.follow(
      this.#runId,
      this.#lastSeq,
      (l) => {
        if (gen === this.#followGen) this.#onLine(l);
      },
      () => {
        if (gen !== this.#followGen || this.#closed || this.#final) return;
        this.#stopUpstream = null;
        // The pod log is gone (or never came) before the run's lines were all stored: carry on
        // from Postgres, where the controller is still archiving them.
        if (isLive) {
          this.#log.debug("live log ended before the run's logs were complete; following Postgres");
          this.#follow(null);
        }
      },
    );
  }

  #stopFollowing(): void {
    this.#followGen++;
    const stop = this.#stopUpstream;
    this.#stopUpstream = null;
    if (stop) {
      try {
        stop();
      } catch (err) {
        this.#log.warn({ err }, "stopping the log upstream failed");
      }
    }
  }

  #onLine(l: LogLine): void {
    if (this.#closed || l.seq <= this.#lastSeq) return;
    // Postgres gives timestamps back in this form; a live line must read the same as its stored copy.
    if (!CANONICAL_TS.test(l.ts)) {
      const d = new Date(l.ts);
      if (!Number.isNaN(d.getTime())) l = { ...l, ts: d.toISOString() };
    }
    this.#lastSeq = l.seq;
    this.#ring.push(l);
    for (const sub of [...this.#subs]) {
      if (sub.live && !sub.paused && !sub.done && l.seq > sub.delivered) this.#deliver(sub, l);
    }
  }

  async #poll(): Promise<void> {
    if (this.#polling || this.#closed || this.#final) return;
    this.#polling = true;
    try {
      const state = await this.#s.store.readRun(this.#runId);
      if (this.#closed) return;
      if (!state) this.#vanished();
      else this.#applyState(state);
    } catch (err) {
      this.#log.warn({ err }, "polling the run's status failed");
    } finally {
      this.#polling = false;
    }
  }

  #applyState(state: RunState): void {
    const changed = this.#state?.status !== state.status;
    this.#state = state;
    if (changed) for (const sub of [...this.#subs]) this.#emitStatus(sub);
    if (!state.terminal) return;
    if (state.logsComplete) this.#makeFinal();
    else if (!this.#graceTimer && !this.#final) {
      this.#graceTimer = setTimeout(() => {
        this.#graceTimer = null;
        this.#log.warn({ grace_ms: this.#s.terminalGraceMs }, "run ended but its logs were not marked complete in time; ending streams with what is stored");
        this.#makeFinal();
      }, this.#s.terminalGraceMs);
      this.#graceTimer.unref();
    }
  }

  #makeFinal(): void {
    if (this.#final) return;
    this.#final = true;
    if (this.#graceTimer) clearTimeout(this.#graceTimer);
    this.#graceTimer = null;
    if (this.#statusTimer) clearInterval(this.#statusTimer);
    this.#statusTimer = null;
    this.#stopFollowing();
    if (!this.#ready) return;
    // Every subscriber now reads Postgres once more for anything the upstream did not bring, then ends.
    for (const sub of [...this.#subs]) {
      if (sub.done || sub.paused) continue;
      if (sub.waitTimer) clearTimeout(sub.waitTimer);
      sub.waitTimer = null;
      sub.live = false;
      void this.#pump(sub);
    }
  }

  /** The run row is gone (deleted, and its lines with it): end with what was last known. */
  #vanished(): void {
    this.#log.info("run disappeared while its log was streamed");
    const end: RunEnd = { status: this.#state?.status ?? "cancelled", exit_code: this.#state?.exitCode ?? null };
    for (const sub of [...this.#subs]) this.#end(sub, end);
    this.#teardown();
  }

  #emitStatus(sub: Sub, ending = false): void {
    if (!this.#state || sub.done || sub.sentStatus === this.#state.status) return;
    if (!ending && this.#state.terminal) return;
    sub.sentStatus = this.#state.status;
    try {
      sub.sink.status(this.#state.status);
    } catch (err) {
      this.#sinkFailed(sub, err);
    }
  }

  /** Gives one line; false when the subscriber paused or failed. */
  #deliver(sub: Sub, l: LogLine): boolean {
    sub.delivered = l.seq;
    let more: boolean;
    try {
      more = sub.sink.line(l);
    } catch (err) {
      this.#sinkFailed(sub, err);
      return false;
    }
    if (!more) this.#pause(sub);
    return more;
  }

  #pause(sub: Sub): void {
    sub.paused = true;
    sub.live = false;
    let resumed = false;
    // Always on a later turn: a sink may call resume from inside onDrain, while a pump is running.
    const resume = () => {
      if (resumed || sub.done) return;
      resumed = true;
      setImmediate(() => {
        if (sub.done) return;
        sub.paused = false;
        void this.#pump(sub);
      });
    };
    if (sub.sink.onDrain) sub.sink.onDrain(resume);
    else setTimeout(resume, 10).unref();
  }

  /** Delivers the ring's lines after what the subscriber has; false when it paused. */
  #deliverRing(sub: Sub): boolean {
    for (let i = this.#ring.firstAfter(sub.delivered); i < this.#ring.length; i++) {
      if (!this.#deliver(sub, this.#ring.at(i))) return false;
    }
    return true;
  }

  /**
   * Brings one subscriber up to date: Postgres pages while the ring no longer holds what it
   * lacks, then the ring, then live. Synchronous from the ring check to "live", so no line can
   * slip in between. When the channel is final, ends the subscriber once Postgres has nothing more.
   */
  async #pump(sub: Sub): Promise<void> {
    if (sub.pumping || sub.done || sub.paused || !this.#ready) return;
    sub.pumping = true;
    try {
      while (!sub.done && !sub.paused && !this.#closed) {
        const final = this.#final;
        if (!final && sub.delivered >= this.#ring.floor) {
          if (this.#deliverRing(sub)) sub.live = true;
          return;
        }
        let page: LogLine[];
        try {
          page = await this.#s.store.readLines(this.#runId, sub.delivered, this.#s.pageSize);
        } catch (err) {
          this.#log.warn({ err }, "reading stored log lines failed; retrying");
          this.#wait(sub);
          return;
        }
        if (sub.done || this.#closed) return;
        if (page.length > 0) sub.gapSince = null;
        for (const l of page) {
          if (l.seq > sub.delivered && !this.#deliver(sub, l)) return;
        }
        if (page.length >= this.#s.pageSize) continue;
        if (final) {
          // A read begun after the run became final found nothing more. Anything the upstream
          // brought beyond that (only possible when the grace ran out) still goes out.
          if (this.#deliverRing(sub)) this.#end(sub, { status: this.#state!.status, exit_code: this.#state!.exitCode });
          return;
        }
        if (this.#final || sub.delivered >= this.#ring.floor) continue;
        // The ring has moved past lines the archiver has not stored yet: wait for them, but not
        // forever, since lines past the stored size limit never will be.
        const now = Date.now();
        sub.gapSince ??= now;
        if (now - sub.gapSince < this.#s.archiveWaitMs) {
          this.#wait(sub);
          return;
        }
        this.#log.warn({ after_seq: sub.delivered, ring_floor: this.#ring.floor }, "stored log lines never caught up; skipping to the newest lines");
        sub.gapSince = null;
        if (this.#deliverRing(sub)) sub.live = true;
        return;
      }
    } finally {
      sub.pumping = false;
    }
  }

  #wait(sub: Sub): void {
    if (sub.waitTimer || sub.done) return;
    sub.waitTimer = setTimeout(() => {
      sub.waitTimer = null;
      void this.#pump(sub);
    }, this.#s.dbPollIntervalMs);
    sub.waitTimer.unref();
  }

  #end(sub: Sub, end: RunEnd): void {
    if (sub.done) return;
    this.#emitStatus(sub, true);
    this.remove(sub);
    try {
      sub.sink.end(end);
    } catch (err) {
      this.#log.warn({ err }, "ending a log stream failed");
    }
  }

  #sinkFailed(sub: Sub, err: unknown): void {
    this.#log.warn({ err }, "log stream subscriber failed; dropping it");
    this.remove(sub);
  }

  #teardown(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopFollowing();
    if (this.#statusTimer) clearInterval(this.#statusTimer);
    if (this.#graceTimer) clearTimeout(this.#graceTimer);
    if (this.#initTimer) clearTimeout(this.#initTimer);
    this.#statusTimer = this.#graceTimer = this.#initTimer = null;
    for (const sub of this.#subs) {
      sub.done = true;
      if (sub.waitTimer) clearTimeout(sub.waitTimer);
    }
    this.#subs.clear();
    this.#onClosed();
  }
}

const CANONICAL_TS = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$/;

/** The upstream when there is no live log: Postgres polled for lines after the last one seen. */
class StorePoller implements LiveLogSource {
  readonly #store: LogStore;
  readonly #intervalMs: number;
  readonly #pageSize: number;
  readonly #log: Logger;

  constructor(store: LogStore, intervalMs: number, pageSize: number, log: Logger) {
    this.#store = store;
    this.#intervalMs = intervalMs;
    this.#pageSize = pageSize;
    this.#log = log;
  }

  follow(runId: string, afterSeq: number, onLine: (l: LogLine) => void): () => void {
    let last = afterSeq;
    let stopped = false;
    let timer: NodeJS.Timeout | null = null;
    const tick = async () => {
      timer = null;
      try {
        for (;;) {
          const page = await this.#store.readLines(runId, last, this.#pageSize);
          if (stopped) return;
          for (const l of page) {
            last = l.seq;
            onLine(l);
          }
          if (page.length < this.#pageSize) break;
        }
      } catch (err) {
        this.#log.warn({ err }, "polling stored log lines failed");
      }
      if (!stopped) {
        timer = setTimeout(() => void tick(), this.#intervalMs);
        timer.unref();
      }
    };
    timer = setTimeout(() => void tick(), this.#intervalMs);
    timer.unref();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }
}

/** A fixed-size ring of the newest lines, in seq order. */
class Ring {
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
