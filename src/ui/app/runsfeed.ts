// The runs list kept current by GET /v1/runs/events (an EventSource, the
// session cookie authenticates it) instead of reading the list every 3 s.
//
// The list is read once the stream says it is live (`ready`), so a change
// made between the two is never missed: it comes on the stream after the
// read. A dropped connection is resumed by the browser itself with
// Last-Event-ID: the server first sends what changed meanwhile, so nothing is
// read again. `reset` (too much changed to send one by one) reads the list
// again. When the stream cannot be had at all (refused: the account's stream
// limit, a server without it, shutting down), the list is read every 3 s as
// before, and the stream is tried again every 30 s.

/** What the list does with the stream. */
export interface RunsFeedHandlers<R> {
  /** Read the list again (on the first `ready`, on `reset`, and every 3 s while falling back). */
  reload(): Promise<void>;
  run(run: R): void;
  deleted(runId: string): void;
  /** "live", "reconnecting" or "polling": shown beside the list. */
  state(s: "live" | "reconnecting" | "polling"): void;
}

const POLL_MS = 3000;
const RETRY_STREAM_MS = 30_000;

/** Follows `path` (GET /v1/runs/events with the list's filters); returns what stops it. */
export function followRuns<R>(path: string, on: RunsFeedHandlers<R>): () => void {
  let es: EventSource | null = null;
  let poll: ReturnType<typeof setInterval> | null = null;
  let retry: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;
  const stopPolling = () => {
    if (poll) clearInterval(poll);
    poll = null;
  };
  const connect = () => {
    const source = new EventSource(path, { withCredentials: true });
    es = source;
    let live = false;
    source.addEventListener("ready", () => {
      // The first ready of this EventSource: read the list (after it, every change comes here).
      // Later ones follow the browser's resumes, which sent what changed meanwhile.
      if (!live) void on.reload().catch(() => {});
      live = true;
      stopPolling();
      on.state("live");
    });
    source.addEventListener("run", (e) => on.run(JSON.parse((e as MessageEvent<string>).data) as R));
    source.addEventListener("deleted", (e) => on.deleted((JSON.parse((e as MessageEvent<string>).data) as { run_id: string }).run_id));
    source.addEventListener("reset", () => void on.reload().catch(() => {}));
    source.addEventListener("error", () => {
      if (stopped) return;
      if (source.readyState !== EventSource.CLOSED) {
        on.state("reconnecting"); // the browser retries itself, with Last-Event-ID
        return;
      }
      // Refused or broken for good: read the list as before, and try the stream again later.
      source.close();
      on.state("polling");
      if (!poll) {
        void on.reload().catch(() => {});
        poll = setInterval(() => void on.reload().catch(() => {}), POLL_MS);
      }
      retry = setTimeout(connect, RETRY_STREAM_MS);
    });
  };
  connect();
  return () => {
    stopped = true;
    es?.close();
    stopPolling();
    if (retry) clearTimeout(retry);
  };
}
