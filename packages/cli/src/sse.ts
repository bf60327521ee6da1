import type { Client } from "./client.ts";
import { apiError } from "./client.ts";
import { CliError, NetworkError } from "./errors.ts";

// A Server-Sent Events stream, followed to its `end` event: the parser (the
// WHATWG event-stream format: `event`, `data`, `id`, `retry`, comments), and
// the reconnect that resumes after the last id seen (Last-Event-ID) when the
// connection drops before `end`, so no line is lost or repeated.

export interface SseEvent {
  event: string;
  data: string;
  id: string | null;
}

/** Splits an event stream's text, chunk by chunk, into events. */
export class SseParser {
  private buffer = "";
  private event = "";
  private data: string[] = [];
  private id: string | null = null;
  /** The last `retry:` the server sent, in ms. */
  retry: number | null = null;

  push(chunk: string): SseEvent[] {
    this.buffer += chunk;
    const out: SseEvent[] = [];
    let nl: number;
    while ((nl = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      // A lone \r at the end of a chunk may be the first half of \r\n: wait for the next chunk.
      if (this.buffer[nl] === "\r" && nl === this.buffer.length - 1) break;
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + (this.buffer.startsWith("\r\n", nl) ? 2 : 1));
      const ev = this.line(line);
      if (ev) out.push(ev);
    }
    return out;
  }

  private line(line: string): SseEvent | null {
    if (line === "") {
      const ev = this.data.length ? { event: this.event || "message", data: this.data.join("\n"), id: this.id } : null;
      this.event = "";
      this.data = [];
      this.id = null;
      return ev;
    }
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") this.event = value;
    else if (field === "data") this.data.push(value);
    else if (field === "id" && !value.includes("\0")) this.id = value;
    else if (field === "retry" && /^\d+$/.test(value)) this.retry = Number(value);
    return null;
  }
}

export interface FollowOptions {
  /** Called for each event; the stream is over after an `end` event. */
  onEvent(ev: SseEvent): void;
  /** Called before each reconnect, with the id it resumes after. */
  onReconnect?(lastId: string | null, attempt: number, reason: string): void;
  /** Reconnect attempts in a row without an event before giving up (default 20). */
  maxAttempts?: number;
  /** The longest wait between attempts in ms (default 10 000); the server's retry: is the first. */
  maxDelayMs?: number;
  signal?: AbortSignal;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
  });

/**
 * Follows `path` until its `end` event, reconnecting with Last-Event-ID after
 * a dropped connection or a 5xx; a 4xx (other than 429) is thrown as ApiError.
 */
export async function followStream(client: Client, path: string, opts: FollowOptions): Promise<void> {
  let lastId: string | null = null;
  let attempt = 0;
  let delay = 0;
  const max = opts.maxAttempts ?? 20;
  for (;;) {
    let reason: string;
    const parser = new SseParser();
    try {
      const res = await client.raw("GET", path, {
        headers: { accept: "text/event-stream", ...(lastId !== null && { "last-event-id": lastId }) },
        ...(opts.signal && { signal: opts.signal }),
      });
      if (!res.ok) {
        const err = await apiError(res, "GET", path);
        if (res.status < 500 && res.status !== 429) throw err;
        reason = err.message;
      } else {
        reason = "the connection closed before the end";
        const decoder = new TextDecoder();
        for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
          for (const ev of parser.push(decoder.decode(chunk, { stream: true }))) {
            attempt = 0;
            if (ev.id !== null) lastId = ev.id;
            opts.onEvent(ev);
            if (ev.event === "end") return;
          }
        }
      }
    } catch (err) {
      if (opts.signal?.aborted) return;
      if (err instanceof CliError && !(err instanceof NetworkError)) throw err;
      reason = (err as Error).message;
    }
    if (opts.signal?.aborted) return;
    attempt++;
    if (attempt > max) throw new CliError(`gave up following ${path} after ${max} attempts: ${reason}`);
    delay = attempt === 1 ? (parser.retry ?? 1000) : Math.min(opts.maxDelayMs ?? 10_000, Math.max(delay, 500) * 2);
    opts.onReconnect?.(lastId, attempt, reason);
    await sleep(delay, opts.signal);
  }
}
