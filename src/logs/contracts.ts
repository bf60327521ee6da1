/**
 * What the log hub (./hub.ts) asks of the code around it and gives to it. A stream is one
 * workload's log (a run's or an analysis's), named by the workload's id; the implementations
 * live with what they wrap (Postgres in src/db, the pod log in src/k8s, SSE in src/api), so
 * nothing here may import from those.
 */
import type { LogLine, MetricFrame } from "@codeplane/frames";

export type { LogLine, MetricFrame };

/** The workload's phase, as its kind names it (pending, running, completed, ...). */
export type StreamStatus = string;

/**
 * The live upstream for one stream: a follow of its workload's pod log (implemented elsewhere).
 * Must call onLine for each line in seq order (it may repeat lines after a reconnect; the hub
 * drops seq <= last delivered), onEnd when the stream is over for good. Returns a stop function.
 * Lines must be whole lines (pieces of a long line joined), as they are archived.
 */
export interface LiveLogSource {
  follow(id: string, afterSeq: number, onLine: (l: LogLine) => void, onEnd: () => void): () => void;
}

export interface StreamState {
  status: StreamStatus;
  /**
   * Every phase the workload has gone through, in order, ending with status: what the status
   * events replay, so a phase that came and went between two reads of the row is still sent.
   */
  history: StreamStatus[];
  /** The status is final: once the logs are complete, nothing more will come. */
  terminal: boolean;
  exitCode: number | null;
  logsComplete: boolean;
  /**
   * The workload's timeline as its API shows it (runs only: a run's `timeline`, built by the same
   * function as GET /v1/runs/{id}'s); undefined for a kind of workload without one. Read with the
   * rest of the state, in the same statement. Its events are only ever added.
   */
  timeline?: readonly TimelineEntry[];
}

/** One event of a run's timeline (src/domain/runs/run-timeline.ts TimelineEvent), as the hub passes it on. */
export interface TimelineEntry {
  readonly event: string;
  readonly at: string;
  readonly cache?: string;
}

export interface StreamEnd {
  status: StreamStatus;
  exit_code: number | null;
}

/** One streaming client, as the hub sees it. Calls never overlap and come in stream order. */
export interface Subscriber {
  /** Takes one line. false = the line was taken but no more can be taken now (backpressure). */
  line(l: LogLine): boolean;
  /**
   * Each phase the workload goes through, once and in order: those it went through before the
   * subscriber came (unless it resumes after them), then each as it happens. Every live phase
   * comes before the first line (output means the main container runs, in the last live phase);
   * a terminal phase is held back until every line has been given, so it comes right before end.
   * `id` is the event's resume position, `<last seq given>:<phase>` (see parseAfter in src/api/sse.ts).
   */
  status(s: StreamStatus, id: string): void;
  /** Every line is delivered and the workload is over; nothing else is called after this. */
  end(e: StreamEnd): void;
  /**
   * Called after line() returned false: call resume once more lines can be taken. Without it the
   * hub retries on a short timer.
   */
  onDrain?(resume: () => void): void;
  /** The hub is shutting down: close the stream without end, so the client reconnects elsewhere. */
  close?(): void;
  /**
   * One line of the install of the environment the run waits for (runs only; a subscriber without
   * it is given none). Comes after the `preprocessing` status and before any later phase or line;
   * `id` is its resume position, `<last seq given>:preprocessing/<n>`. Backpressure as line().
   */
  setup?(l: SetupLine, id: string): boolean;
  /**
   * The workload's whole timeline, each time a read of its row finds it changed (runs only; a
   * subscriber without this method is given none): once as soon as the channel knows it (on
   * connect, after the phases replayed then), then after each change. A full snapshot, not a
   * delta: the subscriber replaces what it had. Not ordered with the other calls (the row's
   * timeline may be ahead of or behind the statuses and lines given so far), except that the last
   * snapshot the channel read comes before end, and none after it. Every subscriber of a stream
   * is given the same array object for the same snapshot (so it can be encoded once). Not subject
   * to backpressure (like status).
   */
  timeline?(events: readonly TimelineEntry[]): void;
}

/** One line of an environment build's install output: `n` counts its lines from 1. */
export interface SetupLine {
  n: number;
  ts: string;
  line: string;
}

/**
 * Where a waiting run's install output comes from (runs only): the environment it waits for, and
 * that environment's row and stored log. Postgres in src/db/setup-store.ts; a fake in unit tests.
 */
export interface SetupStore {
  /**
   * The environment build the run waits for, or null when it waits for none: no environment, a
   * cache hit (the environment was ready before the run was created), or no such run.
   */
  target(runId: string): Promise<{ environmentId: string } | null>;
  /** The environment's status; null when its row is gone (deleted). */
  environment(environmentId: string): Promise<SetupEnvironmentState | null>;
  /** The stored install output (its last 256 KiB at most); null when there is none (yet). */
  storedLog(environmentId: string): Promise<string | null>;
}

export interface SetupEnvironmentState {
  status: "building" | "ready" | "failed";
  /** When the build ended (null while building): the time stored lines carry, having none of their own. */
  completedAt: string | null;
}

/**
 * The live install output of an environment's build: follows the install container of the
 * build's pod (plain text, not framed) from its first line. Calls onLine for each line in order,
 * onEnd once the follow is over: `complete` when the install ended and every one of its lines was
 * given, false when the pod went away (or never came) first. Returns a stop function.
 */
export interface SetupLogSource {
  follow(environmentId: string, onLine: (text: string, ts: string) => void, onEnd: (complete: boolean) => void): () => void;
}

/** The phases of the kind of workload a store serves, in order. */
export interface StreamPhases {
  /** Every phase: the live ones in the order they follow each other, then the terminal ones. */
  readonly all: readonly StreamStatus[];
  /** The live phases: a workload that has written output has gone through all of them. */
  readonly live: readonly StreamStatus[];
}

/** The little the hub reads from Postgres; an interface so unit tests can fake it. */
export interface LogStore {
  readonly phases: StreamPhases;
  /** Lines with seq > afterSeq in seq order, at most limit of them. */
  readLines(id: string, afterSeq: number, limit: number): Promise<LogLine[]>;
  /** The highest stored seq, 0 when none. */
  maxSeq(id: string): Promise<number>;
  /** The workload's row as the hub needs it; null when it does not exist (any more). */
  readState(id: string): Promise<StreamState | null>;
}
