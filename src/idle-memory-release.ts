import { performance } from "node:perf_hooks";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import type { Logger } from "./logger.ts";

// Gives memory back to the system when the service goes quiet after traffic,
// where V8 does not.
//
// Under load V8 grows the heap (and keeps its freed pages pooled) and returns
// the pages only on a memory-reducing collection. Its memory reducer starts
// one some seconds after a full collection, if it then judges the allocation
// rate low; it judges by the rate sampled at its recent collections, and an
// idle process collects nothing. Measured with bench/idle-memory.ts and by
// hand: after 10 s of load it usually has the heap back within 10 s (7 runs
// of 7: about 240 -> 185 MiB resident), but in one benchmark run it had not
// after 20 s (327 MiB), and in every run traced with --trace-gc-nvp it never
// did (238 MiB for the 160 s watched). So the service watches its event loop:
// once it has been busy and then quiet for the configured time, and the heap
// is still 16 MiB above where it was after the last release, it asks V8 for
// the collection a process under memory pressure gets (the "last-resort"
// flavour, which also frees the pooled pages), once, until traffic comes back.
// Where V8's reducer got there first, the heap is back down and this does
// nothing.

/** Event-loop utilisation below which an interval counts as quiet. */
export const QUIET_UTILIZATION = 0.05;
/** How much the committed heap must have grown since the last release (or start) to be worth a full collection. */
export const MIN_GROWTH_BYTES = 16 * 1024 * 1024;
/** Quiet intervals in a row that make the service idle: the check runs this many times per idle period. */
export const QUIET_INTERVALS = 2;

export interface ReleaseState {
  /** Quiet intervals seen in a row. */
  readonly quietIntervals: number;
  /**
   * Whether a busy interval came since the last release (or start): only the
   * end of traffic releases, so light steady traffic, never busy, does not
   * get a full collection each time the heap grows.
   */
  readonly busySinceRelease: boolean;
  /** The committed heap after the last release (or at start, or the lowest seen since): growth is measured from it. */
  readonly baselineBytes: number;
}

export interface HeapSample {
  /** Event-loop utilisation over the interval, 0..1. */
  readonly utilization: number;
  /** The heap V8 has committed now (getHeapStatistics().total_heap_size). */
  readonly committedBytes: number;
}

/** Whether to release now, and the state after this sample (pure: the tests' table drives it). */
export function decideRelease(state: ReleaseState, sample: HeapSample): { release: boolean; state: ReleaseState } {
  const baselineBytes = Math.min(state.baselineBytes, sample.committedBytes);
  if (sample.utilization >= QUIET_UTILIZATION) return { release: false, state: { quietIntervals: 0, busySinceRelease: true, baselineBytes } };
  const quietIntervals = state.quietIntervals + 1;
  const release = state.busySinceRelease && quietIntervals >= QUIET_INTERVALS && sample.committedBytes - baselineBytes >= MIN_GROWTH_BYTES;
  return { release, state: { quietIntervals, busySinceRelease: state.busySinceRelease, baselineBytes } };
}

/**
 * Node's `gc` function without putting it on the global object, where any
 * dependency could call it: the flag that makes V8 define it is on only while
 * a fresh context is made, and the function is read from that context.
 * Null if V8 will not give it.
 */
export function obtainGcFunction(): NodeJS.GCFunction | null {
  if (typeof globalThis.gc === "function") return globalThis.gc;
  v8.setFlagsFromString("--expose-gc");
  try {
    const gc: unknown = runInNewContext("typeof gc === 'function' ? gc : null");
    return typeof gc === "function" ? (gc as NodeJS.GCFunction) : null;
  } catch {
    return null;
  } finally {
    v8.setFlagsFromString("--no-expose-gc");
  }
}

export interface IdleMemoryRelease {
  stop(): void;
}

const MiB = (bytes: number) => Math.round(bytes / 1048576);
const residentBytes = () => process.memoryUsage.rss();

/**
 * Checks every idleSeconds / QUIET_INTERVALS; null when it is turned off (0)
 * or cannot run (no gc function). The gc function is obtained only when it is on.
 */
export function startIdleMemoryRelease(options: { idleSeconds: number; logger: Logger }): IdleMemoryRelease | null {
  const { idleSeconds, logger } = options;
  if (idleSeconds <= 0) return null;
  const gc = obtainGcFunction();
  if (!gc) {
    logger.warn("idle memory release is off: V8 did not provide its gc function");
    return null;
  }
  let state: ReleaseState = { quietIntervals: 0, busySinceRelease: false, baselineBytes: v8.getHeapStatistics().total_heap_size };
  let last = performance.eventLoopUtilization();
  let releasing = false;
  const tick = async () => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    if (releasing) return;
    const decision = decideRelease(state, { utilization, committedBytes: v8.getHeapStatistics().total_heap_size });
    state = decision.state;
    if (!decision.release) return;
    releasing = true;
    const before = { heap: v8.getHeapStatistics().total_heap_size, rss: residentBytes() };
    const started = performance.now();
    try {
      await gc({ type: "major", execution: "async", flavor: "last-resort" });
    } finally {
      releasing = false;
    }
    const after = { heap: v8.getHeapStatistics().total_heap_size, rss: residentBytes() };
    // The collection's own time would read as busy in the next interval: measure from here.
    last = performance.eventLoopUtilization();
    state = { quietIntervals: 0, busySinceRelease: false, baselineBytes: after.heap };
    logger.info(
      { heap_mib: [MiB(before.heap), MiB(after.heap)], rss_mib: [MiB(before.rss), MiB(after.rss)], ms: Math.round(performance.now() - started) },
      "idle after traffic: released memory",
    );
  };
  const timer = setInterval(
    () => {
      tick().catch((err: unknown) => logger.warn({ err }, "idle memory release failed"));
    },
    (idleSeconds * 1000) / QUIET_INTERVALS,
  );
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
