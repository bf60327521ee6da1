// The log stream's events (docs/users/sse.md), typed, and the text/event-stream
// parsing that yields them. The WHATWG format: `event:`, `data:` (joined by
// newlines), `id:`, `retry:` and `:` comments, lines ended by \n, \r\n or \r.

export type WorkloadStatus = "pending" | "preprocessing" | "running" | "completed" | "failed" | "cancelled";

export interface TimelineEntry {
  event: string;
  at: string;
  cache?: "hit" | "built";
}

export type LogEvent =
  /** A phase the run or analysis went through, once each, in order. */
  | { type: "status"; id: string; status: WorkloadStatus }
  /** One line of output; `seq` orders both streams together. */
  | { type: "stdout" | "stderr"; id: string; seq: number; ts: string; line: string }
  /** One line of the install of the environment the run waits for. */
  | { type: "setup"; id: string; n: number; ts: string; line: string }
  /** The run's whole timeline, each time it grows. */
  | { type: "timeline"; timeline: TimelineEntry[] }
  /** Every line was sent and the workload is over; the stream ends after it. */
  | { type: "end"; status: WorkloadStatus; exit_code: number | null };

export interface RawEvent {
  event: string;
  data: string;
  id: string | null;
}

/** Splits an event stream, chunk by chunk, into raw events; `retry` keeps the server's last `retry:`. */
export class EventStreamParser {
  #buffer = "";
  #event = "";
  #data: string[] = [];
  #id: string | null = null;
  retry: number | null = null;

  push(chunk: string): RawEvent[] {
    this.#buffer += chunk;
    const out: RawEvent[] = [];
    for (;;) {
      const nl = this.#buffer.search(/[\r\n]/);
      if (nl < 0) break;
      // A \r that ends the chunk may be half of \r\n: wait for the next chunk to know.
      if (this.#buffer[nl] === "\r" && nl === this.#buffer.length - 1) break;
      const line = this.#buffer.slice(0, nl);
      this.#buffer = this.#buffer.slice(nl + (this.#buffer.startsWith("\r\n", nl) ? 2 : 1));
      const ev = this.#line(line);
      if (ev) out.push(ev);
    }
    return out;
  }

  #line(line: string): RawEvent | null {
    if (line === "") {
      const ev = this.#data.length ? { event: this.#event || "message", data: this.#data.join("\n"), id: this.#id } : null;
      this.#event = "";
      this.#data = [];
      this.#id = null;
      return ev;
    }
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") this.#event = value;
    else if (field === "data") this.#data.push(value);
    else if (field === "id" && !value.includes("\0")) this.#id = value;
    else if (field === "retry" && /^\d+$/.test(value)) this.retry = Number(value);
    return null;
  }
}

/** The typed event a raw one stands for; null for an event type this SDK does not know (a newer server's). */
export function toLogEvent(raw: RawEvent): LogEvent | null {
  const data = JSON.parse(raw.data) as Record<string, unknown>;
  const id = raw.id ?? "";
  switch (raw.event) {
    case "status":
      return { type: "status", id, status: data.status as WorkloadStatus };
    case "stdout":
    case "stderr":
      return { type: raw.event, id, seq: data.seq as number, ts: data.ts as string, line: data.line as string };
    case "setup":
      return { type: "setup", id, n: data.n as number, ts: data.ts as string, line: data.line as string };
    case "timeline":
      return { type: "timeline", timeline: data.timeline as TimelineEntry[] };
    case "end":
      return { type: "end", status: data.status as WorkloadStatus, exit_code: (data.exit_code as number | null) ?? null };
    default:
      return null;
  }
}
