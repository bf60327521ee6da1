/**
 * A workload's log stream as Server-Sent Events: `GET /v1/runs/{run_id}/logs/stream` and
 * `GET /v1/repositories/{repository_id}/analysis/{commit_hash}/logs/stream`.
 *
 * What a client receives (for the OpenAPI description):
 *
 *   retry: 3000                                   first: reconnect after 3 s
 *
 *   event: status                                 each phase the workload goes through, once, in order: on connect
 *   id: 0:running                                 those it went through so far, then each as it happens; every live
 *   data: {"status":"running"}                    phase before the first line, a terminal one after the last line,
 *                                                 just before end. id: <seq of the last line before it>:<phase>.
 *                                                 status: a run's pending|preprocessing|running|completed|failed|cancelled
 *
 *   event: setup                                  runs only: a line of the install of the environment the run waits
 *   id: 0:preprocessing/42                        for (its dependencies, built once per environment key), while it
 *   data: {"n":42,"ts":"...","line":"..."}        waits: after the preprocessing status, before the running status and
 *                                                 the first line. n counts the install's lines from 1. None for a
 *                                                 cache hit, a run without an environment, or a client that comes
 *                                                 once the command has started. id: <seq>:preprocessing/<n>. Lines
 *                                                 this process did not follow live (a client that comes after the
 *                                                 build ended) come from its stored log (its last 256 KiB), numbered
 *                                                 by their index there, with the build's end as ts.
 *
 *   event: timeline                               runs only: the run's whole timeline, exactly as GET /v1/runs/{id}
 *   data: {"timeline":[{"event":"created",        shows it (the same builder): once on connect, after the statuses
 *          "at":"..."}, ...]}                     replayed then, and again each time it gains an event. A full
 *                                                 snapshot that replaces the last one, so it has no id (a reconnect
 *                                                 is sent the current one). At any point before end, never after
 *                                                 it; not ordered with the status events and lines (the row it is
 *                                                 read from, about once a second, may be ahead of them or behind).
 *                                                 The last one read (with `ended` once the run's row has its end)
 *                                                 comes before the terminal status and end.
 *
 *   event: stdout                                 one event per line, stdout or stderr
 *   id: 17                                        the line's seq: 1, 2, 3, ... shared by both streams, may skip numbers
 *   data: {"seq":17,"ts":"2026-01-02T03:04:05.678Z","line":"text without its newline"}
 *
 *   : ping                                        every 15 s, so proxies keep the connection open
 *
 *   event: end                                    every line has been sent and the workload is over;
 *   data: {"status":"completed","exit_code":0}    the server then closes (exit_code may be null)
 *
 * Resume with `Last-Event-ID` (EventSource sends it on reconnect) or `?after=`: a line's seq
 * (`17`: lines after it, and the phases after the live ones, which all came before line 1) or a
 * status event's id (`17:running`: lines after 17, phases after running) or a setup event's id
 * (`0:preprocessing/42`: phases after preprocessing, setup lines after 42), so nothing is lost or
 * repeated. Data is JSON, whose encoding escapes \n and \r, so every event has exactly one data
 * line whatever the log line holds.
 */
import type { Context } from "koa";
import type { LogLine, SetupLine, StreamEnd, StreamStatus, Subscriber, TimelineEntry } from "../logs/contracts.ts";
import type { LogHub } from "../logs/hub.ts";

export interface StreamLogsOptions {
  hub: Pick<LogHub, "subscribe">;
  /** The workload's id: a run's or an analysis's, whichever kind the hub serves. */
  id: string;
  /** Stream lines with seq > afterSeq (from parseAfter). */
  afterSeq: number;
  /** The phase of the status event the client resumes after (from parseAfter); null: none. */
  afterPhase?: string | null;
  /** With afterPhase the setup phase: the setup line (n) the client resumes after (from parseAfter); null: none. */
  afterSetup?: number | null;
  /** Default 15000. */
  pingIntervalMs?: number;
  /** The reconnect delay sent to the client; default 3000 (tests use less). */
  retryMs?: number;
  /** A busy stream's events are written together at most this often; default COALESCE_MS. */
  coalesceMs?: number;
}

/**
 * 40 ms: at 200 lines a second, eight lines a write instead of one, and
 * lines 50 ms apart (20 a second) still leave at once; well inside the latency
 * a person watching a log notices. With 1,000 subscribers at 200 lines a
 * second the service's time was in the per-subscriber write system calls
 * (bench/sse-fanout.ts profile), which 20 ms left twice as many of.
 */
export const COALESCE_MS = 40;

export function formatLine(l: LogLine): string {
  return `event: ${l.stream}\nid: ${l.seq}\ndata: ${JSON.stringify({ seq: l.seq, ts: l.ts, line: l.line })}\n\n`;
}

/**
 * formatLine's bytes, made once per line: the channel hands the same LogLine
 * object to every subscriber of a run, so with a thousand subscribers a line
 * costs one serialisation and one encoding, and each subscriber only a write
 * of the shared buffer (a profile of 300 subscribers at 200 lines/s had
 * per-subscriber string encoding as the largest cost after the writes).
 */
const encoded = new WeakMap<LogLine, Buffer>();

export function lineEvent(l: LogLine): Buffer {
  let bytes = encoded.get(l);
  if (bytes === undefined) {
    bytes = Buffer.from(formatLine(l), "utf8");
    encoded.set(l, bytes);
  }
  return bytes;
}

export function formatSetup(l: SetupLine, id: string): string {
  return `event: setup\nid: ${id}\ndata: ${JSON.stringify({ n: l.n, ts: l.ts, line: l.line })}\n\n`;
}

/**
 * formatSetup's bytes, made once per line for the id every subscriber of a waiting run gives it
 * (`0:preprocessing/<n>`), so a build's line costs one encoding however many clients watch.
 */
const encodedSetup = new WeakMap<SetupLine, { id: string; bytes: Buffer }>();

export function setupEvent(l: SetupLine, id: string): Buffer {
  const made = encodedSetup.get(l);
  if (made?.id === id) return made.bytes;
  const bytes = Buffer.from(formatSetup(l, id), "utf8");
  if (made === undefined) encodedSetup.set(l, { id, bytes });
  return bytes;
}

export function formatTimeline(events: readonly TimelineEntry[]): string {
  return `event: timeline\ndata: ${JSON.stringify({ timeline: events })}\n\n`;
}

/** formatTimeline's bytes, made once per snapshot: the channel gives every subscriber of a run the same array. */
const encodedTimeline = new WeakMap<readonly TimelineEntry[], Buffer>();

export function timelineEvent(events: readonly TimelineEntry[]): Buffer {
  let bytes = encodedTimeline.get(events);
  if (bytes === undefined) {
    bytes = Buffer.from(formatTimeline(events), "utf8");
    encodedTimeline.set(events, bytes);
  }
  return bytes;
}

export function formatStatus(status: StreamStatus, id: string): string {
  return `event: status\nid: ${id}\ndata: ${JSON.stringify({ status })}\n\n`;
}

export function formatEnd(e: StreamEnd): string {
  return `event: end\ndata: ${JSON.stringify({ status: e.status, exit_code: e.exit_code })}\n\n`;
}

/**
 * Starts a Server-Sent Events response outside Koa's handling (ctx.respond =
 * false): the headers every stream of the API sends, sent at once.
 */
export function openEventStream(ctx: Context): void {
  ctx.status = 200;
  ctx.set({
    "Content-Type": "text/event-stream; charset=utf-8",
    "Cache-Control": "no-store",
    // nginx (and ingress-nginx) would otherwise buffer the stream.
    "X-Accel-Buffering": "no",
    Connection: "keep-alive",
  });
  ctx.respond = false;
  // Small events should leave at once, not wait for Nagle.
  ctx.req.socket.setNoDelay(true);
  ctx.res.flushHeaders();
}

/**
 * Writes the stream to the response until its end event or the client leaving; resolves
 * then. Bypasses Koa's response handling (ctx.respond = false), so the route must do its checks
 * (auth, 404, 422) before calling this.
 */
export async function streamLogs(ctx: Context, opts: StreamLogsOptions): Promise<void> {
  const res = ctx.res;
  const pingMs = opts.pingIntervalMs ?? 15_000;
  openEventStream(ctx);

  await new Promise<void>((resolve) => {
    let finished = false;
    let unsubscribe: (() => void) | null = null;
    // Writing to a response that has ended emits an error nobody listens for: never do it.
    const writable = () => !finished && !res.writableEnded && !res.destroyed;
    // Writes are what a busy stream costs (one system call per write and
    // subscriber), so events are held here and leave together as one write:
    // those of one turn of the event loop at its end, and on a stream that
    // wrote less than coalesceMs ago, once coalesceMs has passed since that
    // write. A quiet stream's event leaves at once. They are held here, not
    // corked in the response: Node's response uncorks its socket before it
    // writes what it held, so each held event, and each chunk's length and
    // line ends, became a system call of its own (a profile of 1,000
    // subscribers at 200 lines/s had four fifths of the service's time there).
    // Ending the response flushes first.
    const window = opts.coalesceMs ?? COALESCE_MS;
    let held: Buffer[] = [];
    let heldBytes = 0;
    /** Subscribers paused on bytes held here rather than on the socket: the next flush lets them go on. */
    let waiting: (() => void)[] = [];
    let lastFlush = Number.NEGATIVE_INFINITY;
    let timer: NodeJS.Timeout | null = null;
    const flush = () => {
      if (timer) clearTimeout(timer);
      timer = null;
      if (held.length === 0) return;
      const chunks = held;
      held = [];
      heldBytes = 0;
      lastFlush = performance.now();
      if (writable()) {
        // Each event is the line's shared buffer, not a copy per subscriber:
        // joining them was 10 MB/s of buffers at 200 lines/s and 1,000
        // subscribers, kept until a full collection.
        const socket = res.socket;
        socket?.cork();
        for (const chunk of chunks) res.write(chunk);
        socket?.uncork();
      }
      const resumes = waiting;
      waiting = [];
      for (const resume of resumes) {
        if (res.writableNeedDrain) res.once("drain", resume);
        else resume();
      }
    };
    const send = (chunk: string | Buffer): boolean => {
      if (!writable()) return false;
      if (held.length === 0) {
        const wait = lastFlush + window - performance.now();
        if (wait <= 0) process.nextTick(flush);
        else timer = setTimeout(flush, wait);
      }
      const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
      held.push(bytes);
      heldBytes += bytes.length;
      return res.writableLength + heldBytes < res.writableHighWaterMark;
    };
    const endResponse = () => {
      flush();
      if (writable()) res.end();
    };
    const finish = () => {
      if (finished) return;
      finished = true;
      if (timer) clearTimeout(timer);
      clearInterval(ping);
      res.off("close", finish);
      unsubscribe?.();
      resolve();
    };
    const ping = setInterval(() => {
      // A client that is not reading already has bytes queued; no need to add to them.
      if (!res.writableNeedDrain) send(": ping\n\n");
    }, pingMs);
    ping.unref();
    // The response closes when the client goes away (or after we end it). Not req's close: that
    // fires as soon as the (empty) request body has been read, with the client still connected.
    res.on("close", finish);
    res.on("error", finish);

    // A client gone before we got here has already had its close event.
    if (!writable() || res.socket?.destroyed !== false) {
      finish();
      return;
    }
    send(`retry: ${opts.retryMs ?? 3000}\n\n`);
    const sink: Subscriber = {
      line: (l) => send(lineEvent(l)),
      setup: (l, id) => send(setupEvent(l, id)),
      status: (s, id) => void send(formatStatus(s, id)),
      timeline: (events) => void send(timelineEvent(events)),
      end: (e) => {
        send(formatEnd(e));
        endResponse();
        finish();
      },
      onDrain: (resume) => {
        if (!writable()) return;
        if (heldBytes > 0) waiting.push(resume);
        else res.once("drain", resume);
      },
      close: () => {
        endResponse();
        finish();
      },
    };
    let unsub: () => void;
    try {
      unsub = opts.hub.subscribe(opts.id, opts.afterSeq, sink, opts.afterPhase ?? null, opts.afterSetup ?? null);
    } catch {
      // The hub is shutting down: close, so the client reconnects (to another replica).
      endResponse();
      finish();
      return;
    }
    if (finished) unsub();
    else unsubscribe = unsub;
  });
}

const NON_NEGATIVE_INT = /^[0-9]+$/;

/**
 * Where a stream resumes: after this line's seq and, when the client's last event was a status,
 * after that phase; when it was a setup line, after the setup phase and that line's n.
 */
export interface ResumePoint {
  seq: number;
  phase: string | null;
  setup: number | null;
}

type ResumeError = { error: string; loc: ["header", "Last-Event-ID"] | ["query", "after"] };

/**
 * Where to resume: `Last-Event-ID` when sent (EventSource's own reconnects), else `?after=`,
 * else the start. Either is a line's seq (`17`), a status event's id (`17:running`: the seq of
 * the last line before it, and its phase) or, when the stream has a `setupPhase`, a setup event's
 * id (`0:preprocessing/42`: that phase, and the setup line's n). A bad value, or a phase `isPhase`
 * does not know, is an error the route answers with 422.
 */
export function parseAfter(
  lastEventId: string | undefined,
  after: string | undefined,
  isPhase: (p: string) => boolean = () => true,
  setupPhase: string | null = null,
): ResumePoint | ResumeError {
  const forms = setupPhase === null ? "a non-negative integer or <seq>:<phase>" : `a non-negative integer, <seq>:<phase> or <seq>:${setupPhase}/<n>`;
  // Koa's ctx.get gives "" for a missing header; EventSource sends none before the first id.
  if (lastEventId !== undefined && lastEventId.trim() !== "") {
    return parsePoint(lastEventId.trim(), isPhase, setupPhase) ?? { error: `Last-Event-ID must be ${forms}`, loc: ["header", "Last-Event-ID"] };
  }
  if (after !== undefined) return parsePoint(after, isPhase, setupPhase) ?? { error: `after must be ${forms}`, loc: ["query", "after"] };
  return { seq: 0, phase: null, setup: null };
}

function parsePoint(text: string, isPhase: (p: string) => boolean, setupPhase: string | null): ResumePoint | null {
  const colon = text.indexOf(":");
  const seq = parseSeq(colon < 0 ? text : text.slice(0, colon));
  if (seq === null) return null;
  if (colon < 0) return { seq, phase: null, setup: null };
  const rest = text.slice(colon + 1);
  const slash = rest.indexOf("/");
  if (slash < 0) return isPhase(rest) ? { seq, phase: rest, setup: null } : null;
  const phase = rest.slice(0, slash);
  const n = parseSeq(rest.slice(slash + 1));
  return setupPhase !== null && phase === setupPhase && isPhase(phase) && n !== null ? { seq, phase, setup: n } : null;
}

function parseSeq(text: string): number | null {
  if (!NON_NEGATIVE_INT.test(text)) return null;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : null;
}
