/**
 * GET /v1/runs/events as Server-Sent Events: the account's runs as they change
 * (src/domain/runs/run-feed.ts decides what each stream is sent).
 *
 *   retry: 3000                       first: reconnect after 3 s
 *
 *   event: ready                      the stream is live: after the changes since the resume point, if any.
 *   id: 48213                         A client reads its list after the first one; the id is a position
 *   data: {}                          in the feed (Last-Event-ID resumes from it)
 *
 *   event: run                        a run's new state, exactly as GET /v1/runs/{run_id} shows it;
 *   id: 48220                         the id only on the last event of what one read found
 *   data: {"run_id":"...","status":"running",...}
 *
 *   event: deleted                    the run was deleted (through the API)
 *   data: {"run_id":"...","repository_id":"..."}
 *
 *   event: reset                      too much changed to send one by one: read the list again
 *   id: 48305
 *   data: {}
 *
 *   : ping                            every 15 s, so proxies keep the connection open
 */
import type { Context } from "koa";
import type { RunFeed, RunFeedEvent, RunFeedFilter, RunFeedSink } from "../domain/runs/run-feed.ts";
import { openEventStream } from "./sse.ts";

export interface RunEventsOptions {
  feed: Pick<RunFeed, "subscribe">;
  filter: RunFeedFilter;
  /** The position to resume from (Last-Event-ID or ?after=); null: from now. */
  after: string | null;
  /** Releases the stream's place in the account's limit (RunFeed.reserve). */
  release: () => void;
  pingIntervalMs?: number;
  retryMs?: number;
}

/**
 * A client that reads nothing would make this process hold what it is sent:
 * past 1 MiB still unread when the next write is due, its connection is
 * dropped (it resumes from its last id
 * when it comes back, losing nothing). Dropped, not ended: an ended response
 * keeps what it holds, and the connection, until the client reads it all,
 * which a client that reads nothing never does, while its place in the
 * account's limit is already free for another such stream.
 */
const MAX_UNREAD_BYTES = 1 << 20;

const event = (name: string, data: unknown, id: string | null) => `event: ${name}\n${id === null ? "" : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`;

function formatEvent(e: RunFeedEvent, id: string | null): string {
  return e.kind === "run" ? event("run", e.run, id) : event("deleted", { run_id: e.run_id, repository_id: e.repository_id }, id);
}

/** Writes the stream until the client leaves, the process closes it or the client stops reading; resolves then. */
export async function streamRunEvents(ctx: Context, o: RunEventsOptions): Promise<void> {
  const res = ctx.res;
  openEventStream(ctx);

  await new Promise<void>((resolve) => {
    let finished = false;
    let leave: (() => void) | null = null;
    const writable = () => !finished && !res.writableEnded && !res.destroyed;
    const finish = () => {
      if (finished) return;
      finished = true;
      clearInterval(ping);
      res.off("close", finish);
      leave?.();
      o.release();
      resolve();
    };
    const end = () => {
      if (writable()) res.end();
      finish();
    };
    const send = (text: string) => {
      if (!writable()) return;
      // What the client has not read of earlier writes, not this one: a client that reads is never
      // dropped for one large batch (1,000 runs cancelled at once), which it would otherwise get
      // again from its last id, and be dropped again, on every reconnect.
      if (res.writableLength > MAX_UNREAD_BYTES) {
        res.destroy();
        finish();
        return;
      }
      res.write(text);
    };
    const ping = setInterval(() => send(": ping\n\n"), o.pingIntervalMs ?? 15_000);
    ping.unref();
    res.on("close", finish);
    res.on("error", finish);
    if (!writable() || res.socket?.destroyed !== false) {
      finish();
      return;
    }
    send(`retry: ${o.retryMs ?? 3000}\n\n`);
    const sink: RunFeedSink = {
      events: (events, position) => send(events.map((e, i) => formatEvent(e, i === events.length - 1 ? position : null)).join("")),
      ready: (position) => send(event("ready", {}, position)),
      reset: (position) => send(event("reset", {}, position)),
      close: end,
    };
    o.feed.subscribe(o.filter, sink, o.after).then(
      (unsubscribe) => {
        if (finished) unsubscribe();
        else leave = unsubscribe;
      },
      // Postgres unreachable while starting: end, so the client retries.
      () => end(),
    );
  });
}
