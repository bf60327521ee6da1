/**
 * The per-API-process fan-out of workload logs (a run's or an analysis's) to streaming clients
 * (the SSE endpoint). A stream is one workload's log, named by the workload's id.
 *
 * For each stream with at least one subscriber the hub keeps one channel (./channel.ts): one
 * upstream follow of the workload's live log, one poll of the workload's row, and a bounded ring
 * of the newest lines (./ring.ts). Each subscriber is pumped on its own: it reads what it lacks
 * from the ring when the ring still holds it, from Postgres when not, and then receives live
 * lines as they arrive. Because every line carries a seq assigned where it was produced, "what it
 * lacks" is simply "seq > the last seq it was given", which is what makes the history/live seam,
 * resumes and slow clients exact.
 *
 * Postgres is the record (the controller archives every line there and sets logs_complete when it
 * has all of them); the live upstream only makes lines arrive sooner. A stream is over for a
 * subscriber when the workload is terminal, logs_complete is set (or a grace period after the
 * terminal status ran out) and a read of Postgres started after that has found nothing it lacks.
 *
 * What the hub needs from around it (the store, the live upstream, the subscribers) is in
 * ./contracts.ts.
 */
import type { Logger } from "../logger.ts";
import { StreamChannel, type ChannelSettings } from "./channel.ts";
import type { LiveLogSource, LogStore, SetupLogSource, SetupStore, Subscriber } from "./contracts.ts";
import { SetupFeeds } from "./setup-feed.ts";

export interface LogHubOptions {
  /** Where lines and status are read from: Postgres (src/db/log-store.ts) or, in unit tests, a fake. */
  store: LogStore;
  /** null when no cluster is reachable from this process: new lines are then polled from Postgres. */
  live: LiveLogSource | null;
  logger: Logger;
  /** How often the workload's row is read for status changes; default 1000 ms. */
  pollIntervalMs?: number;
  /** How many recent lines each followed stream keeps in memory; default 5000. */
  ringSize?: number;
  /** How often Postgres is polled for new lines when there is no live upstream (or it ended), and retried while the archiver lags; default 500 ms. */
  dbPollIntervalMs?: number;
  /** How long after a terminal status a stream waits for logs_complete before ending with what is stored; default 30 s. */
  terminalGraceMs?: number;
  /** Rows per history read; default 1000. */
  pageSize?: number;
  /**
   * How long a subscriber that fell behind the ring waits for the archiver to store the lines it
   * lacks before skipping to the ring (lines past a configured size are never stored); default 30 s.
   */
  archiveWaitMs?: number;
  /**
   * The install output of the environment a run waits for (the `setup` events; runs only). One
   * follow per build is shared by every stream of this hub (./setup-feed.ts).
   */
  setup?: SetupOptions;
}

export interface SetupOptions {
  store: SetupStore;
  /** null when no cluster is reachable from this process: lines then come from the stored log once the build ends. */
  live: SetupLogSource | null;
  /** The phase the setup happens in: a run's `preprocessing`. */
  phase: string;
  /** How often a followed build's environment row is read; default 1000 ms. */
  pollIntervalMs?: number;
  /** How long a follow may go on after the build's row has left `building`; default 10 s. */
  endGraceMs?: number;
  /** The newest install output kept in memory per build; default 4 MiB. */
  maxBytes?: number;
  /** How long setup lines still on their way may hold back the phase after the setup phase; default 15 s. */
  closeWaitMs?: number;
  /** How long a build's feed (its lines, its follow) outlives the last stream that held it; default 30 s. */
  lingerMs?: number;
}

export class LogHub {
  #settings: ChannelSettings;
  #channels = new Map<string, StreamChannel>();
  #setupFeeds: SetupFeeds | null = null;
  #closed = false;

  constructor(opts: LogHubOptions) {
    const store = opts.store;
    const ringSize = opts.ringSize ?? 5000;
    if (!Number.isInteger(ringSize) || ringSize < 1) throw new Error("ringSize must be a positive integer");
    this.#settings = {
      store,
      live: opts.live,
      logger: opts.logger,
      pollIntervalMs: opts.pollIntervalMs ?? 1000,
      ringSize,
      dbPollIntervalMs: opts.dbPollIntervalMs ?? 500,
      terminalGraceMs: opts.terminalGraceMs ?? 30_000,
      pageSize: opts.pageSize ?? 1000,
      archiveWaitMs: opts.archiveWaitMs ?? 30_000,
      setup: null,
    };
    const setup = opts.setup;
    if (setup) {
      this.#setupFeeds = new SetupFeeds({
        store: setup.store,
        live: setup.live,
        logger: opts.logger.child({ component: "setup-logs" }),
        pollIntervalMs: setup.pollIntervalMs ?? 1000,
        endGraceMs: setup.endGraceMs ?? 10_000,
        maxBytes: setup.maxBytes ?? 4 * 1024 * 1024,
        lingerMs: setup.lingerMs ?? 30_000,
      });
      this.#settings.setup = { store: setup.store, feeds: this.#setupFeeds, phase: setup.phase, closeWaitMs: setup.closeWaitMs ?? 15_000 };
    }
  }

  /**
   * Streams lines with seq > afterSeq, then live lines, then end, with the workload's phases
   * (those after afterPhase, when the subscriber resumes after a status event). Returns the
   * unsubscribe function (idempotent). afterSetup: the setup line (n) resumed after, with
   * afterPhase the setup phase.
   */
  subscribe(id: string, afterSeq: number, sink: Subscriber, afterPhase: string | null = null, afterSetup: number | null = null): () => void {
    if (this.#closed) throw new Error("log hub is closed");
    let channel = this.#channels.get(id);
    if (!channel) {
      channel = new StreamChannel(id, this.#settings, () => this.#channels.delete(id));
      this.#channels.set(id, channel);
    }
    const sub = channel.add(afterSeq, sink, afterPhase, afterSetup);
    const ch = channel;
    return () => ch.remove(sub);
  }

  /** Number of streams with an open channel (an upstream follow); for metrics and tests. */
  get activeStreams(): number {
    return this.#channels.size;
  }

  /** Number of environment builds whose install output is followed for this hub's streams; for metrics and tests. */
  get activeSetupFeeds(): number {
    return this.#setupFeeds?.active ?? 0;
  }

  /** Stops every upstream and timer and asks every stream to close (without end). */
  close(): void {
    this.#closed = true;
    for (const channel of [...this.#channels.values()]) channel.shutdown();
    this.#channels.clear();
    this.#setupFeeds?.close();
  }
}
