import createClient, { type Client } from "openapi-fetch";
import { CodeplaneError, WaitTimeoutError, errorFrom } from "./errors.ts";
import { EventStreamParser, toLogEvent, type LogEvent } from "./events.ts";
import type { components, paths } from "./schema.ts";

// The hand-written layer over the generated client (`api`: every operation,
// typed from the OpenAPI document by openapi-typescript and called through
// openapi-fetch): what generators do badly. The log stream as an async
// iterator of typed events that resumes after a dropped connection with
// Last-Event-ID, waiting for a run or an analysis to end, iterating a list
// across its pages, and errors thrown as classes carrying the API's `detail`.

export * from "./errors.ts";
export type { LogEvent, TimelineEntry, WorkloadStatus } from "./events.ts";
export type { components, paths } from "./schema.ts";

export type Schemas = components["schemas"];
export type Run = Schemas["Run"];
export type Analysis = Schemas["Analysis"];
export type Repository = Schemas["Repository"];

export interface CodeplaneOptions {
  /** The server's base URL, e.g. `https://codeplane.example.com`. */
  baseUrl: string;
  /** An API key (`cp_...`) or an OAuth access token. */
  token: string;
  /** A fetch to use instead of the global one (tests, proxies). */
  fetch?: typeof fetch;
}

export interface StreamOptions {
  /** Resume after this event id (a line's seq, a status event's id): what came before is not sent again. */
  lastEventId?: string;
  /** Reconnects in a row without receiving an event before giving up (default 10). */
  maxReconnects?: number;
  /** The longest wait between reconnects in ms (default 10 000); the server's `retry:` is the first. */
  maxDelayMs?: number;
  signal?: AbortSignal;
}

export interface WaitOptions {
  /** Give up (WaitTimeoutError) after this many ms (default: wait as long as it takes). */
  timeoutMs?: number;
  /** First delay between looks in ms (default 500), doubling to at most 5 000. */
  intervalMs?: number;
  signal?: AbortSignal;
}

const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/** A page of any list operation. */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export class Codeplane {
  /** Every operation, typed: `await cp.api.GET("/v1/runs/{run_id}", { params: { path: { run_id } } })`. */
  readonly api: Client<paths>;
  readonly #baseUrl: string;
  readonly #token: string;
  readonly #fetch: typeof fetch;

  constructor(options: CodeplaneOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#token = options.token;
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.api = createClient<paths>({
      baseUrl: this.#baseUrl,
      headers: { authorization: `Bearer ${this.#token}` },
      fetch: (req) => this.#fetch(req),
    });
  }

  /** The data of a call through `api`, or its error thrown as a CodeplaneError. */
  static async unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
    const { data, error, response } = await call;
    if (!response.ok) throw errorFrom(response.status, error, response.headers);
    return data as T;
  }

  /** Every item of a list, page after page: `for await (const r of cp.paginate((cursor) => ...))`. */
  async *paginate<T>(page: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<T> {
    let cursor: string | undefined;
    do {
      const p = await page(cursor);
      yield* p.items;
      cursor = p.next_cursor ?? undefined;
    } while (cursor);
  }

  /** Every repository of the account. */
  repositories(): AsyncGenerator<Repository> {
    return this.paginate((cursor) => Codeplane.unwrap(this.api.GET("/v1/repositories", { params: { query: { limit: 100, cursor } } })));
  }

  /** Every run of the account, newest first, optionally of one repository or status. */
  runs(filter: { repository_id?: string; status?: Run["status"] } = {}): AsyncGenerator<Run> {
    return this.paginate((cursor) => Codeplane.unwrap(this.api.GET("/v1/runs", { params: { query: { limit: 100, cursor, ...filter } } })));
  }

  getRun(runId: string): Promise<Run> {
    return Codeplane.unwrap(this.api.GET("/v1/runs/{run_id}", { params: { path: { run_id: runId } } }));
  }

  getAnalysis(repositoryId: string, commit: string): Promise<Analysis> {
    return Codeplane.unwrap(
      this.api.GET("/v1/repositories/{repository_id}/analysis/{commit_hash}", { params: { path: { repository_id: repositoryId, commit_hash: commit } } }),
    );
  }

  /** Resolves with the run once it has ended (completed, failed or cancelled). */
  waitForRun(runId: string, options: WaitOptions = {}): Promise<Run> {
    return this.#wait(`run ${runId}`, () => this.getRun(runId), options);
  }

  /** Resolves with the analysis of the commit once it has ended. */
  waitForAnalysis(repositoryId: string, commit: string, options: WaitOptions = {}): Promise<Analysis> {
    return this.#wait(`the analysis of ${commit}`, () => this.getAnalysis(repositoryId, commit), options);
  }

  /** A run's log stream: its phases, setup lines, timeline, stdout and stderr lines, then `end`. */
  streamRunLogs(runId: string, options: StreamOptions = {}): AsyncGenerator<LogEvent> {
    return this.#stream(`/v1/runs/${encodeURIComponent(runId)}/logs/stream`, options);
  }

  /** An analysis's progress stream: its phases and the analyzer's progress lines, then `end`. */
  streamAnalysisLogs(repositoryId: string, commit: string, options: StreamOptions = {}): AsyncGenerator<LogEvent> {
    return this.#stream(`/v1/repositories/${encodeURIComponent(repositoryId)}/analysis/${encodeURIComponent(commit)}/logs/stream`, options);
  }

  async #wait<T extends { status: string }>(what: string, read: () => Promise<T>, options: WaitOptions): Promise<T> {
    const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs;
    let delay = options.intervalMs ?? 500;
    for (;;) {
      const current = await read();
      if (TERMINAL.has(current.status)) return current;
      if (Date.now() + delay > deadline) throw new WaitTimeoutError(what, options.timeoutMs ?? 0);
      await sleep(delay, options.signal);
      if (options.signal?.aborted) throw options.signal.reason;
      delay = Math.min(delay * 2, 5_000);
    }
  }

  /**
   * Follows an event stream to its `end`, reconnecting after a dropped
   * connection or a 5xx/429 with Last-Event-ID (the last id received), so no
   * line is lost or repeated; a 4xx is thrown as a CodeplaneError.
   */
  async *#stream(path: string, options: StreamOptions): AsyncGenerator<LogEvent> {
    const state: StreamState = { lastId: options.lastEventId ?? null, failures: 0, delay: null, ended: false };
    const maxReconnects = options.maxReconnects ?? 10;
    for (;;) {
      let reason: string;
      try {
        reason = yield* this.#connect(path, state, options.signal);
        if (state.ended) return;
      } catch (err) {
        if (err instanceof CodeplaneError || options.signal?.aborted) throw err;
        reason = err instanceof Error ? err.message : String(err);
      }
      if (++state.failures > maxReconnects) throw new Error(`${path}: gave up after ${maxReconnects} reconnects (${reason})`);
      // The server's retry: (or Retry-After) first, doubling while reconnects keep failing, at most maxDelayMs.
      await sleep(Math.min((state.delay ?? 1_000) * 2 ** Math.min(state.failures - 1, 3), options.maxDelayMs ?? 10_000), options.signal);
      if (options.signal?.aborted) throw options.signal.reason;
    }
  }

  /** One connection of a stream: yields its events; answers why it ended when it ended before `end`. */
  async *#connect(path: string, state: StreamState, signal: AbortSignal | undefined): AsyncGenerator<LogEvent, string> {
    const res = await this.#fetch(`${this.#baseUrl}${path}`, {
      headers: { authorization: `Bearer ${this.#token}`, accept: "text/event-stream", ...(state.lastId && { "last-event-id": state.lastId }) },
      signal,
    });
    if (!res.ok) {
      const err = errorFrom(res.status, await res.json().catch(() => undefined), res.headers);
      if (res.status < 500 && res.status !== 429) throw err;
      state.delay = err.retryAfter ? err.retryAfter * 1000 : state.delay;
      return err.message;
    }
    const parser = new EventStreamParser();
    const decoder = new TextDecoder();
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return "the server closed the stream before its end event";
        for (const raw of parser.push(decoder.decode(value, { stream: true }))) {
          if (raw.id !== null) state.lastId = raw.id;
          state.failures = 0;
          const event = toLogEvent(raw);
          if (!event) continue;
          yield event;
          if (event.type === "end") {
            state.ended = true;
            return "";
          }
        }
        state.delay = parser.retry ?? state.delay;
      }
    } finally {
      reader.releaseLock();
    }
  }
}

interface StreamState {
  /** The last event id received: where a reconnect resumes. */
  lastId: string | null;
  /** Reconnects in a row without an event. */
  failures: number;
  /** What the server asked to wait before reconnecting (retry:, Retry-After), in ms. */
  delay: number | null;
  ended: boolean;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
