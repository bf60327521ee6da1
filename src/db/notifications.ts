import pg from "pg";
import type { Logger } from "../logger.ts";

/**
 * One Postgres channel, LISTENed on a connection of its own. Whoever caches
 * on the strength of notifications must stop trusting its cache when `onLost`
 * fires, and start over after `onListening`. Reconnects after a second when
 * the connection fails.
 *
 * `sync` is a barrier: once it resolves, every notification committed before
 * it was called has been handed to onNotify. Postgres sends a listening
 * session's pending notifications before the ReadyForQuery that ends a query
 * on it (postgres.c, "if any notifies were received ... they'll be seen by
 * the client before ReadyForQuery is"), and a committing session signals the
 * listeners before its own client hears of the commit; so a round trip on
 * this connection, begun after the call, is enough. Concurrent callers share
 * one round trip (the one in flight began too early for a new caller, who
 * waits for the next, which serves everyone waiting for it). The next is sent
 * at the end of the event loop's turn (setImmediate), so the requests read in
 * one turn share it: sent at once, the first request's barrier was begun too
 * early for the others read in the same turn, and each cached-key request
 * cost 0.37 round trips on the list benchmark instead of 0.25 (issue 36).
 */
export interface ChannelHandlers {
  onNotify(payload: string | undefined): void;
  /** The LISTEN is in place (again): notifications from now on are seen. */
  onListening(sync: () => Promise<void>): void;
  /** The connection failed: notifications may be missed until onListening. */
  onLost(): void;
}

export interface ChannelListener {
  readonly live: boolean;
  close(): Promise<void>;
}

const RECONNECT_MS = 1000;
/**
 * A round trip on the listening connection unanswered this long means the
 * connection is gone without saying so (a half-open socket, a server frozen):
 * its waiting callers fail (the key cache then reads the row from the pool)
 * and the connection is replaced. An empty query on an idle connection
 * answers in well under a millisecond; this is seconds so that a loaded
 * machine does not trip it, and an answer already received when the time is
 * up (the event loop was held up longer than this) is read before deciding.
 */
export const BARRIER_TIMEOUT_MS = 5000;
/** Connecting and the LISTEN, each: past this the attempt is abandoned and made again a second later. */
const CONNECT_TIMEOUT_MS = 10_000;

export interface BarrierOptions {
  /** See BARRIER_TIMEOUT_MS. */
  timeoutMs?: number;
  /** Called once when a round trip went unanswered for timeoutMs: the connection is to be replaced. */
  onStuck?: (err: Error) => void;
}

/**
 * The coalescing round trip described at ChannelHandlers. Rejects when the
 * connection fails, or when a round trip goes unanswered for timeoutMs: from
 * then on every call rejects at once (the barrier is dead; the listener makes
 * a new connection and a new barrier). Exported for its test.
 */
export function barrier(c: Pick<pg.Client, "query">, opts: BarrierOptions = {}): () => Promise<void> {
  const timeoutMs = opts.timeoutMs ?? BARRIER_TIMEOUT_MS;
  // The round trip on the wire, if any, when it was sent (a monotonic clock), and the one the callers since it was sent wait for.
  let inflight: Promise<void> | null = null;
  let sentAt = 0;
  let failInflight: ((err: Error) => void) | null = null;
  let next: Promise<void> | null = null;
  let deadErr: Error | null = null;
  // One watchdog timer at a time, not one per round trip: a cached-key request costs a quarter of one.
  let watchdog: NodeJS.Timeout | null = null;
  const arm = (ms: number) => {
    watchdog = setTimeout(watch, ms);
    watchdog.unref();
  };
  const watch = () => {
    watchdog = null;
    if (!inflight || deadErr) return;
    const waited = performance.now() - sentAt;
    if (waited < timeoutMs) return arm(timeoutMs - waited);
    // Timers run before sockets are read: an answer that came while the event loop was held up
    // is read in this turn's poll, ahead of setImmediate. Only then is the round trip unanswered.
    const suspect = inflight;
    setImmediate(() => {
      // Answered meanwhile: the next round trip, if any, armed its own watchdog when sent.
      if (inflight !== suspect || deadErr) return;
      deadErr = new Error(`the listening connection did not answer a round trip within ${timeoutMs} ms`);
      failInflight?.(deadErr);
      opts.onStuck?.(deadErr);
    });
  };
  const send = () => {
    next = null;
    // An empty query: Postgres answers it without parsing or planning anything,
    // and still hands over pending notifications before its ReadyForQuery.
    // Its own promise, which the watchdog can fail: nothing long-lived holds on to it once settled.
    const p = new Promise<void>((resolve, reject) => {
      failInflight = reject;
      (c.query("") as Promise<unknown>).then(() => resolve(), reject);
    });
    inflight = p;
    sentAt = performance.now();
    if (!watchdog) arm(timeoutMs);
    const settled = () => {
      if (inflight !== p) return;
      inflight = null;
      failInflight = null;
    };
    p.then(settled, settled);
    return p;
  };
  return () => {
    if (deadErr) return Promise.reject(deadErr);
    // Not sent yet: it begins after this caller came, whoever asked for it first.
    if (next) return next;
    // Sent at the end of this turn of the event loop, once the one in flight (which may have been
    // sent before this caller's notification was committed) is answered, so that every request read
    // in this turn shares it.
    const after = inflight ? inflight.catch(() => undefined) : Promise.resolve();
    next = after.then(() => new Promise<void>((resolve) => setImmediate(resolve))).then(() => (deadErr ? Promise.reject(deadErr) : send()));
    return next;
  };
}

export async function listenToChannel(url: string, channel: string, handlers: ChannelHandlers, logger: Logger): Promise<ChannelListener> {
  let client: pg.Client | null = null;
  let live = false;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  const lost = (err: unknown) => {
    if (!live && client === null) return;
    live = false;
    handlers.onLost();
    const failed = client;
    client = null;
    failed?.end().catch(() => undefined);
    if (closed) return;
    logger.warn({ channel, err: err instanceof Error ? err.message : String(err) }, "notification connection lost; reconnecting");
    timer = setTimeout(() => void connect().catch(lost), RECONNECT_MS);
  };
  const connect = async () => {
    // Named, so an operator (and a test) can tell it in pg_stat_activity.
    // TCP keepalives: a connection whose path died is noticed by the kernel (after about 30 s idle
    // and its probes) even on a channel whose handler never makes a round trip (the runs feed's).
    const c = new pg.Client({
      connectionString: url,
      application_name: `codeplane listen ${channel}`,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: 30_000,
    });
    client = c;
    c.on("error", lost);
    c.on("end", () => lost(new Error("connection ended")));
    c.on("notification", (n) => {
      if (n.channel === channel) handlers.onNotify(n.payload);
    });
    await c.connect();
    // A LISTEN that never answers would leave the channel without a listener and nothing to say so.
    const unanswered = setTimeout(() => client === c && lost(new Error(`LISTEN unanswered within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
    try {
      await c.query(`listen "${channel.replaceAll('"', '""')}"`);
    } finally {
      clearTimeout(unanswered);
    }
    if (closed || client !== c) return;
    live = true;
    handlers.onListening(barrier(c, { onStuck: (err) => client === c && lost(err) }));
  };
  try {
    await connect();
  } catch (err) {
    closed = true;
    clearTimeout(timer);
    throw err;
  }
  return {
    get live() {
      return live;
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      live = false;
      const c = client;
      client = null;
      await c?.end().catch(() => undefined);
    },
  };
}
