import { RUN_EVENT_STREAMS_PER_ACCOUNT } from "../../config.ts";
import type { Db } from "../../db/database.ts";
import type { ChannelHandlers } from "../../db/notifications.ts";
import type { Logger } from "../../logger.ts";
import { DomainError } from "../errors.ts";
import { accountsChangedSince, currentPosition, currentSnapshot, readChanges, seenBy, type LookFrom, type RunChange } from "./run-changes.ts";
import { queuePositions, toRun } from "./run-rows.ts";
import type { Run } from "./runs.schemas.ts";

// The account's run feed (GET /v1/runs/events), fanned out per API process:
// one read of every account's changed runs a second (run-changes.ts), however
// many streams are open, each stream given the changes of its own account that
// pass its filters. Every replica reads Postgres itself, so it sees what any
// replica or the controller wrote, with no coordination between them; PGlite
// (one process) is read the same way.
//
// A stream resumes from a position (its last event's id): it is first sent the
// current state of its account's runs that changed since then (read after the
// stream joined, so a change made meanwhile is in that read or in a later
// look), then what each look finds. A position is put only on the last event
// of what one read gave, so a client that drops in the middle resumes before
// all of it: a run's state may come twice, never be missed.

export type RunFeedEvent = { kind: "run"; run: Run } | { kind: "deleted"; run_id: string; repository_id: string };

/** Where a stream's events go (src/api/run-events.ts writes them as Server-Sent Events). */
export interface RunFeedSink {
  /** Changes, in the order they were read; `position` goes on the last one (the client resumes from it). */
  events(events: RunFeedEvent[], position: string): void;
  /** The stream is live from `position` (after the changes since its resume point). */
  ready(position: string): void;
  /** Too much changed to send one by one: read the list again; the stream goes on from `position`. */
  reset(position: string): void;
  /** The process is shutting down: end the response (the client reconnects, perhaps to another replica). */
  close(): void;
}

export interface RunFeedFilter {
  accountId: string;
  repositoryId?: string | undefined;
  /** Runs that are, or have been, in this status: so a client also hears of one that left it. */
  status?: string | undefined;
}

export interface RunFeedOptions {
  db: Db;
  logger: Logger;
  /** Open streams per account in this process (config.runEvents.streamsPerAccount); default STREAMS_PER_ACCOUNT. */
  maxStreamsPerAccount?: number;
  /** How often this process reads what changed; default 1000 ms. */
  pollMs?: number;
  /** Runs a resume or a look may bring before a reset is sent instead; default 1000 and 10,000. */
  resumeLimit?: number;
  pollLimit?: number;
}

/**
 * Open streams per account and process unless configured
 * (CODEPLANE_RUN_EVENT_STREAMS_PER_ACCOUNT): one account cannot take a
 * process's connections; more streams are refused with 429.
 */
export const STREAMS_PER_ACCOUNT = RUN_EVENT_STREAMS_PER_ACCOUNT;

interface Stream {
  filter: RunFeedFilter;
  sink: RunFeedSink;
  /**
   * What looks found while the stream's resume read was under way, sent after its `ready` (or the
   * resume's own `reset`), in order: batches, and a look's reset (a client told to read its list
   * again before it was told where its stream starts would then take the older position from
   * `ready` for its list's).
   */
  held: ({ events: RunFeedEvent[]; position: string } | { reset: string })[] | null;
  /**
   * Changes its resume read sent (run id to change_xid) that a look may read
   * again: forgotten once a look's snapshot has seen them (no later look reads
   * them). A look never reads again what an earlier one read.
   */
  sent: Map<string, string>;
}

/** The channel migration 0026's trigger notifies on each change: a process listening looks at once. */
export const RUN_CHANGES_CHANNEL = "runs_changed";
/** After a notification, the look waits this long, so a burst of changes is read together. */
const WAKE_DELAY_MS = 50;

export class RunFeed implements ChannelHandlers {
  readonly #db: Db;
  readonly #logger: Logger;
  readonly #max: number;
  readonly #pollMs: number;
  readonly #resumeLimit: number;
  readonly #pollLimit: number;
  readonly #streams = new Set<Stream>();
  /** Streams per account, counted from before a stream's first read until it leaves. */
  readonly #perAccount = new Map<string, number>();
  #reserved = 0;
  /** Where the next look starts; null while no stream is open. */
  #since: LookFrom | null = null;
  #starting: Promise<void> | null = null;
  #timer: NodeJS.Timeout | null = null;
  /** When the pending look is due (ms since the epoch). */
  #timerDue = 0;
  #closed = false;
  /** A look is under way; a notification meanwhile asks for another right after it. */
  #looking = false;
  #again = false;

  constructor(o: RunFeedOptions) {
    this.#db = o.db;
    this.#logger = o.logger;
    this.#max = o.maxStreamsPerAccount ?? STREAMS_PER_ACCOUNT;
    this.#pollMs = o.pollMs ?? 1000;
    this.#resumeLimit = o.resumeLimit ?? 1000;
    this.#pollLimit = o.pollLimit ?? 10_000;
  }

  /** Changes the streams remember having sent, so as not to send them again (tests and metrics). */
  remembered(): number {
    let n = 0;
    for (const s of this.#streams) n += s.sent.size;
    return n;
  }

  /** Open streams of an account in this process (tests and metrics). */
  streams(accountId: string): number {
    return this.#perAccount.get(accountId) ?? 0;
  }

  /**
   * Refuses (429) an account at its limit, synchronously, so the route can answer
   * before it starts the stream; the reservation is released by the returned function.
   */
  reserve(accountId: string): () => void {
    if (this.#closed) throw new DomainError("unavailable", "The service is shutting down.", { retryAfterSeconds: 1 });
    const open = this.streams(accountId);
    if (open >= this.#max)
      throw new DomainError("too_many_requests", `This account has ${open} run event streams open on this server, its limit; close one first.`, {
        retryAfterSeconds: 5,
      });
    this.#perAccount.set(accountId, open + 1);
    this.#reserved++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#reserved--;
      const left = (this.#perAccount.get(accountId) ?? 1) - 1;
      if (left > 0) this.#perAccount.set(accountId, left);
      else this.#perAccount.delete(accountId);
    };
  }

  /**
   * Starts a stream (after reserve): from `after` (a position a client was given) or, when null,
   * from now. Resolves once its first events are sent; the returned function ends it.
   */
  async subscribe(filter: RunFeedFilter, sink: RunFeedSink, after: string | null): Promise<() => void> {
    await this.#ensureStarted();
    // Closed while starting: close() ended the streams it had, not this one.
    if (this.#closed) throw new DomainError("unavailable", "The service is shutting down.", { retryAfterSeconds: 1 });
    const stream: Stream = { filter, sink, held: [], sent: new Map() };
    // Joined before its first read: a change made after that read is found by a later look.
    this.#streams.add(stream);
    const leave = () => void this.#streams.delete(stream);
    try {
      if (after === null) {
        sink.ready(await currentPosition(this.#db));
      } else {
        const read = await readChanges(this.#db, after, { accountId: filter.accountId, limit: this.#resumeLimit + 1 });
        if (read.changes.length > this.#resumeLimit) sink.reset(read.position);
        else {
          const events = await this.#eventsFor(stream, read.changes, null);
          // The resume's changes, then `ready` with the position: one place a client resumes from.
          if (events.length > 0) sink.events(events, read.position);
          sink.ready(read.position);
        }
      }
    } catch (err) {
      leave();
      throw err;
    }
    // A held batch may be older than what the resume read found (a run changed
    // between the two reads): its runs are forgotten as sent, so the next look,
    // which reads them again, sends their current state after it.
    for (const batch of stream.held ?? []) {
      if ("reset" in batch) {
        sink.reset(batch.reset);
        continue;
      }
      sink.events(batch.events, batch.position);
      for (const e of batch.events) stream.sent.delete(e.kind === "run" ? e.run.run_id : e.run_id);
    }
    stream.held = null;
    return leave;
  }

  /** Ends every stream (their clients reconnect elsewhere) and stops reading. */
  close(): void {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    for (const s of this.#streams) s.sink.close();
    this.#streams.clear();
  }

  /** A run changed (Postgres' notification, with a LISTEN on a server): look soon rather than at the next second. */
  onNotify(): void {
    if (this.#since === null || this.#closed) return;
    if (this.#looking) {
      this.#again = true;
      return;
    }
    // A throttle, not a debounce: notifications closer together than the delay
    // must not push the look back for ever. Only a later one (the next
    // second's) is brought forward.
    if (this.#timer && this.#timerDue <= Date.now() + WAKE_DELAY_MS) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#schedule(WAKE_DELAY_MS);
  }

  // The looks go on whether or not the LISTEN is in place: notifications only make them sooner.
  onListening(): void {}
  onLost(): void {}

  async #ensureStarted(): Promise<void> {
    if (this.#since !== null) return;
    this.#starting ??= currentSnapshot(this.#db)
      .then(({ next }) => {
        this.#since = next;
        this.#schedule();
      })
      .finally(() => (this.#starting = null));
    await this.#starting;
  }

  #schedule(delay = this.#pollMs): void {
    if (this.#timer !== null || this.#closed) return;
    this.#timerDue = Date.now() + delay;
    this.#timer = setTimeout(() => void this.#tick(), delay);
  }

  async #tick(): Promise<void> {
    this.#timer = null;
    // No stream open or starting: stop; the next one starts from its own now.
    if (this.#reserved === 0) {
      this.#since = null;
      return;
    }
    this.#looking = true;
    this.#again = false;
    try {
      await this.#look();
    } catch (err) {
      if (!this.#closed) this.#logger.warn({ err }, "reading the runs that changed failed; trying again");
    } finally {
      this.#looking = false;
    }
    this.#schedule(this.#again ? WAKE_DELAY_MS : this.#pollMs);
  }

  async #look(): Promise<void> {
    // The streams as this read begins. One that joins later reads for itself (its resume, or its
    // position) after this read, so it is not sent what this read found: that can be older than
    // what its own read sent it. One still in its resume now may finish it before this look reaches
    // it (the look waits on the database for each stream): what it is sent then may be older than
    // what its resume sent, so, as with a held batch, its runs are forgotten as sent and the next
    // look, which reads them again, sends their current state.
    const streams = [...this.#streams].map((s) => ({ s, resuming: s.held !== null }));
    const read = await readChanges(this.#db, this.#since!, { limit: this.#pollLimit + 1 });
    if (read.changes.length > this.#pollLimit) {
      // A bulk change (an operator's update of every run): each client of an account whose runs
      // changed reads its list again; the other accounts' streams had nothing to be sent.
      const accounts = await accountsChangedSince(this.#db, this.#since!, [...new Set(streams.map(({ s }) => s.filter.accountId))]);
      for (const { s } of streams) {
        if (!this.#streams.has(s) || !accounts.has(s.filter.accountId)) continue;
        if (s.held) s.held.push({ reset: read.position });
        else s.sink.reset(read.position);
      }
    } else if (read.changes.length > 0) {
      for (const { s, resuming } of streams) {
        if (!this.#streams.has(s)) continue;
        const events = await this.#eventsFor(s, read.changes, read.next);
        if (events.length === 0) continue;
        if (s.held) s.held.push({ events, position: read.position });
        else {
          s.sink.events(events, read.position);
          if (resuming) for (const e of events) s.sent.delete(e.kind === "run" ? e.run.run_id : e.run_id);
        }
      }
    }
    this.#since = read.next;
  }

  /**
   * The stream's events among the changes: its account's, through its filters, not sent already.
   * `look`: where the look that read them goes on from; null for the stream's resume read.
   */
  async #eventsFor(s: Stream, changes: readonly RunChange[], look: LookFrom | null): Promise<RunFeedEvent[]> {
    const f = s.filter;
    const mine = changes.filter(
      (c) =>
        c.row.account_id === f.accountId &&
        (f.repositoryId === undefined || c.row.repository_id === f.repositoryId) &&
        (f.status === undefined || c.phases.includes(f.status)) &&
        s.sent.get(c.row.id) !== c.row.change_xid,
    );
    if (look === null) {
      for (const c of mine) if (c.row.change_xid !== null) s.sent.set(c.row.id, c.row.change_xid);
    } else for (const [id, xid] of s.sent) if (seenBy(look, xid)) s.sent.delete(id);
    if (mine.length === 0) return [];
    const live = mine.filter((c) => c.row.deleted_at === null).map((c) => c.row);
    const positions = await queuePositions(this.#db, f.accountId, live);
    return mine.map((c) =>
      c.row.deleted_at === null ? { kind: "run", run: toRun(c.row, positions) } : { kind: "deleted", run_id: c.row.id, repository_id: c.row.repository_id },
    );
  }
}
