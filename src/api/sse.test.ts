import { EventEmitter } from "node:events";
import type { Context } from "koa";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Subscriber } from "../logs/contracts.ts";
import { formatLine, lineEvent, parseAfter, streamLogs } from "./sse.ts";

const TS = "2026-11-22T04:13:09.123Z";

/** Just enough of http.ServerResponse: records writes, can report backpressure. */
class FakeRes extends EventEmitter {
  chunks: string[] = [];
  /** One entry per write reaching the socket: a write(), or everything written while the socket was corked. */
  writes: string[] = [];
  #corkedSocket: string[] | null = null;
  headersFlushed = false;
  writableEnded = false;
  destroyed = false;
  writableNeedDrain = false;
  readonly writableHighWaterMark = 16384;
  socket = {
    destroyed: false,
    cork: () => void (this.#corkedSocket ??= []),
    uncork: () => {
      if (this.#corkedSocket?.length) this.writes.push(this.#corkedSocket.join(""));
      this.#corkedSocket = null;
    },
  };
  full = false;
  get writableLength(): number {
    return this.full ? this.writableHighWaterMark : 0;
  }
  write(chunk: string | Buffer): boolean {
    const text = String(chunk);
    if (this.#corkedSocket) this.#corkedSocket.push(text);
    else this.writes.push(text);
    this.chunks.push(text);
    if (this.full) this.writableNeedDrain = true;
    return !this.full;
  }
  /** Streams must not cork the response: Node's uncork writes each held piece to the socket on its own. */
  cork(): void {
    throw new Error("the response was corked");
  }
  end(): void {
    this.writableEnded = true;
    setImmediate(() => this.emit("close"));
  }
  flushHeaders(): void {
    this.headersFlushed = true;
  }
  /** The client went away. */
  hangUp(): void {
    this.destroyed = true;
    this.socket.destroyed = true;
    this.emit("close");
  }
  get text(): string {
    return this.chunks.join("");
  }
}

function fakeCtx() {
  const res = new FakeRes();
  const headers: Record<string, string> = {};
  const ctx = {
    res,
    req: { socket: { setNoDelay: () => {} } },
    status: 404,
    respond: true as boolean,
    set(h: Record<string, string>) {
      Object.assign(headers, h);
    },
  };
  return { ctx, res, headers, asKoa: ctx as unknown as Context };
}

function fakeHub() {
  const hub = {
    sink: null as Subscriber | null,
    args: null as [string, number, string | null] | null,
    unsubscribed: 0,
    subscribe(id: string, afterSeq: number, sink: Subscriber, afterPhase: string | null) {
      hub.sink = sink;
      hub.args = [id, afterSeq, afterPhase];
      return () => void hub.unsubscribed++;
    },
  };
  return hub;
}

afterEach(() => {
  vi.useRealTimers();
});

describe("streamLogs", () => {
  it("sends headers at once, retry first, then the contract's events, and closes after end", async () => {
    const { res, ctx, headers, asKoa } = fakeCtx();
    const hub = fakeHub();
    const done = streamLogs(asKoa, { hub, id: "r1", afterSeq: 4, afterPhase: "preprocessing" });
    expect(ctx.status).toBe(200);
    expect(ctx.respond).toBe(false);
    expect(res.headersFlushed).toBe(true);
    expect(headers).toEqual({
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store",
      "X-Accel-Buffering": "no",
      Connection: "keep-alive",
    });
    expect(hub.args).toEqual(["r1", 4, "preprocessing"]);
    const sink = hub.sink!;
    sink.status("running", "4:running");
    expect(sink.line({ seq: 5, stream: "stdout", ts: TS, line: "hello" })).toBe(true);
    sink.line({ seq: 6, stream: "stderr", ts: TS, line: "oops", partial: true });
    sink.status("completed", "6:completed");
    sink.end({ status: "completed", exit_code: 0 });
    await done;
    expect(res.text).toBe(
      "retry: 3000\n\n" +
        'event: status\nid: 4:running\ndata: {"status":"running"}\n\n' +
        `event: stdout\nid: 5\ndata: {"seq":5,"ts":"${TS}","line":"hello"}\n\n` +
        `event: stderr\nid: 6\ndata: {"seq":6,"ts":"${TS}","line":"oops"}\n\n` +
        'event: status\nid: 6:completed\ndata: {"status":"completed"}\n\n' +
        'event: end\ndata: {"status":"completed","exit_code":0}\n\n',
    );
    expect(res.writableEnded).toBe(true);
    expect(hub.unsubscribed).toBeGreaterThanOrEqual(1);
  });

  it("keeps every event to one data line whatever the log line holds", () => {
    const nasty = "a\r\nb\rc\n\ndata: forged\nevent: end\u2028 € 😀 \u0000";
    const text = formatLine({ seq: 9, stream: "stdout", ts: TS, line: nasty });
    const fields = text.split(/\r\n|\r|\n/);
    expect(fields).toEqual(["event: stdout", "id: 9", expect.stringMatching(/^data: /), "", ""]);
    expect(JSON.parse(fields[2]!.slice("data: ".length))).toEqual({ seq: 9, ts: TS, line: nasty });
  });

  it("passes the response's backpressure to the hub and resumes it on drain", async () => {
    const { res, asKoa } = fakeCtx();
    const hub = fakeHub();
    const done = streamLogs(asKoa, { hub, id: "r1", afterSeq: 0 });
    res.full = true;
    expect(hub.sink!.line({ seq: 1, stream: "stdout", ts: TS, line: "x" })).toBe(false);
    const resume = vi.fn();
    hub.sink!.onDrain!(resume);
    // The held line is written at the end of the turn, and the socket is still full then.
    await new Promise((r) => process.nextTick(r));
    expect(res.text).toContain('"line":"x"');
    expect(resume).not.toHaveBeenCalled();
    res.full = false;
    res.writableNeedDrain = false;
    res.emit("drain");
    expect(resume).toHaveBeenCalledTimes(1);
    res.hangUp();
    await done;
  });

  it("pauses the hub while a window holds more than the response may buffer, and resumes it once written", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "performance"] });
    const { res, asKoa } = fakeCtx();
    const hub = fakeHub();
    void streamLogs(asKoa, { hub, id: "r1", afterSeq: 0, coalesceMs: 20 });
    await new Promise((r) => process.nextTick(r));
    const big = "y".repeat(6000);
    let seq = 0;
    const more = () => hub.sink!.line({ seq: ++seq, stream: "stdout", ts: TS, line: big });
    // Inside the window after the first write: held, until they are more than the response's high-water mark.
    expect(more()).toBe(true);
    expect(more()).toBe(true);
    expect(more()).toBe(false);
    const resume = vi.fn();
    hub.sink!.onDrain!(resume);
    expect(resume).not.toHaveBeenCalled();
    vi.advanceTimersByTime(20);
    expect(res.writes.at(-1)!.split("event: stdout").length - 1).toBe(3);
    expect(resume).toHaveBeenCalledTimes(1);
    res.hangUp();
  });

  it("serialises and encodes a line once, however many subscribers it is written to", () => {
    const stringify = vi.spyOn(JSON, "stringify");
    const line = { seq: 7, stream: "stdout" as const, ts: TS, line: "shared €" };
    const first = lineEvent(line);
    for (let i = 0; i < 999; i++) expect(lineEvent(line)).toBe(first);
    expect(stringify).toHaveBeenCalledTimes(1);
    expect(first.toString("utf8")).toBe(formatLine(line));
    stringify.mockRestore();
  });

  it("sends a quiet stream's event at once, and a busy stream's events together once per window", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "performance"] });
    const { res, asKoa } = fakeCtx();
    const hub = fakeHub();
    void streamLogs(asKoa, { hub, id: "r1", afterSeq: 0, coalesceMs: 20 });
    const line = (seq: number) => ({ seq, stream: "stdout" as const, ts: TS, line: `l${seq}` });
    const tick = () => new Promise((r) => process.nextTick(r));
    await tick();
    vi.advanceTimersByTime(100);
    hub.sink!.line(line(1));
    await tick();
    expect(res.writes.at(-1)).toBe(formatLine(line(1)));
    hub.sink!.line(line(2));
    hub.sink!.line(line(3));
    await tick();
    vi.advanceTimersByTime(19);
    expect(res.text).not.toContain("l2");
    vi.advanceTimersByTime(1);
    expect(res.writes.at(-1)).toBe(formatLine(line(2)) + formatLine(line(3)));
    // The end is never held back, nor lost with what is held.
    hub.sink!.line(line(4));
    hub.sink!.end({ status: "completed", exit_code: 0 });
    expect(res.text).toContain("l4");
    expect(res.text.endsWith('event: end\ndata: {"status":"completed","exit_code":0}\n\n')).toBe(true);
  });

  it("pings every interval, and stops everything when the client leaves", async () => {
    vi.useFakeTimers();
    const { res, asKoa } = fakeCtx();
    const hub = fakeHub();
    const done = streamLogs(asKoa, { hub, id: "r1", afterSeq: 0, pingIntervalMs: 1000, retryMs: 250 });
    // What one turn writes leaves at the end of the turn.
    await new Promise((r) => process.nextTick(r));
    expect(res.chunks[0]).toBe("retry: 250\n\n");
    vi.advanceTimersByTime(2500);
    await new Promise((r) => process.nextTick(r));
    expect(res.text.split(": ping\n\n")).toHaveLength(3);
    res.hangUp();
    await done;
    expect(hub.unsubscribed).toBe(1);
    const before = res.chunks.length;
    vi.advanceTimersByTime(5000);
    // Nothing is written to a closed response, not even by a late hub call.
    hub.sink!.line({ seq: 1, stream: "stdout", ts: TS, line: "late" });
    expect(res.chunks.length).toBe(before);
  });

  it("skips pings while the client is not reading", () => {
    vi.useFakeTimers();
    const { res, asKoa } = fakeCtx();
    void streamLogs(asKoa, { hub: fakeHub(), id: "r1", afterSeq: 0, pingIntervalMs: 100 });
    res.writableNeedDrain = true;
    vi.advanceTimersByTime(1000);
    expect(res.chunks.filter((c) => c === ": ping\n\n")).toHaveLength(0);
    res.hangUp();
  });

  it("closes without end when the hub shuts down or refuses the subscription", async () => {
    const a = fakeCtx();
    const hub = fakeHub();
    const done = streamLogs(a.asKoa, { hub, id: "r1", afterSeq: 0 });
    hub.sink!.close!();
    await done;
    expect(a.res.writableEnded).toBe(true);
    expect(a.res.text).not.toContain("event: end");

    const b = fakeCtx();
    const closed = {
      subscribe(): () => void {
        throw new Error("log hub is closed");
      },
    };
    await streamLogs(b.asKoa, { hub: closed, id: "r1", afterSeq: 0 });
    expect(b.res.writableEnded).toBe(true);
  });

  it("does not subscribe for a client that is already gone", async () => {
    const { res, asKoa } = fakeCtx();
    res.destroyed = true;
    res.socket.destroyed = true;
    const hub = fakeHub();
    await streamLogs(asKoa, { hub, id: "r1", afterSeq: 0 });
    expect(hub.sink).toBeNull();
  });
});

describe("parseAfter", () => {
  const isRunPhase = (p: string) => ["pending", "preprocessing", "running", "completed", "failed", "cancelled"].includes(p);
  // Every id form, with and without a setup phase (a run's stream has one, an analysis's none).
  it.each<[string | undefined, string | undefined, number, string | null, number | null, string | null]>([
    [undefined, undefined, 0, null, null, null],
    ["", undefined, 0, null, null, null],
    [undefined, "0", 0, null, null, null],
    [undefined, "42", 42, null, null, null],
    ["17", undefined, 17, null, null, null],
    ["17", "3", 17, null, null, null],
    [" 17 ", undefined, 17, null, null, null],
    ["", "5", 5, null, null, null],
    [undefined, "007", 7, null, null, null],
    ["9007199254740991", undefined, 9007199254740991, null, null, null],
    // A status event's id: the last line's seq before it, and its phase.
    ["0:pending", undefined, 0, "pending", null, null],
    ["12:completed", "3", 12, "completed", null, null],
    [undefined, "0:preprocessing", 0, "preprocessing", null, null],
    // The same ids where the stream has setup events.
    [undefined, undefined, 0, null, null, "preprocessing"],
    ["17", undefined, 17, null, null, "preprocessing"],
    ["0:pending", undefined, 0, "pending", null, "preprocessing"],
    [undefined, "0:preprocessing", 0, "preprocessing", null, "preprocessing"],
    ["12:completed", undefined, 12, "completed", null, "preprocessing"],
    // A setup event's id: phases after preprocessing, setup lines after n.
    ["0:preprocessing/42", undefined, 0, "preprocessing", 42, "preprocessing"],
    [" 0:preprocessing/1 ", undefined, 0, "preprocessing", 1, "preprocessing"],
    [undefined, "0:preprocessing/0", 0, "preprocessing", 0, "preprocessing"],
    [undefined, "0:preprocessing/007", 0, "preprocessing", 7, "preprocessing"],
    ["0:preprocessing/3", "0:preprocessing/9", 0, "preprocessing", 3, "preprocessing"],
    ["", "5:preprocessing/9007199254740991", 5, "preprocessing", 9007199254740991, "preprocessing"],
  ])("Last-Event-ID %j, after %j → %d, %j, setup %j (setup phase %j)", (header, query, seq, phase, setup, setupPhase) => {
    expect(parseAfter(header, query, isRunPhase, setupPhase)).toEqual({ seq, phase, setup });
  });

  it.each<[string | undefined, string | undefined, string, string | null]>([
    ["-1", undefined, "header", null],
    ["abc", "3", "header", null],
    ["1.5", undefined, "header", null],
    ["9007199254740992", undefined, "header", null],
    ["3:", undefined, "header", null],
    ["3:sleeping", undefined, "header", null],
    [":running", undefined, "header", null],
    [undefined, "", "query", null],
    [undefined, "1e3", "query", null],
    [undefined, "-0", "query", null],
    [undefined, "2:running:x", "query", null],
    // A setup id where the stream has none (an analysis's).
    ["0:preprocessing/4", undefined, "header", null],
    [undefined, "0:preprocessing/4", "query", null],
  ])("Last-Event-ID %j, after %j → error in the %s (setup phase %j)", (header, query, where, setupPhase) => {
    const r = parseAfter(header, query, isRunPhase, setupPhase);
    expect(r).toMatchObject({ error: expect.stringContaining("non-negative integer or <seq>:<phase>"), loc: [where, expect.any(String)] });
  });

  it.each<[string | undefined, string | undefined, string]>([
    ["0:preprocessing/", undefined, "header"],
    ["0:preprocessing/-1", undefined, "header"],
    ["0:preprocessing/1.5", undefined, "header"],
    ["0:preprocessing/x", undefined, "header"],
    ["0:preprocessing/9007199254740992", undefined, "header"],
    ["0:preprocessing/1/2", undefined, "header"],
    ["0:running/3", undefined, "header"],
    ["0:pending/3", undefined, "header"],
    ["0:/3", undefined, "header"],
    ["/3", undefined, "header"],
    ["x:preprocessing/3", undefined, "header"],
    [undefined, "0:preprocessing/ 3", "query"],
    [undefined, "0:sleeping/3", "query"],
  ])("Last-Event-ID %j, after %j → error in the %s on a stream with setup", (header, query, where) => {
    const r = parseAfter(header, query, isRunPhase, "preprocessing");
    expect(r).toMatchObject({ error: expect.stringContaining("<seq>:preprocessing/<n>"), loc: [where, expect.any(String)] });
  });
});
