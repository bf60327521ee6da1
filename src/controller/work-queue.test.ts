import { describe, expect, it } from "vitest";
import { WorkQueue } from "./work-queue.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("WorkQueue", () => {
  it("coalesces repeated adds of a queued key", async () => {
    const seen: string[] = [];
    const q = new WorkQueue(
      async (k) => {
        seen.push(k);
        await sleep(10);
      },
      { concurrency: 1 },
    );
    q.add("busy");
    q.add("a");
    q.add("b");
    q.add("b");
    q.add("a");
    await q.idle();
    expect(seen).toEqual(["busy", "a", "b"]);
  });

  it("never runs one key twice at once, and reruns it once when it changed meanwhile", async () => {
    let concurrent = 0;
    let maxConcurrent = 0;
    let runs = 0;
    const q = new WorkQueue(
      async () => {
        concurrent++;
        runs++;
        maxConcurrent = Math.max(maxConcurrent, concurrent);
        await sleep(20);
        concurrent--;
      },
      { concurrency: 4 },
    );
    q.add("k");
    await sleep(5);
    q.add("k");
    q.add("k");
    await sleep(60);
    await q.idle();
    expect(maxConcurrent).toBe(1);
    expect(runs).toBe(2);
  });

  it("runs different keys in parallel up to the concurrency", async () => {
    let concurrent = 0;
    let max = 0;
    const q = new WorkQueue(
      async () => {
        max = Math.max(max, ++concurrent);
        await sleep(20);
        concurrent--;
      },
      { concurrency: 3 },
    );
    for (let i = 0; i < 10; i++) q.add(`k${i}`);
    await sleep(5);
    await q.idle();
    expect(max).toBe(3);
  });

  it("retries failures with growing delays, then succeeds", async () => {
    const times: number[] = [];
    const errors: number[] = [];
    const q = new WorkQueue(
      async () => {
        times.push(Date.now());
        if (times.length < 3) throw new Error("not yet");
      },
      { concurrency: 1, baseDelayMs: 20, onError: (_k, _e, attempt) => errors.push(attempt) },
    );
    q.add("x");
    await sleep(200);
    expect(times).toHaveLength(3);
    expect(errors).toEqual([1, 2]);
    expect(times[2]! - times[1]!).toBeGreaterThanOrEqual(times[1]! - times[0]! - 5);
  });

  it("stops taking work after stop()", async () => {
    const seen: string[] = [];
    const q = new WorkQueue(async (k) => void seen.push(k), { concurrency: 1 });
    await q.stop();
    q.add("late");
    await sleep(10);
    expect(seen).toEqual([]);
  });

  it("gives up on a key after maxAttempts failures that are not transient, once, and stops retrying it", async () => {
    let attempts = 0;
    const gaveUp: string[] = [];
    const q = new WorkQueue(
      async () => {
        attempts++;
        throw new TypeError("a bug");
      },
      { concurrency: 1, baseDelayMs: 1, maxDelayMs: 2, maxAttempts: 3, transient: () => false, onGiveUp: async (k) => void gaveUp.push(k) },
    );
    q.add("k");
    await sleep(100);
    expect(attempts).toBe(3);
    expect(gaveUp).toEqual(["k"]);
    await q.stop();
  });

  it("retries transient failures without giving up, and counts only the hopeless ones in a row", async () => {
    let attempts = 0;
    const gaveUp: string[] = [];
    const q = new WorkQueue(
      async () => {
        attempts++;
        if (attempts <= 6) throw Object.assign(new Error("refused"), { code: "ECONNREFUSED" });
        if (attempts <= 8) throw new TypeError("a bug");
      },
      {
        concurrency: 1,
        baseDelayMs: 1,
        maxDelayMs: 2,
        maxAttempts: 3,
        transient: (e) => (e as { code?: string }).code === "ECONNREFUSED",
        onGiveUp: async (k) => void gaveUp.push(k),
      },
    );
    q.add("k");
    await sleep(150);
    expect(attempts).toBe(9);
    expect(gaveUp).toEqual([]);
    await q.stop();
  });
});
