import { afterEach, describe, expect, it, vi } from "vitest";
import { createRootLogger } from "../logger.ts";
import type {
  LogLine,
  LogStore,
  SetupEnvironmentState,
  SetupLine,
  SetupLogSource,
  SetupStore,
  StreamEnd,
  StreamState,
  StreamStatus,
  Subscriber,
} from "./contracts.ts";
import { LogHub, type SetupOptions } from "./hub.ts";
import { clean, MAX_SETUP_LINE, storedSetupLines } from "./setup-feed.ts";

// The `setup` events of a run's log stream (./setup-feed.ts, and where ./channel.ts puts them):
// the install of the environment a run waits for, between its preprocessing and running statuses.

const RUN = "0190f0f0-0000-7000-8000-0000000000a1";
const RUN2 = "0190f0f0-0000-7000-8000-0000000000a2";
const ENV = "0190f0f0-0000-7000-8000-0000000000e1";
const TS = "2026-11-26T13:00:01.234Z";
const ENDED = "2026-11-26T13:05:00.000Z";
const logger = createRootLogger("silent");

/** A run's row and lines, with a run's phases. */
class RunStore implements LogStore {
  phases = {
    all: ["pending", "preprocessing", "running", "completed", "failed", "cancelled"],
    live: ["pending", "preprocessing", "running"],
  };
  lines = new Map<string, LogLine[]>();
  states = new Map<string, StreamState>();
  set(id: string, status: string, extra: Partial<StreamState> = {}) {
    const prev = this.states.get(id);
    const history = prev ? [...prev.history] : [];
    // A live phase implies those before it; a terminal one is recorded alone (a cancelled run never ran).
    const implied = this.phases.live.includes(status) ? this.phases.live.slice(0, this.phases.live.indexOf(status) + 1) : [status];
    for (const p of implied) if (!history.includes(p)) history.push(p);
    this.states.set(id, { status, history, terminal: !this.phases.live.includes(status), exitCode: null, logsComplete: false, ...extra });
  }
  async readLines(id: string, afterSeq: number, limit: number) {
    return (this.lines.get(id) ?? []).filter((l) => l.seq > afterSeq).slice(0, limit);
  }
  async maxSeq(id: string) {
    return (this.lines.get(id) ?? []).at(-1)?.seq ?? 0;
  }
  async readState(id: string) {
    return this.states.get(id) ?? null;
  }
}

class FakeSetupStore implements SetupStore {
  targets = new Map<string, string | null>();
  envs = new Map<string, SetupEnvironmentState>();
  logs = new Map<string, string>();
  targetCalls = 0;
  async target(runId: string) {
    this.targetCalls++;
    const id = this.targets.get(runId);
    return id ? { environmentId: id } : null;
  }
  async environment(id: string) {
    return this.envs.get(id) ?? null;
  }
  async storedLog(id: string) {
    return this.logs.get(id) ?? null;
  }
}

interface SetupFollow {
  id: string;
  onLine: (text: string, ts: string) => void;
  onEnd: (complete: boolean) => void;
  stopped: boolean;
}

/** The build pod's install log: a follow replays what was written (a turn later), then new lines. */
class FakeInstallLog implements SetupLogSource {
  follows: SetupFollow[] = [];
  written = new Map<string, string[]>();
  follow(id: string, onLine: (text: string, ts: string) => void, onEnd: (complete: boolean) => void) {
    const f: SetupFollow = { id, onLine, onEnd, stopped: false };
    const backlog = [...(this.written.get(id) ?? [])];
    queueMicrotask(() => {
      this.follows.push(f);
      for (const t of backlog) if (!f.stopped) onLine(t, TS);
    });
    return () => void (f.stopped = true);
  }
  active(id = ENV) {
    return this.follows.filter((f) => f.id === id && !f.stopped);
  }
  write(id: string, ...texts: string[]) {
    this.written.set(id, [...(this.written.get(id) ?? []), ...texts]);
    for (const f of this.active(id)) for (const t of texts) f.onLine(t, TS);
  }
  /** The install ended and its log was read to the end. */
  finish(id = ENV) {
    for (const f of this.active(id)) {
      f.stopped = true;
      f.onEnd(true);
    }
  }
}

type Event = { t: "line"; seq: number } | { t: "status"; s: StreamStatus; id: string } | { t: "setup"; l: SetupLine; id: string } | { t: "end"; e: StreamEnd };

class Recorder implements Subscriber {
  events: Event[] = [];
  room: number;
  resumeFn: (() => void) | null = null;
  constructor(room = Infinity) {
    this.room = room;
  }
  line(l: LogLine) {
    this.events.push({ t: "line", seq: l.seq });
    return true;
  }
  setup(l: SetupLine, id: string) {
    this.events.push({ t: "setup", l, id });
    return --this.room > 0;
  }
  status(s: StreamStatus, id: string) {
    this.events.push({ t: "status", s, id });
  }
  end(e: StreamEnd) {
    this.events.push({ t: "end", e });
  }
  onDrain(resume: () => void) {
    this.resumeFn = resume;
  }
  drain() {
    this.room = Infinity;
    const r = this.resumeFn;
    this.resumeFn = null;
    r?.();
  }
  get ns() {
    return this.events.flatMap((e) => (e.t === "setup" ? [e.l.n] : []));
  }
  get texts() {
    return this.events.flatMap((e) => (e.t === "setup" ? [e.l.line] : []));
  }
  /** The events as short words, in order: `status:running`, `setup:3`, `line:1`, `end`. */
  get trace() {
    return this.events.map((e) => (e.t === "status" ? `status:${e.s}` : e.t === "setup" ? `setup:${e.l.n}` : e.t === "line" ? `line:${e.seq}` : "end"));
  }
}

/** A subscriber with no setup method (the MCP tools' follower). */
class PlainRecorder extends Recorder {
  declare setup: never;
  constructor() {
    super();
    Object.defineProperty(this, "setup", { value: undefined });
  }
}

let hubs: LogHub[] = [];
afterEach(() => {
  for (const h of hubs) h.close();
  hubs = [];
});

function start({ noCluster = false, ...opts }: Partial<Omit<SetupOptions, "live">> & { noCluster?: boolean } = {}) {
  const store = new RunStore();
  const setupStore = new FakeSetupStore();
  const install = new FakeInstallLog();
  const hub = new LogHub({
    store,
    live: null,
    logger,
    pollIntervalMs: 10,
    dbPollIntervalMs: 10,
    terminalGraceMs: 50,
    setup: {
      store: setupStore,
      live: noCluster ? null : install,
      phase: "preprocessing",
      pollIntervalMs: 10,
      endGraceMs: 50,
      closeWaitMs: 200,
      lingerMs: 0,
      ...opts,
    },
  });
  hubs.push(hub);
  return { store, setupStore, install, hub };
}

const until = (fn: () => void) => vi.waitFor(fn, { timeout: 5000, interval: 5 });
const lines = (...texts: string[]) => texts;

describe("setup events", () => {
  it("sends the install's lines after preprocessing and before running, numbered from 1, with ids <seq>:preprocessing/<n>", async () => {
    const { store, setupStore, install, hub } = start();
    store.set(RUN, "preprocessing");
    setupStore.targets.set(RUN, ENV);
    setupStore.envs.set(ENV, { status: "building", completedAt: null });
    install.write(ENV, ...lines("==> [1/1] pip install -r requirements.txt", "Collecting click==8.5.1"));
    const r = new Recorder();
    hub.subscribe(RUN, 0, r);
    await until(() => expect(r.ns).toEqual([1, 2]));
    install.write(ENV, "Successfully installed click-8.5.1");
    expect(r.ns).toEqual([1, 2, 3]);
    expect(r.events.filter((e) => e.t === "setup").map((e) => e.id)).toEqual(["0:preprocessing/1", "0:preprocessing/2", "0:preprocessing/3"]);
    expect(r.events.find((e) => e.t === "setup")).toMatchObject({ l: { n: 1, ts: TS, line: "==> [1/1] pip install -r requirements.txt" } });
    install.finish();
    setupStore.envs.set(ENV, { status: "ready", completedAt: ENDED });
    store.set(RUN, "running");
    store.lines.set(RUN, [{ seq: 1, stream: "stdout", ts: TS, line: "hello" }]);
    await until(() => expect(r.trace).toEqual(["status:pending", "status:preprocessing", "setup:1", "setup:2", "setup:3", "status:running", "line:1"]));
    // The build's feed goes once the run is past it.
    await until(() => expect(hub.activeSetupFeeds).toBe(0));
    expect(install.active()).toHaveLength(0);
  });

  it("follows one build once however many runs and clients wait on it, and gives each every line", async () => {
    const { store, setupStore, install, hub } = start();
    for (const id of [RUN, RUN2]) {
      store.set(id, "preprocessing");
      setupStore.targets.set(id, ENV);
    }
    setupStore.envs.set(ENV, { status: "building", completedAt: null });
    const rs = [new Recorder(), new Recorder(), new Recorder()];
    hub.subscribe(RUN, 0, rs[0]!);
    hub.subscribe(RUN, 0, rs[1]!);
    hub.subscribe(RUN2, 0, rs[2]!);
    await until(() => expect(install.active()).toHaveLength(1));
    install.write(ENV, "a", "b", "c");
    await until(() => {
      for (const r of rs) expect(r.texts).toEqual(["a", "b", "c"]);
    });
    expect(install.follows).toHaveLength(1);
    expect(hub.activeSetupFeeds).toBe(1);
    // A client that comes later gets what it missed from the feed, not from another follow.
    const late = new Recorder();
    hub.subscribe(RUN2, 0, late);
    await until(() => expect(late.ns).toEqual([1, 2, 3]));
    expect(install.follows).toHaveLength(1);
  });

  it.each<[string, number, string | null, number | null, number[]]>([
    ["from the start", 0, null, null, [1, 2, 3, 4]],
    ["after pending", 0, "pending", null, [1, 2, 3, 4]],
    ["after the preprocessing status", 0, "preprocessing", null, [1, 2, 3, 4]],
    ["after setup line 2", 0, "preprocessing", 2, [3, 4]],
    ["after the last setup line", 0, "preprocessing", 4, []],
    ["after the running status", 0, "running", null, []],
    ["after a line", 3, null, null, []],
  ])("resumes %s (after %d, %j, setup %j) with setup lines %j", async (_what, afterSeq, afterPhase, afterSetup, expected) => {
    const { store, setupStore, install, hub } = start();
    store.set(RUN, "preprocessing");
    setupStore.targets.set(RUN, ENV);
    setupStore.envs.set(ENV, { status: "building", completedAt: null });
    install.write(ENV, "1", "2", "3", "4");
    const first = new Recorder();
    hub.subscribe(RUN, 0, first);
    await until(() => expect(first.ns).toEqual([1, 2, 3, 4]));
    const r = new Recorder();
    hub.subscribe(RUN, afterSeq, r, afterPhase, afterSetup);
    // The command starts: its first line comes after every setup line the client was to be given.
    install.finish();
    setupStore.envs.set(ENV, { status: "ready", completedAt: ENDED });
    store.set(RUN, "running");
    store.lines.set(RUN, [{ seq: 5, stream: "stdout", ts: TS, line: "out" }]);
    await until(() => expect(r.trace.at(-1)).toBe("line:5"));
    expect(r.ns).toEqual(expected);
    // None of the phases it already had comes again.
    const had =
      afterPhase === null ? (afterSeq > 0 ? ["pending", "preprocessing", "running"] : []) : store.phases.all.slice(0, store.phases.all.indexOf(afterPhase) + 1);
    for (const p of had) expect(r.trace).not.toContain(`status:${p}`);
  });

  it("gives a client that comes after the build ended, before the command started, the stored log by line index", async () => {
    const { store, setupStore, install, hub } = start();
    store.set(RUN, "preprocessing");
    setupStore.targets.set(RUN, ENV);
    setupStore.envs.set(ENV, { status: "ready", completedAt: ENDED });
    setupStore.logs.set(ENV, "==> [1/1] npm ci\nadded 2 packages\n==> environment installed\n");
    const r = new Recorder();
    hub.subscribe(RUN, 0, r, "preprocessing", 1);
    await until(() => expect(r.ns).toEqual([2, 3]));
    expect(r.events.filter((e) => e.t === "setup").map((e) => (e as { l: SetupLine }).l)).toEqual([
      { n: 2, ts: ENDED, line: "added 2 packages" },
      { n: 3, ts: ENDED, line: "==> environment installed" },
    ]);
    // Nothing to follow: the build is over.
    expect(install.follows).toHaveLength(0);
    store.set(RUN, "running");
    await until(() => expect(r.trace.at(-1)).toBe("status:running"));
  });

  it("completes a follow that stopped short (the pod gone) from the stored log, without repeating a line", async () => {
    const { store, setupStore, install, hub } = start();
    store.set(RUN, "preprocessing");
    setupStore.targets.set(RUN, ENV);
    setupStore.envs.set(ENV, { status: "building", completedAt: null });
    const r = new Recorder();
    hub.subscribe(RUN, 0, r);
    await until(() => expect(install.active()).toHaveLength(1));
    install.write(ENV, "one", "two");
    await until(() => expect(r.texts).toEqual(["one", "two"]));
    // The build ends; its follow never reaches the install's end (the pod went away): after the grace, the stored log.
    setupStore.logs.set(ENV, "one\ntwo\nthree\nfour");
    setupStore.envs.set(ENV, { status: "ready", completedAt: ENDED });
    await until(() => expect(r.texts).toEqual(["one", "two", "three", "four"]));
    expect(r.ns).toEqual([1, 2, 3, 4]);
    expect(install.active()).toHaveLength(0);
  });

  it("without a cluster, sends the stored log once the build has ended", async () => {
    const { store, setupStore, hub } = start({ noCluster: true });
    store.set(RUN, "preprocessing");
    setupStore.targets.set(RUN, ENV);
    setupStore.envs.set(ENV, { status: "building", completedAt: null });
    const r = new Recorder();
    hub.subscribe(RUN, 0, r);
    await new Promise((res) => setTimeout(res, 40));
    expect(r.ns).toEqual([]);
    setupStore.logs.set(ENV, "x\ny\n");
    setupStore.envs.set(ENV, { status: "failed", completedAt: ENDED });
    await until(() => expect(r.texts).toEqual(["x", "y"]));
  });

  it("sends no setup for a cache hit or a run without an environment, and holds nothing back", async () => {
    const { store, setupStore, hub } = start();
    store.set(RUN, "preprocessing");
    setupStore.targets.set(RUN, null);
    const r = new Recorder();
    hub.subscribe(RUN, 0, r);
    await until(() => expect(r.trace).toEqual(["status:pending", "status:preprocessing"]));
    store.set(RUN, "running");
    store.lines.set(RUN, [{ seq: 1, stream: "stdout", ts: TS, line: "hi" }]);
    await until(() => expect(r.trace).toEqual(["status:pending", "status:preprocessing", "status:running", "line:1"]));
    expect(hub.activeSetupFeeds).toBe(0);
  });

  it("asks nothing about setup once the run is past preprocessing", async () => {
    const { store, setupStore, install, hub } = start();
    store.set(RUN, "running");
    setupStore.targets.set(RUN, ENV);
    setupStore.envs.set(ENV, { status: "ready", completedAt: ENDED });
    setupStore.logs.set(ENV, "a\nb\n");
    const r = new Recorder();
    hub.subscribe(RUN, 0, r);
    await until(() => expect(r.trace).toEqual(["status:pending", "status:preprocessing", "status:running"]));
    expect(setupStore.targetCalls).toBe(0);
    expect(install.follows).toHaveLength(0);
  });

  it("gives a subscriber without a setup method (the MCP tools) none, and holds nothing back for it", async () => {
    const { store, setupStore, install, hub } = start();
    store.set(RUN, "preprocessing");
    setupStore.targets.set(RUN, ENV);
    setupStore.envs.set(ENV, { status: "building", completedAt: null });
    install.write(ENV, "a");
    const r = new PlainRecorder();
    hub.subscribe(RUN, 0, r);
    store.set(RUN, "running");
    await until(() => expect(r.trace).toEqual(["status:pending", "status:preprocessing", "status:running"]));
  });

  it("never hangs on a build whose lines stop coming: the running status goes out after closeWaitMs, and no setup after it", async () => {
    const { store, setupStore, install, hub } = start({ endGraceMs: 60_000 });
    store.set(RUN, "preprocessing");
    setupStore.targets.set(RUN, ENV);
    setupStore.envs.set(ENV, { status: "building", completedAt: null });
    const r = new Recorder();
    hub.subscribe(RUN, 0, r);
    await until(() => expect(install.active()).toHaveLength(1));
    install.write(ENV, "a");
    await until(() => expect(r.ns).toEqual([1]));
    // The run goes on while the follow says nothing more (and, with this grace, will not end for a minute).
    setupStore.envs.set(ENV, { status: "ready", completedAt: ENDED });
    store.set(RUN, "running");
    store.lines.set(RUN, [{ seq: 1, stream: "stdout", ts: TS, line: "out" }]);
    await until(() => expect(r.trace).toEqual(["status:pending", "status:preprocessing", "setup:1", "status:running", "line:1"]));
    install.write(ENV, "late");
    await new Promise((res) => setTimeout(res, 30));
    expect(r.trace.at(-1)).toBe("line:1");
  });

  it("ends a cancelled run's stream while its build goes on for others", async () => {
    const { store, setupStore, install, hub } = start();
    store.set(RUN, "preprocessing");
    setupStore.targets.set(RUN, ENV);
    setupStore.envs.set(ENV, { status: "building", completedAt: null });
    const r = new Recorder();
    hub.subscribe(RUN, 0, r);
    await until(() => expect(install.active()).toHaveLength(1));
    install.write(ENV, "a");
    store.set(RUN, "cancelled", { logsComplete: true });
    await until(() => expect(r.trace).toEqual(["status:pending", "status:preprocessing", "setup:1", "status:cancelled", "end"]));
  });

  it("waits for a slow client (backpressure) and loses nothing", async () => {
    const { store, setupStore, install, hub } = start();
    store.set(RUN, "preprocessing");
    setupStore.targets.set(RUN, ENV);
    setupStore.envs.set(ENV, { status: "building", completedAt: null });
    install.write(ENV, ...Array.from({ length: 10 }, (_, i) => `l${i + 1}`));
    const r = new Recorder(3);
    hub.subscribe(RUN, 0, r);
    await until(() => expect(r.ns).toEqual([1, 2, 3]));
    install.write(ENV, "l11");
    expect(r.ns).toEqual([1, 2, 3]);
    r.drain();
    await until(() => expect(r.ns).toEqual(Array.from({ length: 11 }, (_, i) => i + 1)));
  });

  it("waits in pending: setup lines go out once the run is in preprocessing", async () => {
    const { store, setupStore, install, hub } = start();
    store.set(RUN, "pending");
    setupStore.targets.set(RUN, ENV);
    setupStore.envs.set(ENV, { status: "building", completedAt: null });
    install.write(ENV, "a", "b");
    const r = new Recorder();
    hub.subscribe(RUN, 0, r);
    await until(() => expect(install.follows).toHaveLength(1));
    await new Promise((res) => setTimeout(res, 30));
    expect(r.trace).toEqual(["status:pending"]);
    store.set(RUN, "preprocessing");
    await until(() => expect(r.trace).toEqual(["status:pending", "status:preprocessing", "setup:1", "setup:2"]));
  });

  it("keeps the newest maxBytes of a build's lines: a late joiner starts at the oldest kept", async () => {
    const { store, setupStore, install, hub } = start({ maxBytes: 64 * 5 + 10 });
    store.set(RUN, "preprocessing");
    setupStore.targets.set(RUN, ENV);
    setupStore.envs.set(ENV, { status: "building", completedAt: null });
    const first = new Recorder();
    hub.subscribe(RUN, 0, first);
    await until(() => expect(install.active()).toHaveLength(1));
    install.write(ENV, ...Array.from({ length: 20 }, (_, i) => String(i + 1)));
    expect(first.ns).toHaveLength(20);
    const late = new Recorder();
    hub.subscribe(RUN, 0, late);
    await until(() => expect(late.ns.at(-1)).toBe(20));
    expect(late.ns.length).toBeLessThan(20);
    expect(late.ns).toEqual(Array.from({ length: late.ns.length }, (_, i) => 21 - late.ns.length + i));
  });
});

describe("a build's feed after its last stream left", () => {
  it.each<[string, number, number[], string[]]>([
    // Kept a moment: a client reconnecting to this process goes on with the numbers it had.
    ["kept (lingerMs 60 s)", 60_000, [3, 4], ["c", "d"]],
    // Gone at once: the stored log, here a cut tail, numbered by its own lines ("[...]", "c", "d").
    ["dropped (lingerMs 0)", 0, [3], ["d"]],
  ])("%s: a reconnecting client gets %j", async (_what, lingerMs, ns, texts) => {
    const { store, setupStore, install, hub } = start({ lingerMs });
    store.set(RUN, "preprocessing");
    setupStore.targets.set(RUN, ENV);
    setupStore.envs.set(ENV, { status: "building", completedAt: null });
    const first = new Recorder();
    const unsubscribe = hub.subscribe(RUN, 0, first);
    await until(() => expect(install.active()).toHaveLength(1));
    install.write(ENV, "a", "b");
    await until(() => expect(first.ns).toEqual([1, 2]));
    unsubscribe();
    install.write(ENV, "c", "d");
    install.finish();
    setupStore.logs.set(ENV, "[...]\nc\nd\n");
    setupStore.envs.set(ENV, { status: "ready", completedAt: ENDED });
    expect(hub.activeSetupFeeds).toBe(lingerMs > 0 ? 1 : 0);
    const again = new Recorder();
    hub.subscribe(RUN, 0, again, "preprocessing", 2);
    await until(() => expect(again.texts).toEqual(texts));
    expect(again.ns).toEqual(ns);
    expect(install.follows).toHaveLength(1);
  });
});

describe("storedSetupLines", () => {
  it.each<[string | null, string[]]>([
    [null, []],
    ["", []],
    ["a", ["a"]],
    ["a\n", ["a"]],
    ["a\nb", ["a", "b"]],
    ["a\n\nb\n", ["a", "", "b"]],
    ["\n", [""]],
    ["x\r\ny\n", ["x\r", "y"]],
    ["nul\u0000here\n", ["nul\uFFFDhere"]],
    // A cut tail (tail() in src/controller/environment-builds.ts): numbered within what is kept.
    ["[...]\nlast\n", ["[...]", "last"]],
  ])("%j → %j, numbered from 1", (log, texts) => {
    expect(storedSetupLines(log, ENDED)).toEqual(texts.map((line, i) => ({ n: i + 1, ts: ENDED, line })));
  });

  it("cuts a runaway line", () => {
    expect(clean("x".repeat(MAX_SETUP_LINE + 10))).toHaveLength(MAX_SETUP_LINE);
  });
});
