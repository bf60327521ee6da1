import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FetchSlots, GitBusyError } from "./fetch-slots.ts";

// Fetches are stand-ins that finish when the test says so; the clock is fake,
// so waits and timeouts are exact.

interface Job {
  account: string;
  name: string;
  started: boolean;
  finish: () => void;
  result: Promise<string>;
}

function harness(opts: { total: number; perAccount: number; maxWaitMs: number }) {
  const slots = new FetchSlots(opts);
  const order: string[] = [];
  const start = (account: string, name = account): Job => {
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const job: Job = { account, name, started: false, finish: () => finish(), result: Promise.resolve("") };
    job.result = slots.run(account, async () => {
      job.started = true;
      order.push(name);
      await done;
      return name;
    });
    job.result.catch(() => {}); // inspected by the tests that expect a rejection
    return job;
  };
  return { slots, start, order };
}

const settle = () => vi.advanceTimersByTimeAsync(0);

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("FetchSlots", () => {
  it("never gives one account more than its share, so another account starts at once", async () => {
    const { slots, start } = harness({ total: 4, perAccount: 2, maxWaitMs: 10_000 });
    const alice = [1, 2, 3, 4, 5].map((i) => start("alice", `alice-${i}`));
    await settle();
    expect(alice.map((j) => j.started)).toEqual([true, true, false, false, false]);
    const bob = start("bob");
    await settle();
    expect(bob.started).toBe(true);
    expect(slots.running()).toBe(3);
    expect(slots.running("alice")).toBe(2);
    expect(slots.waiting("alice")).toBe(3);
  });

  it("hands freed slots to waiting accounts in turn, not first come first served", async () => {
    const { start, order } = harness({ total: 1, perAccount: 1, maxWaitMs: 60_000 });
    const first = start("alice", "a0");
    await settle();
    const jobs = [start("alice", "a1"), start("alice", "a2"), start("alice", "a3"), start("bob", "b1"), start("bob", "b2"), start("carol", "c1")];
    const finished = new Set<Job>();
    first.finish();
    for (let i = 0; i < jobs.length; i++) {
      await settle();
      const now = jobs.find((j) => j.started && !finished.has(j))!;
      finished.add(now);
      now.finish();
    }
    await settle();
    expect(order).toEqual(["a0", "a1", "b1", "c1", "a2", "b2", "a3"]);
  });

  it("refuses a fetch that waited maxWaitMs with GitBusyError and Retry-After, and never runs it later", async () => {
    const { slots, start } = harness({ total: 2, perAccount: 1, maxWaitMs: 3_000 });
    const running = start("alice", "running");
    const waiting = start("alice", "waiting");
    await vi.advanceTimersByTimeAsync(2_999);
    expect(waiting.started).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const err = await waiting.result.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitBusyError);
    expect((err as GitBusyError).kind).toBe("unavailable");
    expect((err as GitBusyError).retryAfterSeconds).toBe(3);
    expect(slots.waiting()).toBe(0);
    running.finish();
    await settle();
    expect(waiting.started).toBe(false);
    expect(slots.running()).toBe(0);
  });

  it("loses no slot to failures, timeouts or throws", async () => {
    const { slots, start } = harness({ total: 2, perAccount: 2, maxWaitMs: 1_000 });
    const failing = slots.run("alice", async () => {
      throw new Error("git failed");
    });
    await expect(failing).rejects.toThrow("git failed");
    const a = start("alice");
    const b = start("alice");
    const c = start("alice"); // times out
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(c.result).rejects.toBeInstanceOf(GitBusyError);
    a.finish();
    b.finish();
    await settle();
    expect(slots.running()).toBe(0);
    const d = start("bob");
    const e = start("bob");
    await settle();
    expect([d.started, e.started]).toEqual([true, true]);
  });

  it("caps the per-account share at the total", async () => {
    const { start } = harness({ total: 1, perAccount: 5, maxWaitMs: 1_000 });
    const a = start("alice");
    const b = start("alice");
    await settle();
    expect([a.started, b.started]).toEqual([true, false]);
  });
});
