import { describe, expect, it } from "vitest";
import { ATTEMPT_SEQ_STRIDE as S, SeqSegments, segmentOf, segmentStart } from "./logsegments.ts";

describe("log segments (a retried run's seq ranges, one per attempt)", () => {
  it("finds an attempt's range by seq, as first_seq has it", () => {
    expect([1, S - 1, S, S + 1, 2 * S].map(segmentOf)).toEqual([0, 0, 1, 1, 2]);
    expect([0, 1, 2].map(segmentStart)).toEqual([1, S, 2 * S]);
  });

  it("is the identity for a run of one attempt", () => {
    const g = new SeqSegments();
    for (const s of [1, 2, 500, 123_456]) {
      expect(g.pos(s)).toBe(s);
      expect(g.seq(s)).toBe(s);
    }
    expect(g.count(0)).toBe(0);
    expect(g.count(42)).toBe(42);
  });

  // Each case: the ends of the attempts before the last, the last seq known, and every seq that has a row, in order.
  const cases: { name: string; ends: number[]; last: number; seqs: number[] }[] = [
    { name: "attempt 2 after attempt 1's 3 lines", ends: [3], last: S + 2, seqs: [1, 2, 3, S, S + 1, S + 2] },
    { name: "attempt 1 wrote nothing", ends: [0], last: S + 1, seqs: [S, S + 1] },
    { name: "three attempts", ends: [2, S + 1], last: 2 * S + 1, seqs: [1, 2, S, S + 1, 2 * S, 2 * S + 1] },
    { name: "attempt 2 with only its marker, attempt 3 going on", ends: [1, S], last: 2 * S, seqs: [1, S, 2 * S] },
  ];
  for (const c of cases)
    it(`maps seqs to dense rows and back: ${c.name}`, () => {
      const g = new SeqSegments();
      c.ends.forEach((e, k) => expect(g.end(k, e)).toBe(true));
      expect(g.placed).toBe(c.ends.length + 1);
      expect(g.count(c.last)).toBe(c.seqs.length);
      c.seqs.forEach((seq, i) => {
        expect(g.pos(seq)).toBe(i + 1);
        expect(g.seq(i + 1)).toBe(seq);
        expect(g.has(seq)).toBe(true);
      });
    });

  it("places a segment once, after the one before it, and never moves what is placed", () => {
    const g = new SeqSegments();
    expect(g.end(1, 5)).toBe(false); // segment 0 first
    expect(g.pos(S + 3)).toBe(0); // attempt 2 not placed: nothing of it has a row yet
    expect(g.has(S + 3)).toBe(false);
    expect(g.end(0, 7)).toBe(true);
    expect(g.end(0, 9)).toBe(false);
    expect(g.endOf(0)).toBe(7);
    expect(g.pos(7)).toBe(7);
    expect(g.pos(S)).toBe(8);
    // A seq past a placed segment's end (none there) takes that end's row.
    expect(g.pos(S - 1)).toBe(7);
    expect(g.end(1, S + 99)).toBe(true);
    expect(g.pos(S + 99)).toBe(107);
    expect(g.seq(108)).toBe(2 * S);
    expect(g.pos(S)).toBe(8);
  });
});
