import type { Logger } from "../logger.ts";
import type { SetupLine, SetupLogSource, SetupStore } from "./contracts.ts";

// The install output of environment builds, for the run log streams of this
// API process (the `setup` events; see ./channel.ts for where they go out).
//
// One feed per build, shared by every run waiting on it and by every client
// of those runs: one follow of the build pod's install container and one poll
// of the environment's row, however many streams watch, so a build costs the
// process the same with one client or a thousand. The feed numbers the lines
// itself (n = 1, 2, 3, ... from the install's first line, which every follow
// starts from) and keeps them, at most maxBytes of the newest, for clients
// that join or resume later. When the row leaves `building` the follow gets
// endGraceMs to reach the install's end, then stops; a feed that did not see
// the whole install (no cluster, the pod gone, a process that started late)
// completes from the stored log, whose lines are numbered by their index.

/** A line longer than this is cut: one runaway line must not hold the process's memory. */
export const MAX_SETUP_LINE = 64 * 1024;

export interface SetupFeedSettings {
  store: SetupStore;
  /** null: no cluster reachable from this process; lines then come from the stored log once the build ends. */
  live: SetupLogSource | null;
  logger: Logger;
  /** How often the environment's row is read while it builds; default 1000 ms. */
  pollIntervalMs: number;
  /** How long the follow may go on after the row has left `building`; default 10 s. */
  endGraceMs: number;
  /** The newest lines kept per build, in bytes; default 4 MiB. */
  maxBytes: number;
  /**
   * How long a feed outlives the last stream that held it; default 30 s. A client that
   * reconnects (EventSource retries after 3 s) to this process finds the lines it was given,
   * numbered as they were, instead of the stored log's numbers.
   */
  lingerMs: number;
}

/** The stored log's lines, numbered from 1 by their index; `ts` is the build's end (they have no time of their own). */
export function storedSetupLines(log: string | null, ts: string): SetupLine[] {
  if (!log) return [];
  const texts = log.split("\n");
  // A log that ends with its newline has no line after it.
  if (texts.at(-1) === "") texts.pop();
  return texts.map((text, i) => ({ n: i + 1, ts, line: clean(text) }));
}

/** What a line may hold: no NUL (Postgres text cannot), at most MAX_SETUP_LINE characters. */
export function clean(text: string): string {
  const cut = text.length > MAX_SETUP_LINE ? text.slice(0, MAX_SETUP_LINE) : text;
  return cut.replaceAll("\u0000", "\uFFFD");
}

const lineBytes = (l: SetupLine) => l.line.length * 2 + 64;

/** One build's install output as this process has seen it. Listeners are told of every change. */
export class SetupFeed {
  readonly environmentId: string;
  readonly #s: SetupFeedSettings;
  readonly #log: Logger;
  readonly #listeners = new Set<() => void>();
  /** The kept lines: contiguous, from n = floor + 1 to count. */
  #lines: SetupLine[] = [];
  #start = 0;
  #bytes = 0;
  /** Every line with n <= floor has been dropped from memory (or was never seen). */
  #floor = 0;
  #count = 0;
  #ended = false;
  #complete = false;
  #stored: SetupLine[] | null = null;
  #storedLoading = false;
  #stopLive: (() => void) | null = null;
  #pollTimer: NodeJS.Timeout | null = null;
  #graceTimer: NodeJS.Timeout | null = null;
  #polling = false;
  #closed = false;
  refs = 0;
  /** Set while nothing holds the feed: it closes when this fires. */
  lingerTimer: NodeJS.Timeout | null = null;

  constructor(environmentId: string, settings: SetupFeedSettings) {
    this.environmentId = environmentId;
    this.#s = settings;
    this.#log = settings.logger.child({ environment_id: environmentId });
    void this.#poll();
    this.#pollTimer = setInterval(() => void this.#poll(), settings.pollIntervalMs);
    this.#pollTimer.unref();
  }

  /** No more live lines will come: what the feed holds (and, when not complete, the stored log) is all. */
  get ended(): boolean {
    return this.#ended;
  }

  /** Ended having seen the whole install, from its first line: the stored log has nothing more. */
  get complete(): boolean {
    return this.#complete;
  }

  /** The stored log's lines once read (only read for a feed that ended incomplete); null until then. */
  get stored(): SetupLine[] | null {
    return this.#stored;
  }

  /** The kept lines with n > after, in order (from the oldest kept when after is below it). */
  *linesAfter(after: number): Generator<SetupLine> {
    for (let i = this.#start + Math.max(0, after - this.#floor); i < this.#lines.length; i++) yield this.#lines[i]!;
  }

  listen(fn: () => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    this.lingerTimer = null;
    this.#stop();
    this.#listeners.clear();
  }

  #notify(): void {
    for (const fn of [...this.#listeners]) {
      try {
        fn();
      } catch (err) {
        this.#log.warn({ err }, "a setup listener failed");
      }
    }
  }

  async #poll(): Promise<void> {
    if (this.#polling || this.#closed || this.#ended || this.#graceTimer) return;
    this.#polling = true;
    try {
      const env = await this.#s.store.environment(this.environmentId);
      if (this.#closed || this.#ended) return;
      if (env?.status === "building") {
        if (!this.#stopLive && this.#s.live) this.#follow(this.#s.live);
        return;
      }
      // Built, failed or deleted: the install is over. A follow under way gets a moment to read its end.
      if (!this.#stopLive) return this.#end(false);
      this.#graceTimer = setTimeout(() => {
        this.#log.debug("the build ended but its install's log did not; completing from the stored log");
        this.#end(false);
      }, this.#s.endGraceMs);
      this.#graceTimer.unref();
    } catch (err) {
      this.#log.warn({ err }, "reading the environment for its setup log failed");
    } finally {
      this.#polling = false;
    }
  }

  #follow(live: SetupLogSource): void {
    this.#log.debug("following the build's install log");
    this.#stopLive = live.follow(
      this.environmentId,
      (text, ts) => {
        if (!this.#closed && !this.#ended) this.#push({ n: this.#count + 1, ts, line: clean(text) });
      },
      (complete) => {
        if (this.#closed || this.#ended) return;
        this.#stopLive = null;
        this.#end(complete);
      },
    );
  }

  #push(l: SetupLine): void {
    this.#count = l.n;
    this.#lines.push(l);
    this.#bytes += lineBytes(l);
    while (this.#bytes > this.#s.maxBytes && this.#start < this.#lines.length - 1) {
      const old = this.#lines[this.#start]!;
      this.#bytes -= lineBytes(old);
      this.#floor = old.n;
      this.#start++;
    }
    if (this.#start > 1024 && this.#start * 2 > this.#lines.length) {
      this.#lines = this.#lines.slice(this.#start);
      this.#start = 0;
    }
    this.#notify();
  }

  #end(complete: boolean): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#complete = complete;
    this.#stop();
    if (!complete) void this.#loadStored(1);
    this.#notify();
  }

  async #loadStored(attempt: number): Promise<void> {
    if (this.#storedLoading || this.#stored || this.#closed) return;
    this.#storedLoading = true;
    try {
      const [env, log] = await Promise.all([this.#s.store.environment(this.environmentId), this.#s.store.storedLog(this.environmentId)]);
      if (this.#closed) return;
      this.#stored = storedSetupLines(log, env?.completedAt ?? new Date().toISOString());
      this.#notify();
    } catch (err) {
      if (this.#closed) return;
      if (attempt >= 3) {
        this.#log.warn({ err }, "reading the stored setup log failed; its lines are not sent");
        this.#stored = [];
        this.#notify();
        return;
      }
      setTimeout(() => void this.#loadStored(attempt + 1), this.#s.pollIntervalMs).unref();
    } finally {
      this.#storedLoading = false;
    }
  }

  #stop(): void {
    if (this.#pollTimer) clearInterval(this.#pollTimer);
    if (this.#graceTimer) clearTimeout(this.#graceTimer);
    this.#pollTimer = this.#graceTimer = null;
    const stop = this.#stopLive;
    this.#stopLive = null;
    if (stop) {
      try {
        stop();
      } catch (err) {
        this.#log.warn({ err }, "stopping the setup log follow failed");
      }
    }
  }
}

/** The process's feeds, one per build, counted by the streams that hold them. */
export class SetupFeeds {
  readonly #s: SetupFeedSettings;
  readonly #feeds = new Map<string, SetupFeed>();

  constructor(settings: SetupFeedSettings) {
    this.#s = settings;
  }

  acquire(environmentId: string): SetupFeed {
    let feed = this.#feeds.get(environmentId);
    if (!feed) {
      feed = new SetupFeed(environmentId, this.#s);
      this.#feeds.set(environmentId, feed);
    }
    feed.refs++;
    if (feed.lingerTimer) clearTimeout(feed.lingerTimer);
    feed.lingerTimer = null;
    return feed;
  }

  release(feed: SetupFeed): void {
    if (--feed.refs > 0) return;
    const drop = () => {
      feed.close();
      if (this.#feeds.get(feed.environmentId) === feed) this.#feeds.delete(feed.environmentId);
    };
    if (this.#s.lingerMs <= 0) return drop();
    feed.lingerTimer = setTimeout(drop, this.#s.lingerMs);
    feed.lingerTimer.unref();
  }

  /** Builds followed now, or kept a moment after their last stream left (for metrics and tests). */
  get active(): number {
    return this.#feeds.size;
  }

  close(): void {
    for (const feed of this.#feeds.values()) feed.close();
    this.#feeds.clear();
  }
}
