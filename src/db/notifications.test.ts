import { spawn } from "node:child_process";
import { once } from "node:events";
import { connect } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { barrier } from "./notifications.ts";

/** A connection whose round trips the test answers: each query waits until the test settles it. */
function fakeConnection() {
  const sent: { settle: (err?: Error) => void }[] = [];
  return {
    sent,
    query: ((text: string) => {
      expect(text).toBe("");
      return new Promise((resolve, reject) => sent.push({ settle: (err) => (err ? reject(err) : resolve({})) }));
    }) as never,
  };
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const state = (p: Promise<void>) => {
  const s = { done: false, failed: false };
  p.then(
    () => (s.done = true),
    () => (s.failed = true),
  );
  return s;
};

describe("the revocation barrier's round trips", () => {
  it("sends one round trip for the callers of one turn, after they called, and releases them when it is answered", async () => {
    const c = fakeConnection();
    const sync = barrier(c);
    const a = state(sync());
    const b = state(sync());
    // Nothing is sent while the turn goes on: a caller later in the turn still joins.
    expect(c.sent).toHaveLength(0);
    const later = state(sync());
    await turn();
    await turn();
    expect(c.sent).toHaveLength(1);
    expect([a.done, b.done, later.done]).toEqual([false, false, false]);
    c.sent[0]!.settle();
    await turn();
    expect([a.done, b.done, later.done]).toEqual([true, true, true]);
  });

  it("makes a caller who comes while a round trip is on the wire wait for the next one, sent once the first is answered", async () => {
    const c = fakeConnection();
    const sync = barrier(c);
    const first = state(sync());
    await turn();
    await turn();
    expect(c.sent).toHaveLength(1);
    // Sent before this caller came: its answer proves nothing to it.
    const second = state(sync());
    const third = state(sync());
    await turn();
    expect(c.sent).toHaveLength(1);
    c.sent[0]!.settle();
    await turn();
    await turn();
    expect(first.done).toBe(true);
    expect([second.done, third.done]).toEqual([false, false]);
    expect(c.sent).toHaveLength(2);
    c.sent[1]!.settle();
    await turn();
    expect([second.done, third.done]).toEqual([true, true]);
  });

  it("fails its callers when the round trip fails, and the next caller gets a new one", async () => {
    const c = fakeConnection();
    const sync = barrier(c);
    const a = state(sync());
    await turn();
    await turn();
    c.sent[0]!.settle(new Error("connection lost"));
    await turn();
    expect(a.failed).toBe(true);
    const b = state(sync());
    await turn();
    await turn();
    expect(c.sent).toHaveLength(2);
    c.sent[1]!.settle();
    await turn();
    expect(b.done).toBe(true);
  });
});

describe("the revocation barrier on a connection that stops answering", () => {
  afterEach(() => void vi.useRealTimers());

  it("fails its callers and calls onStuck once when a round trip goes unanswered for the timeout, and fails later callers at once", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const c = fakeConnection();
    const stuck: Error[] = [];
    const sync = barrier(c, { timeoutMs: 5000, onStuck: (err) => stuck.push(err) });
    const a = state(sync());
    await turn();
    await turn();
    expect(c.sent).toHaveLength(1);
    // Waiting behind the one on the wire.
    const b = state(sync());
    await vi.advanceTimersByTimeAsync(4999);
    expect([a.failed, b.failed, stuck.length]).toEqual([false, false, 0]);
    await vi.advanceTimersByTimeAsync(1);
    await turn();
    await turn();
    expect([a.failed, b.failed, stuck.length]).toEqual([true, true, 1]);
    expect(stuck[0]!.message).toMatch(/did not answer a round trip within 5000 ms/);
    const later = state(sync());
    await turn();
    expect(later.failed).toBe(true);
    // Nothing more is sent on a connection taken for stuck, and an answer coming late changes nothing.
    c.sent[0]!.settle();
    await turn();
    expect(c.sent).toHaveLength(1);
    expect(stuck).toHaveLength(1);
  });

  it("never trips while round trips are answered, however long the barrier lives", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    const c = fakeConnection();
    const stuck: Error[] = [];
    const sync = barrier(c, { timeoutMs: 5000, onStuck: (err) => stuck.push(err) });
    for (let i = 0; i < 4; i++) {
      const s = state(sync());
      await turn();
      await turn();
      // Answered after 4 s each: 16 s in all, none of them 5.
      await vi.advanceTimersByTimeAsync(4000);
      c.sent[i]!.settle();
      await turn();
      expect(s.done).toBe(true);
    }
    await vi.advanceTimersByTimeAsync(60_000);
    expect(stuck).toHaveLength(0);
    const last = state(sync());
    await turn();
    await turn();
    c.sent[4]!.settle();
    await turn();
    expect(last.done).toBe(true);
  });
});

describe("the revocation barrier's costs and false alarms", () => {
  it("keeps nothing of a round trip once it is answered (a promise raced against a long-lived one kept about 300 bytes each)", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const heap = () => {
      gc();
      gc();
      return process.memoryUsage().heapUsed;
    };
    const sync = barrier({ query: (() => Promise.resolve({})) as never });
    for (let i = 0; i < 1000; i++) await sync();
    const before = heap();
    const n = 50_000;
    for (let i = 0; i < n; i++) await sync();
    const perRoundTrip = (heap() - before) / n;
    expect(perRoundTrip, `${perRoundTrip.toFixed(1)} bytes kept per round trip`).toBeLessThan(30);
  }, 120_000);

  it("does not take an answer that came while the event loop was held up past the timeout for none", async () => {
    // The answering side is another process, as Postgres is: its answer is in the socket when the loop comes back.
    const echo = spawn(
      process.execPath,
      [
        "-e",
        `const s = require("node:net").createServer((c) => c.on("data", (d) => c.write(d)).on("error", () => {}));
         s.listen(0, "127.0.0.1", () => console.log(s.address().port));`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      const port = Number((await once(echo.stdout, "data")).toString());
      const sock = connect(port, "127.0.0.1");
      await once(sock, "connect");
      const waiting: (() => void)[] = [];
      sock.on("data", (d: Buffer) => {
        for (let i = 0; i < d.length; i++) waiting.shift()?.();
      });
      const c = {
        query: () => {
          const answered = new Promise<object>((resolve) => waiting.push(() => resolve({})));
          sock.write("x");
          return answered;
        },
      };
      let stuck = 0;
      const sync = barrier(c as never, { timeoutMs: 200, onStuck: () => stuck++ });
      const first = sync();
      await turn();
      await turn();
      // Held up for longer than the timeout, while the answer arrives.
      const until = performance.now() + 400;
      while (performance.now() < until);
      await first;
      expect(stuck).toBe(0);
      await sync();
      expect(stuck).toBe(0);
      sock.destroy();
    } finally {
      echo.kill();
    }
  }, 60_000);
});
