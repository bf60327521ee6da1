import type { Logger } from "../logger.ts";
import type {
  LiveLogSource,
  LogLine,
  LogStore,
  SetupLine,
  SetupStore,
  StreamEnd,
  StreamPhases,
  StreamState,
  StreamStatus,
  Subscriber,
  TimelineEntry,
} from "./contracts.ts";
import { Ring } from "./ring.ts";
import type { SetupFeed, SetupFeeds } from "./setup-feed.ts";
import { StorePoller } from "./store-poller.ts";

/** The hub's options with defaults filled in; shared by all of its channels. */
export interface ChannelSettings {
  store: LogStore;
  live: LiveLogSource | null;
  logger: Logger;
  pollIntervalMs: number;
  ringSize: number;
  dbPollIntervalMs: number;
  terminalGraceMs: number;
  pageSize: number;
  archiveWaitMs: number;
  /** Environment setup lines (runs only); null: the stream has none. */
  setup: ChannelSetup | null;
}

/** What the channel needs to send a run's environment setup (the `setup` events). */
export interface ChannelSetup {
  store: Pick<SetupStore, "target">;
  feeds: SetupFeeds;
  /** The phase the setup happens in (a run's `preprocessing`): its lines come after it and before any later phase. */
  phase: StreamStatus;
  /** How long a subscriber's remaining setup may hold back the phase after it and the first line; default 10 s. */
  closeWaitMs: number;
}

/** One subscriber's place in the setup lines, while it may still be given some. */
interface SetupCursor {
  /** The last setup line given (or resumed after). */
  n: number;
  /** The run is in the setup phase and the subscriber has been given it: lines may go out. */
  active: boolean;
  /** Set once the run has moved past the setup phase: when it fires, the setup closes with what it gave. */
  closeTimer: NodeJS.Timeout | null;
}

interface Sub {
  sink: Subscriber;
  /** The last seq given to the sink. */
  delivered: number;
  /** Caught up with the ring: takes lines as they arrive. */
  live: boolean;
  /** line() returned false; waiting for drain. */
  paused: boolean;
  pumping: boolean;
  done: boolean;
  /** Waiting for the archiver to store lines the ring no longer holds. */
  waitTimer: NodeJS.Timeout | null;
  /** When Postgres was first found lacking lines the ring no longer holds (null: not lacking). */
  gapSince: number | null;
  /** The phases this subscriber has been given, or had before it resumed. */
  seen: Set<StreamStatus>;
  /** Every live phase is in seen: lines may go out. */
  outputReady: boolean;
  /** The position (in phases.all) of the latest phase in seen: nothing behind it is given any more. */
  reached: number;
  /**
   * Open while the subscriber may still be given setup lines: phases after the setup phase, and
   * lines, wait until it closes. null: closed, or a stream or subscriber without setup.
   */
  setup: SetupCursor | null;
  /** The key of the timeline snapshot last given (null: none yet). */
  timelineKey: string | null;
}

/** The workload's timeline as last read, and a key that changes when it does (its JSON). */
interface TimelineSnapshot {
  events: readonly TimelineEntry[];
  key: string;
}

/**
 * One stream with at least one subscriber: one upstream follow, one poll of the workload's row
 * and one ring, shared by its subscribers, each of which is pumped on its own (see ./hub.ts).
 * Closes itself, and tells the hub through onClosed, when its last subscriber leaves.
 */
export class StreamChannel {
  readonly #id: string;
  readonly #s: ChannelSettings;
  readonly #log: Logger;
  readonly #onClosed: () => void;
  readonly #subs = new Set<Sub>();
  readonly #ring: Ring;
  #state: StreamState | null = null;
  /** The timeline of the last read that had one (runs); one array per change, shared by every subscriber. */
  #timeline: TimelineSnapshot | null = null;
  /** Upstream started, ring floor known: subscribers may be pumped. */
  #ready = false;
  /** Postgres now holds every line that will be served (logs_complete, or the grace ran out). */
  #final = false;
  #closed = false;
  /** Highest seq taken from the upstream: repeats at or below it are dropped. */
  #lastSeq = 0;
  #stopUpstream: (() => void) | null = null;
  /** Bumped per follow, so callbacks from a stopped follow are ignored. */
  #followGen = 0;
  #statusTimer: NodeJS.Timeout | null = null;
  #graceTimer: NodeJS.Timeout | null = null;
  #initTimer: NodeJS.Timeout | null = null;
  #polling = false;
  /** The build the run waits for: undefined until known, null when none (or no longer needed). */
  #feed: SetupFeed | null | undefined = undefined;
  #unlistenFeed: (() => void) | null = null;

  constructor(id: string, settings: ChannelSettings, onClosed: () => void) {
    this.#id = id;
    this.#s = settings;
    this.#log = settings.logger.child({ stream_id: id });
    this.#onClosed = onClosed;
    this.#ring = new Ring(settings.ringSize);
    void this.#init();
  }

  add(afterSeq: number, sink: Subscriber, afterPhase: StreamStatus | null = null, afterSetup: number | null = null): Sub {
    const seen = seenBefore(this.#s.store.phases, afterSeq, afterPhase);
    const setup = this.#s.setup;
    const all = this.#s.store.phases.all;
    const mayHaveSetup =
      setup !== null &&
      sink.setup !== undefined &&
      this.#feed !== null &&
      afterSeq === 0 &&
      (afterPhase === null || all.indexOf(afterPhase) <= all.indexOf(setup.phase));
    const sub: Sub = {
      sink,
      delivered: afterSeq,
      live: false,
      paused: false,
      pumping: false,
      done: false,
      waitTimer: null,
      gapSince: null,
      seen,
      outputReady: false,
      reached: -1,
      setup: mayHaveSetup ? { n: afterPhase === setup.phase ? (afterSetup ?? 0) : 0, active: false, closeTimer: null } : null,
      timelineKey: null,
    };
    for (const p of seen) sub.reached = Math.max(sub.reached, this.#s.store.phases.all.indexOf(p));
    this.#subs.add(sub);
    this.#emitStatus(sub);
    // A full snapshot, so a subscriber that reconnects is simply given the current one.
    this.#giveTimeline(sub);
    if (this.#ready) void this.#pump(sub);
    return sub;
  }

  remove(sub: Sub): void {
    if (sub.done) return;
    sub.done = true;
    if (sub.waitTimer) clearTimeout(sub.waitTimer);
    sub.waitTimer = null;
    this.#dropSetup(sub);
    this.#subs.delete(sub);
    if (this.#subs.size === 0) this.#teardown();
  }

  shutdown(): void {
    for (const sub of [...this.#subs]) {
      this.remove(sub);
      try {
        sub.sink.close?.();
      } catch (err) {
        this.#log.warn({ err }, "closing a log stream failed");
      }
    }
    this.#teardown();
  }

  async #init(): Promise<void> {
    try {
      const state = await this.#s.store.readState(this.#id);
      if (this.#closed) return;
      if (!state) return this.#vanished();
      await this.#findSetup(state);
      if (this.#closed) return;
      this.#applyState(state);
      if (!this.#final) {
        // Whatever is stored by now is read from Postgres; the upstream only has to supply what
        // comes after. Lines are archived in seq order, so nothing at or below this is missing.
        const stored = await this.#s.store.maxSeq(this.#id);
        if (this.#closed) return;
        this.#lastSeq = stored;
        this.#ring.reset(stored);
        this.#follow(this.#s.live);
        this.#statusTimer = setInterval(() => void this.#poll(), this.#s.pollIntervalMs);
        this.#statusTimer.unref();
      }
      this.#ready = true;
      for (const sub of [...this.#subs]) void this.#pump(sub);
    } catch (err) {
      if (this.#closed) return;
      this.#log.warn({ err }, "reading the workload's state for its log stream failed; retrying");
      this.#initTimer = setTimeout(() => {
        this.#initTimer = null;
        void this.#init();
      }, this.#s.pollIntervalMs);
      this.#initTimer.unref();
    }
  }

  /** Which build the run waits for, when its stream may still have setup lines to send (runs in or before the setup phase). */
  async #findSetup(state: StreamState): Promise<void> {
    const setup = this.#s.setup;
    if (this.#feed !== undefined) return;
    const all = this.#s.store.phases.all;
    if (!setup || state.terminal || all.indexOf(state.status) > all.indexOf(setup.phase)) {
      this.#feed = null;
      return;
    }
    const target = await setup.store.target(this.#id);
    if (this.#closed || this.#feed !== undefined) return;
    if (!target) {
      this.#feed = null;
      return;
    }
    const feed = setup.feeds.acquire(target.environmentId);
    this.#feed = feed;
    this.#unlistenFeed = feed.listen(() => this.#setupChanged());
  }

  /** New setup lines, the build's end, or the run's phase changed: bring the subscribers with setup up to date. */
  #setupChanged(): void {
    if (this.#closed) return;
    for (const sub of [...this.#subs]) if (sub.setup) void this.#pump(sub);
    this.#releaseSetupIfDone();
  }

  /**
   * Gives the subscriber the setup lines it lacks. true: its setup is over (closed), so phases
   * after the setup phase and lines may go out; false: not yet (or it paused or failed).
   */
  #pumpSetup(sub: Sub): boolean {
    const c = sub.setup;
    if (!c) return true;
    const feed = this.#feed;
    const state = this.#state;
    const setup = this.#s.setup;
    if (feed === null || !setup) return this.#closeSetup(sub);
    if (feed === undefined || !state) return false;
    const all = this.#s.store.phases.all;
    const at = all.indexOf(state.status);
    const setupAt = all.indexOf(setup.phase);
    const past = state.terminal || at > setupAt;
    if (!c.active) {
      // Only a subscriber that is here while the run waits in the setup phase is given setup: one that
      // comes once the command has started is not, and one that came before it waits for it.
      if (past) return this.#closeSetup(sub);
      if (at < setupAt || !sub.seen.has(setup.phase)) return false;
      c.active = true;
    }
    for (const l of feed.linesAfter(c.n)) if (!this.#giveSetup(sub, l, setup.phase)) return false;
    if (feed.ended) {
      if (feed.complete) return this.#closeSetup(sub);
      const stored = feed.stored;
      if (stored) {
        for (let i = c.n; i < stored.length; i++) if (!this.#giveSetup(sub, stored[i]!, setup.phase)) return false;
        return this.#closeSetup(sub);
      }
    }
    // A run that ended while its build goes on (cancelled, say) is given no more of it.
    if (state.terminal && !feed.ended) return this.#closeSetup(sub);
    // The command has started while lines may still be on their way: wait for them, but not for long.
    if (past && !c.closeTimer) {
      c.closeTimer = setTimeout(() => {
        c.closeTimer = null;
        if (sub.setup !== c || sub.done) return;
        this.#log.warn({ after: c.n }, "the environment's setup lines did not all arrive before the run went on; going on without them");
        this.#closeSetup(sub);
        void this.#pump(sub);
      }, setup.closeWaitMs);
      c.closeTimer.unref();
    }
    return false;
  }

  #giveSetup(sub: Sub, l: SetupLine, phase: StreamStatus): boolean {
    sub.setup!.n = l.n;
    let more: boolean;
    try {
      more = sub.sink.setup!(l, `${sub.delivered}:${phase}/${l.n}`);
    } catch (err) {
      this.#sinkFailed(sub, err);
      return false;
    }
    if (!more) this.#pause(sub);
    return more;
  }

  /** The subscriber's setup is over: the phases it held back go out. Returns whether the subscriber is still there. */
  #closeSetup(sub: Sub): boolean {
    if (!sub.setup) return !sub.done;
    this.#dropSetup(sub);
    this.#emitStatus(sub);
    this.#releaseSetupIfDone();
    return !sub.done;
  }

  #dropSetup(sub: Sub): void {
    if (sub.setup?.closeTimer) clearTimeout(sub.setup.closeTimer);
    sub.setup = null;
  }

  /** The run has moved past the setup phase and no subscriber is still being given setup: let the build's feed go. */
  #releaseSetupIfDone(force = false): void {
    const feed = this.#feed;
    if (!feed || !this.#s.setup) return;
    if (!force) {
      const state = this.#state;
      if (!state) return;
      const all = this.#s.store.phases.all;
      if (!state.terminal && all.indexOf(state.status) <= all.indexOf(this.#s.setup.phase)) return;
      for (const sub of this.#subs) if (sub.setup) return;
    }
    this.#unlistenFeed?.();
    this.#unlistenFeed = null;
    this.#feed = null;
    this.#s.setup.feeds.release(feed);
  }

  #follow(source: LiveLogSource | null): void {
    const gen = ++this.#followGen;
    const isLive = source !== null;
    const upstream = source ?? new StorePoller(this.#s.store, this.#s.dbPollIntervalMs, this.#s.pageSize, this.#log);
    this.#stopUpstream = upstream.follow(
      this.#id,
      this.#lastSeq,
      (l) => {
        if (gen === this.#followGen) this.#onLine(l);
      },
      () => {
        if (gen !== this.#followGen || this.#closed || this.#final) return;
        this.#stopUpstream = null;
        // The pod log is gone (or never came) before the workload's lines were all stored: carry on
        // from Postgres, where the controller is still archiving them.
        if (isLive) {
          this.#log.debug("live log ended before the workload's logs were complete; following Postgres");
          this.#follow(null);
        }
      },
    );
  }

  #stopFollowing(): void {
    this.#followGen++;
    const stop = this.#stopUpstream;
    this.#stopUpstream = null;
    if (stop) {
      try {
        stop();
      } catch (err) {
        this.#log.warn({ err }, "stopping the log upstream failed");
      }
    }
  }

  #onLine(l: LogLine): void {
    if (this.#closed || l.seq <= this.#lastSeq) return;
    // Postgres gives timestamps back in this form; a live line must read the same as its stored copy.
    if (!CANONICAL_TS.test(l.ts)) {
      const d = new Date(l.ts);
      if (!Number.isNaN(d.getTime())) l = { ...l, ts: d.toISOString() };
    }
    this.#lastSeq = l.seq;
    this.#ring.push(l);
    for (const sub of [...this.#subs]) {
      if (sub.live && !sub.paused && !sub.done && l.seq > sub.delivered) this.#deliver(sub, l);
    }
  }

  async #poll(): Promise<void> {
    if (this.#polling || this.#closed || this.#final) return;
    this.#polling = true;
    try {
      const state = await this.#s.store.readState(this.#id);
      if (this.#closed) return;
      if (!state) this.#vanished();
      else this.#applyState(state);
    } catch (err) {
      this.#log.warn({ err }, "polling the workload's status failed");
    } finally {
      this.#polling = false;
    }
  }

  #applyState(state: StreamState): void {
    this.#state = state;
    this.#readTimeline(state);
    for (const sub of [...this.#subs]) {
      this.#emitStatus(sub);
      this.#giveTimeline(sub);
    }
    if (this.#feed !== undefined) this.#setupChanged();
    if (!state.terminal) return;
    if (state.logsComplete) this.#makeFinal();
    else if (!this.#graceTimer && !this.#final) {
      this.#graceTimer = setTimeout(() => {
        this.#graceTimer = null;
        this.#log.warn(
          { grace_ms: this.#s.terminalGraceMs },
          "workload ended but its logs were not marked complete in time; ending streams with what is stored",
        );
        this.#makeFinal();
      }, this.#s.terminalGraceMs);
      this.#graceTimer.unref();
    }
  }

  #makeFinal(): void {
    if (this.#final) return;
    this.#final = true;
    if (this.#graceTimer) clearTimeout(this.#graceTimer);
    this.#graceTimer = null;
    if (this.#statusTimer) clearInterval(this.#statusTimer);
    this.#statusTimer = null;
    this.#stopFollowing();
    if (!this.#ready) return;
    // Every subscriber now reads Postgres once more for anything the upstream did not bring, then ends.
    for (const sub of [...this.#subs]) {
      if (sub.done || sub.paused) continue;
      if (sub.waitTimer) clearTimeout(sub.waitTimer);
      sub.waitTimer = null;
      sub.live = false;
      void this.#pump(sub);
    }
  }

  /** The workload's row is gone (deleted, and its lines with it): end with what was last known. */
  #vanished(): void {
    this.#log.info("workload disappeared while its log was streamed");
    const end: StreamEnd = { status: this.#state?.status ?? "cancelled", exit_code: this.#state?.exitCode ?? null };
    for (const sub of [...this.#subs]) this.#end(sub, end);
    this.#teardown();
  }

  /**
   * Keeps the read's timeline when it differs from the last one (compared by its JSON, a few
   * hundred bytes once per read of the row, whatever the number of subscribers).
   */
  #readTimeline(state: StreamState): void {
    if (state.timeline === undefined) return;
    const key = JSON.stringify(state.timeline);
    if (key !== this.#timeline?.key) this.#timeline = { events: state.timeline, key };
  }

  /** Gives the subscriber the timeline as last read, unless it has it already. */
  #giveTimeline(sub: Sub): void {
    const t = this.#timeline;
    if (!t || sub.done || !sub.sink.timeline || sub.timelineKey === t.key) return;
    sub.timelineKey = t.key;
    try {
      sub.sink.timeline(t.events);
    } catch (err) {
      this.#sinkFailed(sub, err);
    }
  }

  /** Gives the subscriber the phases it lacks, in order; a terminal one only when ending. */
  #emitStatus(sub: Sub, ending = false): void {
    const state = this.#state;
    if (!state) return;
    const all = this.#s.store.phases.all;
    // While the subscriber may still be given setup lines, the phases after the setup phase wait.
    const holdAfter = sub.setup && this.#s.setup ? all.indexOf(this.#s.setup.phase) : Infinity;
    for (const phase of state.history) {
      if (sub.done) return;
      if (sub.seen.has(phase)) continue;
      if (all.indexOf(phase) > holdAfter) return;
      if (!ending && state.terminal && phase === state.status) return;
      // Recorded late (it came and went before a later one reached the subscriber): out of order now.
      if (this.#s.store.phases.all.indexOf(phase) < sub.reached) continue;
      this.#givePhase(sub, phase);
    }
  }

  #givePhase(sub: Sub, phase: StreamStatus): void {
    sub.seen.add(phase);
    sub.reached = Math.max(sub.reached, this.#s.store.phases.all.indexOf(phase));
    try {
      sub.sink.status(phase, `${sub.delivered}:${phase}`);
    } catch (err) {
      this.#sinkFailed(sub, err);
    }
  }

  /**
   * Output is written in the last live phase, and the row may not say so yet
   * (the live log is quicker than the controller): the live phases go first,
   * so no subscriber ever sees a line before the phase it was written in.
   */
  #givePhasesBeforeOutput(sub: Sub): void {
    for (const phase of this.#s.store.phases.live) if (!sub.done && !sub.seen.has(phase)) this.#givePhase(sub, phase);
    sub.outputReady = true;
  }

  /** Gives one line; false when the subscriber paused or failed. */
  #deliver(sub: Sub, l: LogLine): boolean {
    if (!sub.outputReady) {
      this.#givePhasesBeforeOutput(sub);
      if (sub.done) return false;
    }
    sub.delivered = l.seq;
    let more: boolean;
    try {
      more = sub.sink.line(l);
    } catch (err) {
      this.#sinkFailed(sub, err);
      return false;
    }
    if (!more) this.#pause(sub);
    return more;
  }

  #pause(sub: Sub): void {
    sub.paused = true;
    sub.live = false;
    let resumed = false;
    // Always on a later turn: a sink may call resume from inside onDrain, while a pump is running.
    const resume = () => {
      if (resumed || sub.done) return;
      resumed = true;
      setImmediate(() => {
        if (sub.done) return;
        sub.paused = false;
        void this.#pump(sub);
      });
    };
    if (sub.sink.onDrain) sub.sink.onDrain(resume);
    else setTimeout(resume, 10).unref();
  }

  /** Delivers the ring's lines after what the subscriber has; false when it paused. */
  #deliverRing(sub: Sub): boolean {
    for (let i = this.#ring.firstAfter(sub.delivered); i < this.#ring.length; i++) {
      if (!this.#deliver(sub, this.#ring.at(i))) return false;
    }
    return true;
  }

  /**
   * Brings one subscriber up to date: Postgres pages while the ring no longer holds what it
   * lacks, then the ring, then live. Synchronous from the ring check to "live", so no line can
   * slip in between. When the channel is final, ends the subscriber once Postgres has nothing more.
   */
  async #pump(sub: Sub): Promise<void> {
    if (sub.pumping || sub.done || sub.paused || !this.#ready) return;
    sub.pumping = true;
    try {
      if (sub.setup && !this.#pumpSetup(sub)) return;
      while (!sub.done && !sub.paused && !this.#closed) {
        const final = this.#final;
        if (!final && sub.delivered >= this.#ring.floor) {
          if (this.#deliverRing(sub)) sub.live = true;
          return;
        }
        let page: LogLine[];
        try {
          page = await this.#s.store.readLines(this.#id, sub.delivered, this.#s.pageSize);
        } catch (err) {
          this.#log.warn({ err }, "reading stored log lines failed; retrying");
          this.#wait(sub);
          return;
        }
        if (sub.done || this.#closed) return;
        if (page.length > 0) sub.gapSince = null;
        for (const l of page) {
          if (l.seq > sub.delivered && !this.#deliver(sub, l)) return;
        }
        if (page.length >= this.#s.pageSize) continue;
        if (final) {
          // A read begun after the stream became final found nothing more. Anything the upstream
          // brought beyond that (only possible when the grace ran out) still goes out.
          if (this.#deliverRing(sub)) this.#end(sub, { status: this.#state!.status, exit_code: this.#state!.exitCode });
          return;
        }
        if (this.#final || sub.delivered >= this.#ring.floor) continue;
        this.#bridgeGap(sub);
        return;
      }
    } finally {
      sub.pumping = false;
    }
  }

  /**
   * The ring has moved past lines the archiver has not stored yet: wait for them, but not
   * forever, since lines past the stored size limit never will be.
   */
  #bridgeGap(sub: Sub): void {
    const now = Date.now();
    sub.gapSince ??= now;
    if (now - sub.gapSince < this.#s.archiveWaitMs) {
      this.#wait(sub);
      return;
    }
    this.#log.warn({ after_seq: sub.delivered, ring_floor: this.#ring.floor }, "stored log lines never caught up; skipping to the newest lines");
    sub.gapSince = null;
    if (this.#deliverRing(sub)) sub.live = true;
  }

  #wait(sub: Sub): void {
    if (sub.waitTimer || sub.done) return;
    sub.waitTimer = setTimeout(() => {
      sub.waitTimer = null;
      void this.#pump(sub);
    }, this.#s.dbPollIntervalMs);
    sub.waitTimer.unref();
  }

  #end(sub: Sub, end: StreamEnd): void {
    if (sub.done) return;
    this.#dropSetup(sub);
    // The last timeline read goes before the terminal phase (which comes right before end); nothing after end.
    this.#giveTimeline(sub);
    if (sub.done) return;
    this.#emitStatus(sub, true);
    this.remove(sub);
    try {
      sub.sink.end(end);
    } catch (err) {
      this.#log.warn({ err }, "ending a log stream failed");
    }
  }

  #sinkFailed(sub: Sub, err: unknown): void {
    this.#log.warn({ err }, "log stream subscriber failed; dropping it");
    this.remove(sub);
  }

  #teardown(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopFollowing();
    this.#releaseSetupIfDone(true);
    if (this.#statusTimer) clearInterval(this.#statusTimer);
    if (this.#graceTimer) clearTimeout(this.#graceTimer);
    if (this.#initTimer) clearTimeout(this.#initTimer);
    this.#statusTimer = this.#graceTimer = this.#initTimer = null;
    for (const sub of this.#subs) {
      sub.done = true;
      if (sub.waitTimer) clearTimeout(sub.waitTimer);
      this.#dropSetup(sub);
    }
    this.#subs.clear();
    this.#onClosed();
  }
}

/**
 * The phases a subscriber already has when it starts: those up to the one it
 * resumes after, or (resuming after a line) every live phase, which always
 * comes before the first line; nothing when it starts from the beginning.
 */
export function seenBefore(phases: StreamPhases, afterSeq: number, afterPhase: StreamStatus | null): Set<StreamStatus> {
  if (afterPhase !== null) {
    const i = phases.all.indexOf(afterPhase);
    // Terminal phases (after the last live one) exclude one another: after one, every phase has been seen.
    const terminal = i > phases.all.indexOf(phases.live.at(-1) ?? "");
    return new Set(i < 0 ? [] : terminal ? phases.all : phases.all.slice(0, i + 1));
  }
  return new Set(afterSeq > 0 ? phases.live : []);
}

const CANONICAL_TS = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$/;
