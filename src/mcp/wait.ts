import type { LogHub } from "../logs/hub.ts";
import type { RunLogLine } from "../domain/runs/run-logs.ts";

// The bounded waits of get_run, get_analysis and get_run_logs. Nothing is
// held between requests: a wait reads Postgres (or follows the log hub, which
// reads it too) from whichever replica serves the call, so any replica can
// serve the next one.

/** The longest a tool call waits, in seconds: under the 60 s that MCP clients give a request by default. */
export const MAX_WAIT_SECONDS = 50;

/** Statuses after which nothing changes, for runs and analyses alike. */
const TERMINAL = new Set(["completed", "failed", "cancelled"]);
export const isTerminal = (status: string) => TERMINAL.has(status);

export interface WaitControl {
  /** The client cancelled the call or went away. */
  signal: AbortSignal;
  /** The process is shutting down: answer with what there is, so the client moves to another replica. */
  stopping: () => boolean;
  /**
   * A wait slot of the caller's credential (WaitSlots), taken only once the
   * call would really wait; released when the wait ends. null: the credential
   * holds every slot, so the call answers at once with what it read.
   */
  acquireWait: () => (() => void) | null;
}

/**
 * How many waits each credential holds at once in this process
 * (CODEPLANE_MCP_MAX_WAITS_PER_KEY). A wait is cheap to start and costs a
 * Postgres read per poll for up to MAX_WAIT_SECONDS: without a bound one key
 * held thousands through batches. A call over the bound is not an error: it
 * answers with the state at that moment, as a wait that timed out would, and
 * the client asks again (each ask costing a rate-limit point).
 */
export class WaitSlots {
  readonly #held = new Map<string, number>();
  readonly #perKey: number;

  constructor(perKey: number) {
    this.#perKey = perKey;
  }

  tryAcquire(key: string): (() => void) | null {
    const held = this.#held.get(key) ?? 0;
    if (held >= this.#perKey) return null;
    this.#held.set(key, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = (this.#held.get(key) ?? 1) - 1;
      if (now === 0) this.#held.delete(key);
      else this.#held.set(key, now);
    };
  }

  /** Waits `key` holds now. */
  held(key: string): number {
    return this.#held.get(key) ?? 0;
  }
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });

/**
 * The reads in flight, by what they read: waits on the same workload that
 * poll at the same moment share one query instead of one each. Waits poll on
 * a shared clock (readUntilChanged wakes at multiples of its interval), so
 * they do poll at the same moment. The key must name the caller's account as
 * well as the workload: what one read returns is given to every sharer.
 */
export class SharedReads {
  readonly #inFlight = new Map<string, Promise<unknown>>();

  read<T>(key: string, read: () => Promise<T>): Promise<T> {
    const pending = this.#inFlight.get(key);
    if (pending) return pending as Promise<T>;
    const started = read().finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, started);
    return started;
  }

  /** Reads in flight now. */
  get size(): number {
    return this.#inFlight.size;
  }
}

/** How long until the next multiple of `intervalMs` on the wall clock, so that waits with one interval poll together. */
const untilTick = (intervalMs: number) => intervalMs - (Date.now() % intervalMs);

/**
 * Reads a workload and, when `seconds` > 0, reads it again every `intervalMs`
 * until its status differs from the first read's or is terminal, the time is
 * up, the client goes away or the process stops. Returns the last read.
 */
export async function readUntilChanged<T extends { status: string }>(
  read: () => Promise<T>,
  seconds: number,
  control: WaitControl,
  intervalMs = 500,
): Promise<T> {
  const first = await read();
  if (seconds <= 0 || isTerminal(first.status)) return first;
  const release = control.acquireWait();
  if (!release) return first;
  const deadline = Date.now() + seconds * 1000;
  let last = first;
  try {
    while (Date.now() < deadline && !control.signal.aborted && !control.stopping()) {
      await sleep(Math.min(untilTick(intervalMs), deadline - Date.now()), control.signal);
      if (control.signal.aborted) break;
      last = await read();
      if (last.status !== first.status || isTerminal(last.status)) break;
    }
  } finally {
    release();
  }
  return last;
}

export interface FollowOptions {
  limit: number;
  maxBytes: number;
  seconds: number;
  /** Once a line has come, how long to keep collecting before answering (lines come in bursts). */
  gatherMs?: number;
}

/**
 * Waits for a workload's lines after `after` through the log hub (the same
 * follow the SSE stream uses: stored lines, then live ones, sooner than the
 * archive has them): answers once some lines came and a short gathering time
 * passed, the limit is reached, the workload ended (`ended`: every line was
 * given), the time is up or the client went away. Without a wait slot
 * (WaitControl.acquireWait) it answers at once with no lines.
 */
export function followLines(
  hub: LogHub,
  id: string,
  after: number,
  opts: FollowOptions,
  control: WaitControl,
): Promise<{ lines: RunLogLine[]; ended: boolean }> {
  const release = control.acquireWait();
  if (!release) return Promise.resolve({ lines: [], ended: false });
  return new Promise((resolve) => {
    const lines: RunLogLine[] = [];
    let bytes = 0;
    let ended = false;
    let finished = false;
    let unsubscribe: (() => void) | null = null;
    let gather: NodeJS.Timeout | undefined;
    const finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(deadline);
      clearTimeout(gather);
      clearInterval(watch);
      control.signal.removeEventListener("abort", finish);
      // The hub may call the sink while subscribe() is still running: unsubscribe once it has returned.
      queueMicrotask(() => unsubscribe?.());
      release();
      resolve({ lines, ended });
    };
    const deadline = setTimeout(finish, opts.seconds * 1000);
    const watch = setInterval(() => control.stopping() && finish(), 500);
    control.signal.addEventListener("abort", finish, { once: true });
    unsubscribe = hub.subscribe(id, after, {
      line(l) {
        if (finished) return false;
        const size = Buffer.byteLength(l.line) + 1;
        if (lines.length > 0 && bytes + size > opts.maxBytes) {
          finish();
          return false;
        }
        lines.push({ seq: l.seq, stream: l.stream, ts: l.ts, line: l.line });
        bytes += size;
        if (lines.length >= opts.limit) {
          finish();
          return false;
        }
        gather ??= setTimeout(finish, opts.gatherMs ?? 250);
        return true;
      },
      status() {},
      end() {
        ended = true;
        finish();
      },
      close: finish,
    });
    if (control.signal.aborted) finish();
  });
}
