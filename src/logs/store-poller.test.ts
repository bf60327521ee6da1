import { describe, expect, it, vi } from "vitest";
import { createRootLogger } from "../logger.ts";
import type { LogLine, LogStore } from "./contracts.ts";
import { StorePoller } from "./store-poller.ts";

const mk = (seq: number): LogLine => ({ seq, stream: "stdout", ts: "2026-11-22T04:13:09.123Z", line: `line ${seq}` });
const ID = "0190f0f0-0000-7000-8000-000000000001";
const until = (fn: () => void) => vi.waitFor(fn, { timeout: 2000, interval: 5 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function fakeStore() {
  const store = {
    lines: [] as LogLine[],
    reads: [] as [string, number, number][],
    failNext: 0,
    async readLines(id: string, afterSeq: number, limit: number) {
      store.reads.push([id, afterSeq, limit]);
      if (store.failNext > 0) {
        store.failNext--;
        throw new Error("connection reset");
      }
      return store.lines.filter((l) => l.seq > afterSeq).slice(0, limit);
    },
    async maxSeq() {
      return store.lines.at(-1)?.seq ?? 0;
    },
    async readState() {
      return null;
    },
    phases: { all: ["running", "completed"], live: ["running"] },
  };
  return store satisfies LogStore;
}

describe("StorePoller", () => {
  it("pages through what is stored after afterSeq, then picks up new lines, until stopped", async () => {
    const store = fakeStore();
    store.lines.push(...[1, 2, 3, 4, 5].map(mk));
    const got: number[] = [];
    const stop = new StorePoller(store, 5, 2, createRootLogger("silent")).follow(ID, 1, (l) => got.push(l.seq));
    await until(() => expect(got).toEqual([2, 3, 4, 5]));
    // A full page is followed at once by the next; a short one waits for the next tick.
    expect(store.reads.slice(0, 3)).toEqual([
      [ID, 1, 2],
      [ID, 3, 2],
      [ID, 5, 2],
    ]);
    store.lines.push(mk(6), mk(8));
    await until(() => expect(got).toEqual([2, 3, 4, 5, 6, 8]));
    stop();
    const reads = store.reads.length;
    store.lines.push(mk(9));
    await sleep(40);
    expect(got).toEqual([2, 3, 4, 5, 6, 8]);
    expect(store.reads.length).toBe(reads);
  });

  it("keeps polling after a failed read, from where it was", async () => {
    const store = fakeStore();
    store.lines.push(mk(1));
    store.failNext = 2;
    const got: number[] = [];
    const stop = new StorePoller(store, 5, 10, createRootLogger("silent")).follow(ID, 0, (l) => got.push(l.seq));
    await until(() => expect(got).toEqual([1]));
    expect(store.reads.slice(0, 3).map((r) => r[1])).toEqual([0, 0, 0]);
    stop();
  });
});
