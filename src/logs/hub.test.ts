import { afterEach, describe, expect, it, vi } from "vitest";
import { createRootLogger } from "../logger.ts";
import type { LiveLogSource, LogLine, LogStore, StreamEnd, StreamState, StreamStatus, Subscriber, TimelineEntry } from "./contracts.ts";
import { LogHub, type LogHubOptions } from "./hub.ts";

const TS = "2026-11-22T04:13:09.123Z";
const ID = "0190f0f0-0000-7000-8000-000000000001";
const logger = createRootLogger("silent");

const mk = (seq: number, stream: "stdout" | "stderr" = seq % 3 === 0 ? "stderr" : "stdout"): LogLine => ({ seq, stream, ts: TS, line: `line ${seq}` });
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Postgres as the hub sees it. A gate holds reads open after they took their snapshot. */
class FakeStore implements LogStore {
  // A lifecycle of its own: output is written in running; preprocessing, when a test sets it, comes before.
  phases = { all: ["preprocessing", "running", "completed", "failed", "cancelled"], live: ["running"] };
  lines = new Map<string, LogLine[]>();
  states = new Map<string, StreamState | null>();
  readLinesCalls = 0;
  readStateCalls = 0;
  #gate: { promise: Promise<void>; open: () => void } | null = null;

  archive(id: string, ...seqs: number[]) {
    const list = this.lines.get(id) ?? [];
    for (const s of seqs) list.push(mk(s));
    list.sort((a, b) => a.seq - b.seq);
    this.lines.set(id, list);
  }
  setState(id: string, state: Partial<StreamState> | null) {
    const prev = this.states.get(id) ?? { status: "running", history: [], terminal: false, exitCode: null, logsComplete: false };
    const next = { ...prev, ...state };
    // Every status written is recorded, as Postgres does.
    if (!next.history.includes(next.status)) next.history = [...next.history, next.status];
    // The store, not the hub, knows which phases are final (the workload's lifecycle).
    this.states.set(id, state === null ? null : { ...next, terminal: ["completed", "failed", "cancelled"].includes(next.status) });
  }
  closeGate() {
    let open!: () => void;
    const promise = new Promise<void>((r) => (open = r));
    this.#gate = { promise, open };
  }
  openGate() {
    const g = this.#gate;
    this.#gate = null;
    g?.open();
  }
  async readLines(id: string, afterSeq: number, limit: number) {
    this.readLinesCalls++;
    const snapshot = (this.lines.get(id) ?? []).filter((l) => l.seq > afterSeq).slice(0, limit);
    if (this.#gate) await this.#gate.promise;
    return snapshot;
  }
  async maxSeq(id: string) {
    return (this.lines.get(id) ?? []).at(-1)?.seq ?? 0;
  }
  async readState(id: string) {
    this.readStateCalls++;
    return this.states.has(id) ? (this.states.get(id) ?? null) : null;
  }
}

interface Follow {
  id: string;
  afterSeq: number;
  onLine: (l: LogLine) => void;
  onEnd: () => void;
  stopped: boolean;
}

/** A pod log: a follow first replays what was written after afterSeq (a turn later), then new lines. */
class FakeLive implements LiveLogSource {
  follows: Follow[] = [];
  written = new Map<string, number[]>();
  follow(id: string, afterSeq: number, onLine: (l: LogLine) => void, onEnd: () => void) {
    const f: Follow = { id, afterSeq, onLine, onEnd, stopped: false };
    const backlog = (this.written.get(id) ?? []).filter((s) => s > afterSeq);
    queueMicrotask(() => {
      this.follows.push(f);
      for (const s of backlog) if (!f.stopped) onLine(mk(s));
    });
    return () => void (f.stopped = true);
  }
  active(id = ID) {
    return this.follows.filter((f) => f.id === id && !f.stopped);
  }
  /** Writes lines to the log (seqs in order; a repeat stands for an upstream reconnect replaying). */
  emit(id: string, ...seqs: number[]) {
    const w = this.written.get(id) ?? [];
    for (const s of seqs) if (s > (w.at(-1) ?? 0)) w.push(s);
    this.written.set(id, w);
    for (const f of this.active(id)) for (const s of seqs) f.onLine(mk(s));
  }
}

type Event = { t: "line"; l: LogLine } | { t: "status"; s: StreamStatus } | { t: "end"; e: StreamEnd } | { t: "timeline"; events: readonly TimelineEntry[] };

/** A sink that records events; `takeUntilFull` lines are taken before it reports backpressure. */
class Recorder implements Subscriber {
  events: Event[] = [];
  resumeFn: (() => void) | null = null;
  closed = false;
  room: number;
  constructor(room = Infinity) {
    this.room = room;
  }
  line(l: LogLine) {
    this.events.push({ t: "line", l });
    return --this.room > 0;
  }
  status(s: StreamStatus, _id?: string) {
    this.events.push({ t: "status", s });
  }
  end(e: StreamEnd) {
    this.events.push({ t: "end", e });
  }
  onDrain(resume: () => void) {
    this.resumeFn = resume;
  }
  close() {
    this.closed = true;
  }
  drain(room = Infinity) {
    this.room = room;
    const r = this.resumeFn;
    this.resumeFn = null;
    r?.();
  }
  get seqs() {
    return this.events.flatMap((e) => (e.t === "line" ? [e.l.seq] : []));
  }
  get statuses() {
    return this.events.flatMap((e) => (e.t === "status" ? [e.s] : []));
  }
  get ended(): StreamEnd | null {
    const last = this.events.at(-1);
    return last?.t === "end" ? last.e : null;
  }
}

let hubs: LogHub[] = [];
afterEach(() => {
  for (const h of hubs) h.close();
  hubs = [];
});

function setup(opts: Partial<LogHubOptions> = {}) {
  const store = new FakeStore();
  const live = new FakeLive();
  const hub = new LogHub({ store, live, logger, pollIntervalMs: 10, dbPollIntervalMs: 10, ...opts });
  hubs.push(hub);
  return { store, live, hub };
}

const until = (fn: () => void) => vi.waitFor(fn, { timeout: 2000, interval: 5 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("LogHub", () => {
  it("joins history and live lines without a gap or a duplicate at the seam", async () => {
    const { store, live, hub } = setup({ pageSize: 4 });
    store.setState(ID, { status: "running" });
    store.archive(ID, ...range(1, 10));
    store.closeGate();
    const r = new Recorder();
    hub.subscribe(ID, 0, r);
    await until(() => expect(live.active()).toHaveLength(1));
    expect(live.active()[0]!.afterSeq).toBe(10);
    await until(() => expect(store.readLinesCalls).toBe(1));
    // While the first history page is being read: live lines, only some of them archived yet.
    live.emit(ID, 11, 12, 13, 14, 15);
    store.archive(ID, 11, 12, 13);
    expect(r.seqs).toEqual([]);
    store.openGate();
    await until(() => expect(r.seqs).toEqual(range(1, 15)));
    live.emit(ID, 16, 17);
    expect(r.seqs).toEqual(range(1, 17));
    expect(r.statuses).toEqual(["running"]);
    expect(r.ended).toBeNull();
  });

  it("resumes after afterSeq, from Postgres or from the ring", async () => {
    const { store, live, hub } = setup();
    store.setState(ID, { status: "running" });
    store.archive(ID, ...range(1, 10));
    const a = new Recorder();
    hub.subscribe(ID, 7, a);
    await until(() => expect(a.seqs).toEqual([8, 9, 10]));
    live.emit(ID, ...range(11, 15));
    expect(a.seqs).toEqual(range(8, 15));
    const reads = store.readLinesCalls;
    const b = new Recorder();
    hub.subscribe(ID, 12, b);
    await until(() => expect(b.seqs).toEqual([13, 14, 15]));
    // Served from the ring: a late joiner near the head costs no query.
    expect(store.readLinesCalls).toBe(reads);
    live.emit(ID, 16);
    expect(a.seqs.at(-1)).toBe(16);
    expect(b.seqs).toEqual([13, 14, 15, 16]);
  });

  it("shares one upstream per stream among its subscribers and stops it after the last leaves", async () => {
    const { store, live, hub } = setup();
    const other = "0190f0f0-0000-7000-8000-000000000002";
    store.setState(ID, { status: "running" });
    store.setState(other, { status: "running" });
    const subs = Array.from({ length: 5 }, () => new Recorder());
    const unsubs = subs.map((r) => hub.subscribe(ID, 0, r));
    const o = new Recorder();
    hub.subscribe(other, 0, o);
    await until(() => expect(live.follows).toHaveLength(2));
    await until(() => expect(subs.every((r) => r.statuses.length === 1)).toBe(true));
    live.emit(ID, 1, 2);
    await until(() => expect(subs.every((r) => r.seqs.join() === "1,2")).toBe(true));
    expect(o.seqs).toEqual([]);
    for (const u of unsubs.slice(0, 4)) u();
    expect(live.active()).toHaveLength(1);
    unsubs[4]!();
    unsubs[4]!(); // idempotent
    expect(live.active()).toHaveLength(0);
    expect(live.active(other)).toHaveLength(1);
    expect(hub.activeStreams).toBe(1);
    const again = new Recorder();
    hub.subscribe(ID, 0, again);
    await until(() => expect(live.active()).toHaveLength(1));
    expect(live.follows).toHaveLength(3);
  });

  it("gives a client joining after the end the stored lines, then end, without following", async () => {
    const { store, live, hub } = setup({ pageSize: 2 });
    store.setState(ID, { status: "completed", exitCode: 0, logsComplete: true });
    store.archive(ID, ...range(1, 5));
    const r = new Recorder();
    hub.subscribe(ID, 0, r);
    await until(() => expect(r.ended).toEqual({ status: "completed", exit_code: 0 }));
    // The phase output is written in comes before the first line (the output proves it happened,
    // even when the row only says completed); a terminal status after the last line, right before end.
    expect(r.events.map((e) => (e.t === "line" ? e.l.seq : e.t))).toEqual(["status", 1, 2, 3, 4, 5, "status", "end"]);
    expect(r.statuses).toEqual(["running", "completed"]);
    const resumed = new Recorder();
    hub.subscribe(ID, 3, resumed);
    await until(() => expect(resumed.ended).not.toBeNull());
    expect(resumed.seqs).toEqual([4, 5]);
    expect(live.follows).toHaveLength(0);
    expect(hub.activeStreams).toBe(0);
  });

  it("keeps a slow subscriber from delaying a fast one, and catches it up exactly from Postgres", async () => {
    const { store, live, hub } = setup({ ringSize: 4, pageSize: 5 });
    store.setState(ID, { status: "running" });
    const fast = new Recorder();
    const slow = new Recorder(3);
    hub.subscribe(ID, 0, fast);
    hub.subscribe(ID, 0, slow);
    await until(() => expect(live.active()).toHaveLength(1));
    await until(() => expect(slow.statuses).toEqual(["running"]));
    for (const s of range(1, 20)) {
      store.archive(ID, s);
      live.emit(ID, s);
    }
    expect(fast.seqs).toEqual(range(1, 20));
    expect(slow.seqs).toEqual([1, 2, 3]);
    expect(slow.resumeFn).not.toBeNull();
    const reads = store.readLinesCalls;
    slow.drain();
    await until(() => expect(slow.seqs).toEqual(range(1, 20)));
    expect(store.readLinesCalls).toBeGreaterThan(reads); // 4..16 had left the ring
    live.emit(ID, 21);
    expect(fast.seqs.at(-1)).toBe(21);
    expect(slow.seqs).toEqual(range(1, 21));
  });

  it("catches a slow subscriber up from the ring when the ring still holds what it lacks", async () => {
    const { store, live, hub } = setup();
    store.setState(ID, { status: "running" });
    const slow = new Recorder(2);
    hub.subscribe(ID, 0, slow);
    await until(() => expect(live.active()).toHaveLength(1));
    await until(() => expect(slow.statuses).toHaveLength(1));
    live.emit(ID, ...range(1, 10));
    expect(slow.seqs).toEqual([1, 2]);
    const reads = store.readLinesCalls;
    slow.drain(3); // takes three more, then is full again
    await until(() => expect(slow.seqs).toEqual(range(1, 5)));
    slow.drain();
    await until(() => expect(slow.seqs).toEqual(range(1, 10)));
    expect(store.readLinesCalls).toBe(reads);
  });

  it("drops lines an upstream repeats after reconnecting", async () => {
    const { store, live, hub } = setup();
    store.setState(ID, { status: "running" });
    const r = new Recorder();
    hub.subscribe(ID, 0, r);
    await until(() => expect(live.active()).toHaveLength(1));
    await until(() => expect(r.statuses).toHaveLength(1));
    live.emit(ID, 1, 2, 3, 1, 2, 3, 4, 2, 5);
    expect(r.seqs).toEqual([1, 2, 3, 4, 5]);
  });

  it("gives live lines the timestamp form Postgres gives back", async () => {
    const { store, live, hub } = setup();
    store.setState(ID, { status: "running" });
    const r = new Recorder();
    hub.subscribe(ID, 0, r);
    await until(() => expect(live.active()).toHaveLength(1));
    live.active()[0]!.onLine({ seq: 1, stream: "stdout", ts: "2026-11-22T04:13:09Z", line: "a" });
    live.active()[0]!.onLine({ seq: 2, stream: "stdout", ts: "2026-11-22T04:13:09.123456789Z", line: "b" });
    live.active()[0]!.onLine({ seq: 3, stream: "stdout", ts: TS, line: "c" });
    expect(r.events.flatMap((e) => (e.t === "line" ? [e.l.ts] : []))).toEqual(["2026-11-22T04:13:09.000Z", "2026-11-22T04:13:09.123Z", TS]);
  });

  it("carries on from Postgres when the live upstream ends before the logs are complete", async () => {
    const { store, live, hub } = setup();
    store.setState(ID, { status: "running" });
    const r = new Recorder();
    hub.subscribe(ID, 0, r);
    await until(() => expect(live.active()).toHaveLength(1));
    live.emit(ID, 1, 2);
    store.archive(ID, 1, 2, 3, 4);
    live.active()[0]!.onEnd();
    await until(() => expect(r.seqs).toEqual([1, 2, 3, 4]));
    store.archive(ID, 5);
    await until(() => expect(r.seqs).toEqual([1, 2, 3, 4, 5]));
    store.setState(ID, { status: "completed", exitCode: 0, logsComplete: true });
    await until(() => expect(r.ended).toEqual({ status: "completed", exit_code: 0 }));
  });

  it("ends only once logs_complete is set, with the lines stored meanwhile", async () => {
    const { store, live, hub } = setup();
    store.setState(ID, { status: "running" });
    const r = new Recorder();
    hub.subscribe(ID, 0, r);
    await until(() => expect(live.active()).toHaveLength(1));
    live.emit(ID, 1, 2, 3);
    store.archive(ID, 1, 2, 3);
    store.setState(ID, { status: "completed", exitCode: 0 });
    await sleep(60);
    expect(r.ended).toBeNull();
    expect(r.statuses).toEqual(["running"]);
    // Lines the upstream never brought, stored by the controller before it marks the logs complete.
    store.archive(ID, 4, 6);
    store.setState(ID, { logsComplete: true });
    await until(() => expect(r.ended).toEqual({ status: "completed", exit_code: 0 }));
    expect(r.events.map((e) => (e.t === "line" ? e.l.seq : e.t === "status" ? e.s : e.t))).toEqual(["running", 1, 2, 3, 4, 6, "completed", "end"]);
    expect(live.active()).toHaveLength(0);
    expect(hub.activeStreams).toBe(0);
  });

  it("ends after the grace period with what is stored when logs_complete never comes", async () => {
    const { store, live, hub } = setup({ terminalGraceMs: 80 });
    store.setState(ID, { status: "running" });
    const r = new Recorder();
    hub.subscribe(ID, 0, r);
    await until(() => expect(live.active()).toHaveLength(1));
    live.emit(ID, 1, 2);
    store.archive(ID, 1, 2, 3);
    const terminalAt = Date.now();
    store.setState(ID, { status: "failed", exitCode: 2 });
    await until(() => expect(r.ended).toEqual({ status: "failed", exit_code: 2 }));
    expect(Date.now() - terminalAt).toBeGreaterThanOrEqual(70);
    expect(r.seqs).toEqual([1, 2, 3]);
  });

  it("follows Postgres alone when there is no live upstream", async () => {
    const { store, hub } = setup({ live: null });
    store.setState(ID, { status: "preprocessing" });
    store.archive(ID, 1, 2);
    const a = new Recorder();
    const b = new Recorder();
    hub.subscribe(ID, 0, a);
    hub.subscribe(ID, 1, b);
    await until(() => expect(a.seqs).toEqual([1, 2]));
    store.setState(ID, { status: "running" });
    store.archive(ID, 3, 4, 5);
    await until(() => expect(a.seqs).toEqual([1, 2, 3, 4, 5]));
    store.archive(ID, 6);
    store.setState(ID, { status: "completed", exitCode: 0, logsComplete: true });
    await until(() => expect(a.ended).not.toBeNull());
    await until(() => expect(b.ended).not.toBeNull());
    expect(a.seqs).toEqual(range(1, 6));
    expect(b.seqs).toEqual(range(2, 6));
    expect(a.statuses).toEqual(["preprocessing", "running", "completed"]);
  });

  it("gives every subscriber the identical complete stream whatever the timing (randomised)", async () => {
    for (let seed = 1; seed <= 6; seed++) {
      const rand = mulberry32(seed);
      const { store, live, hub } = setup({ ringSize: 7, pageSize: 3 });
      store.setState(ID, { status: "running" });
      const total = 120;
      const subs: Recorder[] = [];
      let archived = 0;
      for (let seq = 1; seq <= total; seq++) {
        live.emit(ID, seq);
        // The archiver lags the live log by a random amount.
        while (archived < seq && rand() < 0.6) store.archive(ID, ++archived);
        if (rand() < 0.08) {
          const r = new Recorder(rand() < 0.5 ? 1 + Math.floor(rand() * 10) : Infinity);
          subs.push(r);
          hub.subscribe(ID, 0, r);
        }
        for (const r of subs) if (r.resumeFn && rand() < 0.2) r.drain(1 + Math.floor(rand() * 10));
        if (rand() < 0.3) await sleep(1);
      }
      while (archived < total) store.archive(ID, ++archived);
      store.setState(ID, { status: "completed", exitCode: 0, logsComplete: true });
      await until(() => {
        for (const r of subs) if (r.resumeFn) r.drain();
        expect(subs.every((r) => r.ended !== null)).toBe(true);
      });
      for (const r of subs) expect(r.seqs).toEqual(range(1, total));
      expect(live.follows.length).toBeLessThanOrEqual(subs.length);
      expect(hub.activeStreams).toBe(0);
    }
  });

  it("skips lines the archiver never stores rather than waiting forever", async () => {
    const { store, live, hub } = setup({ ringSize: 3, archiveWaitMs: 50 });
    store.setState(ID, { status: "running" });
    const slow = new Recorder(1);
    hub.subscribe(ID, 0, slow);
    await until(() => expect(live.active()).toHaveLength(1));
    store.archive(ID, 1, 2); // a size limit: nothing past 2 is stored
    live.emit(ID, ...range(1, 8));
    expect(slow.seqs).toEqual([1]);
    slow.drain();
    await until(() => expect(slow.seqs).toEqual([1, 2, 6, 7, 8]));
    live.emit(ID, 9);
    expect(slow.seqs.at(-1)).toBe(9);
  });

  it("ends streams whose workload is deleted, and drops a subscriber that throws", async () => {
    const { store, live, hub } = setup();
    store.setState(ID, { status: "running" });
    const ok = new Recorder();
    const bad = new Recorder();
    bad.line = () => {
      throw new Error("socket gone");
    };
    hub.subscribe(ID, 0, ok);
    hub.subscribe(ID, 0, bad);
    await until(() => expect(live.active()).toHaveLength(1));
    live.emit(ID, 1, 2);
    expect(ok.seqs).toEqual([1, 2]);
    store.setState(ID, null);
    await until(() => expect(ok.ended).toEqual({ status: "running", exit_code: null }));
    expect(bad.ended).toBeNull();
    expect(live.active()).toHaveLength(0);
  });

  it("close() stops upstreams and closes streams without end", async () => {
    const { store, live, hub } = setup();
    store.setState(ID, { status: "running" });
    const r = new Recorder();
    hub.subscribe(ID, 0, r);
    await until(() => expect(live.active()).toHaveLength(1));
    hub.close();
    expect(r.closed).toBe(true);
    expect(r.ended).toBeNull();
    expect(live.active()).toHaveLength(0);
    expect(() => hub.subscribe(ID, 0, new Recorder())).toThrow(/closed/);
  });
});

function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("LogHub status events", () => {
  it("gives every phase once, in order, even those that came and went between two reads of the row", async () => {
    const { store, live, hub } = setup({ pollIntervalMs: 300 });
    store.setState(ID, { status: "preprocessing" });
    const r = new Recorder();
    hub.subscribe(ID, 0, r);
    await until(() => expect(live.active()).toHaveLength(1));
    // All of it before the next read of the row: only the record of transitions still shows running.
    store.setState(ID, { status: "running" });
    store.setState(ID, { status: "completed", exitCode: 0, logsComplete: true });
    expect(r.statuses).toEqual(["preprocessing"]);
    const again = new Recorder();
    hub.subscribe(ID, 0, again);
    for (const rec of [r, again]) {
      await until(() => expect(rec.ended).toEqual({ status: "completed", exit_code: 0 }));
      expect(rec.statuses).toEqual(["preprocessing", "running", "completed"]);
    }
  });

  it("gives the phase output is written in before the first line, however late the row says so", async () => {
    const { store, live, hub } = setup({ pollIntervalMs: 300 });
    store.setState(ID, { status: "preprocessing" });
    const r = new Recorder();
    hub.subscribe(ID, 0, r);
    await until(() => expect(live.active()).toHaveLength(1));
    live.emit(ID, 1, 2);
    store.setState(ID, { status: "running" });
    store.setState(ID, { status: "completed", exitCode: 0, logsComplete: true });
    store.archive(ID, 1, 2);
    await until(() => expect(r.ended).not.toBeNull());
    expect(r.events.map((e) => (e.t === "line" ? e.l.seq : e.t === "status" ? e.s : e.t))).toEqual(["preprocessing", "running", 1, 2, "completed", "end"]);
  });

  it.each<[string, number, string | null, string[]]>([
    ["from the start", 0, null, ["preprocessing", "running", "completed"]],
    ["after a status event before any line", 0, "preprocessing", ["running", "completed"]],
    ["after a line: every live phase came before it", 3, null, ["completed"]],
    ["after the terminal status event", 5, "completed", []],
  ])("resumes %s without repeating a phase", async (_name, afterSeq, afterPhase, want) => {
    const { store, hub } = setup();
    store.setState(ID, { status: "preprocessing" });
    store.setState(ID, { status: "running" });
    store.setState(ID, { status: "completed", exitCode: 0, logsComplete: true });
    store.archive(ID, ...range(1, 5));
    const r = new Recorder();
    hub.subscribe(ID, afterSeq, r, afterPhase);
    await until(() => expect(r.ended).not.toBeNull());
    expect(r.statuses).toEqual(want);
  });

  it("gives each status event its resume position", async () => {
    const { store, hub } = setup();
    store.setState(ID, { status: "running" });
    store.setState(ID, { status: "failed", exitCode: 1, logsComplete: true });
    store.archive(ID, 1, 2, 4);
    const ids: string[] = [];
    const r = new Recorder();
    const status = r.status.bind(r);
    r.status = (s: StreamStatus, id: string) => {
      ids.push(id);
      status(s);
    };
    hub.subscribe(ID, 0, r);
    await until(() => expect(r.ended).not.toBeNull());
    expect(ids).toEqual(["0:running", "4:failed"]);
  });
});

/** A subscriber that takes timelines too (the SSE endpoint's); Recorder stands for one that does not (the MCP follower). */
class TimelineRecorder extends Recorder {
  timeline(events: readonly TimelineEntry[]) {
    this.events.push({ t: "timeline", events });
  }
  get timelines() {
    return this.events.flatMap((e) => (e.t === "timeline" ? [e.events.map((x) => x.event)] : []));
  }
  /** The events in order, a timeline as `timeline:<its last event>`. */
  get kinds() {
    return this.events.map((e) => (e.t === "timeline" ? `timeline:${e.events.at(-1)?.event}` : e.t === "status" ? e.s : e.t === "line" ? "line" : "end"));
  }
}

/** A run's timeline with these events (times made up: the channel compares and passes them on, never reads them). */
const timeline = (...events: string[]): TimelineEntry[] => events.map((event, i) => ({ event, at: new Date(Date.parse(TS) + i * 1000).toISOString() }));

describe("LogHub timeline events", () => {
  it("gives the timeline on connect, after the replayed phases, and again only when it grows; the last one before the terminal phase and end, none after", async () => {
    const { store, live, hub } = setup();
    store.setState(ID, { status: "preprocessing", timeline: timeline("created", "admitted") });
    const r = new TimelineRecorder();
    const plain = new Recorder();
    hub.subscribe(ID, 0, r);
    hub.subscribe(ID, 0, plain);
    await until(() => expect(r.timelines).toHaveLength(1));
    expect(r.kinds).toEqual(["preprocessing", "timeline:admitted"]);
    // Reads that find the same timeline (a new array, as every read makes) send nothing.
    const reads = store.readStateCalls;
    store.setState(ID, { timeline: timeline("created", "admitted") });
    await until(() => expect(store.readStateCalls).toBeGreaterThan(reads + 3));
    expect(r.timelines).toHaveLength(1);
    // It grows: a new snapshot, whole.
    store.setState(ID, { status: "running", timeline: timeline("created", "admitted", "scheduled", "started") });
    await until(() => expect(r.timelines).toHaveLength(2));
    expect(r.timelines[1]).toEqual(["created", "admitted", "scheduled", "started"]);
    live.emit(ID, 1, 2);
    store.archive(ID, 1, 2);
    store.setState(ID, { timeline: timeline("created", "admitted", "scheduled", "started", "first_output") });
    await until(() => expect(r.timelines).toHaveLength(3));
    // A client that comes now is given the current snapshot at once: the same array the others were given.
    const late = new TimelineRecorder();
    hub.subscribe(ID, 2, late);
    await until(() => expect(late.timelines).toHaveLength(1));
    expect((late.events.find((e) => e.t === "timeline") as { events: unknown }).events).toBe(
      (r.events.filter((e) => e.t === "timeline").at(-1) as { events: unknown }).events,
    );
    // Over, its logs not yet complete: the snapshot with `ended` comes while the terminal phase waits for the lines.
    store.setState(ID, { status: "completed", exitCode: 0, timeline: timeline("created", "admitted", "scheduled", "started", "first_output", "ended") });
    await until(() => expect(r.timelines).toHaveLength(4));
    expect(r.ended).toBeNull();
    store.setState(ID, { logsComplete: true });
    await until(() => expect(r.ended).not.toBeNull());
    await until(() => expect(late.ended).not.toBeNull());
    for (const sub of [r, late]) expect(sub.kinds.slice(-3)).toEqual(["timeline:ended", "completed", "end"]);
    expect(r.kinds).toEqual([
      "preprocessing",
      "timeline:admitted",
      "running",
      "timeline:started",
      "line",
      "line",
      "timeline:first_output",
      "timeline:ended",
      "completed",
      "end",
    ]);
    // A subscriber without the method is given the rest as before.
    await until(() => expect(plain.ended).not.toBeNull());
    expect(plain.statuses).toEqual(["preprocessing", "running", "completed"]);
    expect(plain.seqs).toEqual([1, 2]);
  });

  it("gives the last snapshot before end when the row's last change and its end are read together", async () => {
    const { store, live, hub } = setup();
    store.setState(ID, { status: "running", timeline: timeline("created", "started") });
    const r = new TimelineRecorder();
    hub.subscribe(ID, 0, r);
    await until(() => expect(r.timelines).toHaveLength(1));
    live.emit(ID, 1);
    store.archive(ID, 1);
    await until(() => expect(r.seqs).toEqual([1]));
    // One write (as the controller's last mirror and the archiver's mark may land between two reads).
    store.setState(ID, { status: "failed", exitCode: 2, logsComplete: true, timeline: timeline("created", "started", "first_output", "ended") });
    await until(() => expect(r.ended).not.toBeNull());
    expect(r.kinds).toEqual(["running", "timeline:started", "line", "timeline:ended", "failed", "end"]);
    // The row changes after the end: nothing more (the channel is gone).
    store.setState(ID, { timeline: timeline("created", "started", "first_output", "ended", "ended") });
    const reads = store.readStateCalls;
    await sleep(50);
    expect(store.readStateCalls).toBe(reads);
    expect(r.kinds.at(-1)).toBe("end");
    expect(hub.activeStreams).toBe(0);
  });

  it("gives a client that comes after the end the whole timeline, then the stored lines, the terminal phase and end", async () => {
    const { store, hub } = setup();
    store.setState(ID, { status: "running" });
    store.setState(ID, { status: "completed", exitCode: 0, logsComplete: true, timeline: timeline("created", "started", "first_output", "ended") });
    store.archive(ID, 1, 2);
    const r = new TimelineRecorder();
    hub.subscribe(ID, 0, r);
    await until(() => expect(r.ended).not.toBeNull());
    expect(r.kinds).toEqual(["running", "timeline:ended", "line", "line", "completed", "end"]);
  });

  it("gives none for a kind of workload without a timeline (an analysis)", async () => {
    const { store, live, hub } = setup();
    store.setState(ID, { status: "running" });
    const r = new TimelineRecorder();
    hub.subscribe(ID, 0, r);
    await until(() => expect(r.statuses).toEqual(["running"]));
    live.emit(ID, 1);
    store.archive(ID, 1);
    store.setState(ID, { status: "completed", exitCode: 0, logsComplete: true });
    await until(() => expect(r.ended).not.toBeNull());
    expect(r.kinds).toEqual(["running", "line", "completed", "end"]);
  });

  it("drops a subscriber whose timeline throws, and no other", async () => {
    const { store, hub } = setup();
    store.setState(ID, { status: "running", timeline: timeline("created") });
    const bad = new TimelineRecorder();
    bad.timeline = () => {
      throw new Error("boom");
    };
    const good = new TimelineRecorder();
    hub.subscribe(ID, 0, bad);
    hub.subscribe(ID, 0, good);
    await until(() => expect(good.timelines).toHaveLength(1));
    store.setState(ID, { status: "completed", exitCode: 0, logsComplete: true, timeline: timeline("created", "ended") });
    await until(() => expect(good.ended).not.toBeNull());
    expect(bad.ended).toBeNull();
  });
});
