import { describe, expect, it } from "vitest";
import { BLOCK, LogStore, MAX_BLOCKS, type LogLine } from "./logstore.ts";

const line = (seq: number): LogLine => ({ seq, ts: "2026-01-01T00:00:00.000Z", stream: seq % 2 ? "stdout" : "stderr", line: `l${seq}` });
const lines = (from: number, to: number, skip: (s: number) => boolean = () => false) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i)
    .filter((s) => !skip(s))
    .map(line);

describe("LogStore: the whole log by blocks of seqs", () => {
  it("reads a block once, and tells gaps (null) from what is not read (undefined)", () => {
    const s = new LogStore();
    s.lastSeq = 2500;
    expect(s.wants(1)).toBe(true);
    s.loading(0);
    expect(s.wants(5)).toBe(false);
    s.fill(
      0,
      lines(1, BLOCK, (x) => x >= 10 && x < 20),
      2500,
    );
    expect(s.get(9)).toEqual(line(9));
    expect(s.get(10)).toBeNull();
    expect(s.get(1001)).toBeUndefined();
    expect(s.wants(1)).toBe(false);
    expect(s.wants(1001)).toBe(true);
  });

  it("reads a block again when it was read short of what is stored now", () => {
    const s = new LogStore();
    s.fill(0, lines(1, 300), 300);
    expect(s.get(301)).toBeUndefined();
    expect(s.wants(1)).toBe(false);
    s.lastSeq = 400; // more was stored since (before the live stream's start)
    s.liveAfter = 400;
    expect(s.wants(1)).toBe(true);
  });

  it("takes live lines after liveAfter once each, a line it did not send being a gap", () => {
    const s = new LogStore();
    s.fill(0, lines(1, 10), 10);
    s.liveAfter = 10;
    expect(s.addLive(line(11))).toBe(true);
    expect(s.addLive(line(11))).toBe(false);
    expect(s.addLive(line(13))).toBe(true);
    expect(s.duplicates).toBe(1);
    expect(s.get(12)).toBeNull();
    expect(s.lastSeq).toBe(13);
    expect(s.wants(12)).toBe(false);
  });

  it("keeps a read block's live lines when it is read again", () => {
    const s = new LogStore();
    s.liveAfter = 5;
    s.addLive(line(6));
    s.fill(0, lines(1, 5), 6);
    expect([1, 5, 6].map((x) => s.get(x)?.line)).toEqual(["l1", "l5", "l6"]);
  });

  it("forgets the least recently used blocks beyond MAX_BLOCKS, never the last", () => {
    const s = new LogStore();
    const total = (MAX_BLOCKS + 10) * BLOCK;
    s.lastSeq = total;
    s.fill(0, lines(1, BLOCK), total);
    for (let k = 1; k < MAX_BLOCKS + 10; k++) {
      s.get(1); // block 0 used again and again
      s.fill(k, [line(k * BLOCK + 1)], total);
    }
    expect(s.blockCount).toBe(MAX_BLOCKS);
    expect(s.get(1)).toEqual(line(1));
    expect(s.get(BLOCK + 1)).toBeUndefined();
    expect(s.wants(BLOCK + 1)).toBe(true);
    expect(s.get(total - BLOCK + 1)).toEqual(line(total - BLOCK + 1));
  });
});
