import { EventSource } from "eventsource";

// A real SSE client (the `eventsource` package) that records every event of
// a run's log stream and resolves when `end` arrives.

export interface StreamEvent {
  type: "stdout" | "stderr" | "status" | "end" | "setup";
  /** Lines' and setup lines' ids (for status and end, EventSource just repeats the last one). */
  id?: string;
  data: { seq?: number; n?: number; ts?: string; line?: string; status?: string; exit_code?: number | null };
}

export function sseClient(url: string, key: string, extraHeaders: Record<string, string> = {}) {
  const events: StreamEvent[] = [];
  let resolveEnd!: () => void;
  const ended = new Promise<void>((r) => (resolveEnd = r));
  const es = new EventSource(url, {
    fetch: (u, init) => fetch(u, { ...init, headers: { ...init.headers, authorization: `Bearer ${key}`, ...extraHeaders } }),
  });
  for (const type of ["stdout", "stderr", "status", "end", "setup"] as const) {
    es.addEventListener(type, (e: MessageEvent) => {
      events.push({ type, ...(type === "stdout" || type === "stderr" || type === "setup" ? { id: e.lastEventId } : {}), data: JSON.parse(e.data as string) });
      if (type === "end") {
        es.close();
        resolveEnd();
      }
    });
  }
  return {
    es,
    events,
    ended,
    get lines() {
      return events.filter((e) => e.type === "stdout" || e.type === "stderr");
    },
    get setup() {
      return events.filter((e) => e.type === "setup");
    },
  };
}
