import { describe, expect, it } from "vitest";
import type { LogHub } from "../logs/hub.ts";
import type { LogLine, Subscriber } from "../logs/contracts.ts";
import { followLines, readUntilChanged, SharedReads, WaitSlots } from "./wait.ts";

const control = (stopping = () => false) => ({ signal: new AbortController().signal, stopping, acquireWait: () => () => undefined });

describe("readUntilChanged", () => {
  it("reads once without a wait, or when the first read is terminal", async () => {
    let reads = 0;
    expect(await readUntilChanged(async () => (reads++, { status: "running" }), 0, control())).toEqual({ status: "running" });
    expect(await readUntilChanged(async () => (reads++, { status: "failed" }), 10, control())).toEqual({ status: "failed" });
    expect(reads).toBe(2);
  });

  it("answers at the first change of status", async () => {
    const statuses = ["pending", "pending", "preprocessing", "running"];
    const started = Date.now();
    const r = await readUntilChanged(async () => ({ status: statuses.shift()! }), 10, control(), 20);
    expect(r.status).toBe("preprocessing");
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("gives up after the time, when the client goes away, or when the process stops", async () => {
    const started = Date.now();
    expect((await readUntilChanged(async () => ({ status: "running" }), 0.2, control(), 20)).status).toBe("running");
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);

    const gone = new AbortController();
    setTimeout(() => gone.abort(), 50);
    const t0 = Date.now();
    await readUntilChanged(async () => ({ status: "running" }), 10, { signal: gone.signal, stopping: () => false, acquireWait: () => () => undefined }, 1000);
    expect(Date.now() - t0).toBeLessThan(5000); // far under the 10 s wait, with room for a loaded machine

    let stop = false;
    setTimeout(() => (stop = true), 50);
    const t1 = Date.now();
    await readUntilChanged(
      async () => ({ status: "running" }),
      10,
      control(() => stop),
      20,
    );
    expect(Date.now() - t1).toBeLessThan(5000);
  });
});

/** A hub that hands the subscriber to the test. */
function fakeHub() {
  const subs: { after: number; sink: Subscriber; unsubscribed: boolean }[] = [];
  const hub = {
    subscribe(_id: string, after: number, sink: Subscriber) {
      const s = { after, sink, unsubscribed: false };
      subs.push(s);
      return () => (s.unsubscribed = true);
    },
  } as unknown as LogHub;
  return { hub, subs };
}
const line = (seq: number, text = `line ${seq}`): LogLine => ({ seq, stream: "stdout", ts: "2025-01-01T00:00:00.000Z", line: text });

describe("followLines", () => {
  it("collects a burst of lines after the first, then answers and unsubscribes", async () => {
    const { hub, subs } = fakeHub();
    const p = followLines(hub, "r", 3, { limit: 100, maxBytes: 1 << 20, seconds: 10, gatherMs: 30 }, control());
    expect(subs[0]!.after).toBe(3);
    subs[0]!.sink.line(line(4));
    subs[0]!.sink.line(line(5));
    const r = await p;
    expect(r).toEqual({ lines: [expect.objectContaining({ seq: 4 }), expect.objectContaining({ seq: 5 })], ended: false });
    await Promise.resolve();
    expect(subs[0]!.unsubscribed).toBe(true);
  });

  it("stops at the limit and at the byte budget (one line at least)", async () => {
    const { hub, subs } = fakeHub();
    const p = followLines(hub, "r", 0, { limit: 2, maxBytes: 1 << 20, seconds: 10 }, control());
    expect(subs[0]!.sink.line(line(1))).toBe(true);
    expect(subs[0]!.sink.line(line(2))).toBe(false);
    expect((await p).lines).toHaveLength(2);

    const q = followLines(hub, "r", 0, { limit: 100, maxBytes: 10, seconds: 10 }, control());
    expect(subs[1]!.sink.line(line(1, "x".repeat(50)))).toBe(true);
    expect(subs[1]!.sink.line(line(2))).toBe(false);
    expect((await q).lines.map((l) => l.seq)).toEqual([1]);
  });

  it("says when the workload ended, and answers empty when the time is up", async () => {
    const { hub, subs } = fakeHub();
    const p = followLines(hub, "r", 0, { limit: 100, maxBytes: 1 << 20, seconds: 10 }, control());
    subs[0]!.sink.line(line(1));
    subs[0]!.sink.end({ status: "completed", exit_code: 0 });
    expect(await p).toEqual({ lines: [expect.objectContaining({ seq: 1 })], ended: true });

    const t0 = Date.now();
    expect(await followLines(hub, "r", 0, { limit: 100, maxBytes: 1 << 20, seconds: 0.1 }, control())).toEqual({ lines: [], ended: false });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(90);
  });
});

describe("WaitSlots", () => {
  it("gives each key at most its slots, releases each once, and keys do not share", () => {
    const slots = new WaitSlots(2);
    const a1 = slots.tryAcquire("a");
    const a2 = slots.tryAcquire("a");
    expect(a1 && a2).toBeTruthy();
    expect(slots.tryAcquire("a")).toBeNull();
    expect(slots.tryAcquire("b")).not.toBeNull();
    a1!();
    a1!();
    expect(slots.held("a")).toBe(1);
    expect(slots.tryAcquire("a")).not.toBeNull();
    expect(slots.tryAcquire("a")).toBeNull();
  });

  it("a wait without a slot answers with its first read, and a wait gives its slot back when it ends", async () => {
    const slots = new WaitSlots(1);
    const held = slots.tryAcquire("k")!;
    let reads = 0;
    const busy = { ...control(), acquireWait: () => slots.tryAcquire("k") };
    expect(await readUntilChanged(async () => (reads++, { status: "running" }), 10, busy, 20)).toEqual({ status: "running" });
    expect(reads).toBe(1);
    expect(await followLines({ subscribe: () => () => undefined } as unknown as LogHub, "r", 0, { limit: 1, maxBytes: 1, seconds: 10 }, busy)).toEqual({
      lines: [],
      ended: false,
    });
    held();
    expect((await readUntilChanged(async () => ({ status: "running" }), 0.05, busy, 20)).status).toBe("running");
    expect(slots.held("k")).toBe(0);
  });
});

describe("SharedReads", () => {
  it("gives concurrent waits on one workload one query per poll, not one each", async () => {
    const shared = new SharedReads();
    let queries = 0;
    // A query takes a while, as Postgres's does: the waits polling at the same tick find it in flight.
    const query = async () => {
      queries++;
      await new Promise((r) => setTimeout(r, 10));
      return { status: "running" };
    };
    const waits = 20;
    await Promise.all(Array.from({ length: waits }, () => readUntilChanged(() => shared.read("run:a:1", query), 0.6, control(), 100)));
    // Alone, each wait reads once and then at every tick: 20 × 7 or so. Shared: about one query per tick.
    expect(queries).toBeLessThan(waits);
    expect(shared.size).toBe(0);
  });

  it("shares only what has the same key", async () => {
    const shared = new SharedReads();
    let queries = 0;
    const query = (v: string) => async () => (queries++, await new Promise((r) => setTimeout(r, 5)), v);
    expect(await Promise.all([shared.read("a", query("a")), shared.read("b", query("b")), shared.read("a", query("x"))])).toEqual(["a", "b", "a"]);
    expect(queries).toBe(2);
  });
});
