import { describe, expect, it } from "vitest";
import type { LogLine } from "./contracts.ts";
import { Ring } from "./ring.ts";

const mk = (seq: number): LogLine => ({ seq, stream: "stdout", ts: "2026-11-22T04:13:09.123Z", line: `line ${seq}` });

/** A push (a seq) or a reset to a new floor. */
type Op = number | { reset: number };

interface Case {
  name: string;
  size: number;
  ops: Op[];
  seqs: number[];
  floor: number;
  /** [seq, index of the first line with a greater seq] */
  firstAfter: [number, number][];
}

const cases: Case[] = [
  {
    name: "empty",
    size: 3,
    ops: [],
    seqs: [],
    floor: 0,
    firstAfter: [
      [0, 0],
      [5, 0],
    ],
  },
  {
    name: "below capacity: keeps every line above the floor it was reset to",
    size: 4,
    ops: [{ reset: 10 }, 11, 12, 13],
    seqs: [11, 12, 13],
    floor: 10,
    firstAfter: [
      [0, 0],
      [10, 0],
      [11, 1],
      [12, 2],
      [13, 3],
      [99, 3],
    ],
  },
  {
    name: "exactly full: nothing dropped yet",
    size: 3,
    ops: [1, 2, 3],
    seqs: [1, 2, 3],
    floor: 0,
    firstAfter: [
      [0, 0],
      [2, 2],
      [3, 3],
    ],
  },
  {
    name: "overflow drops the oldest and raises the floor to it",
    size: 3,
    ops: [1, 2, 3, 4, 5],
    seqs: [3, 4, 5],
    floor: 2,
    firstAfter: [
      [1, 0],
      [2, 0],
      [3, 1],
      [4, 2],
      [5, 3],
    ],
  },
  {
    name: "wraps around more than once",
    size: 3,
    ops: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    seqs: [8, 9, 10],
    floor: 7,
    firstAfter: [
      [7, 0],
      [8, 1],
      [9, 2],
      [10, 3],
    ],
  },
  {
    name: "seqs with gaps: firstAfter finds the next present seq",
    size: 3,
    ops: [2, 5, 9, 14],
    seqs: [5, 9, 14],
    floor: 2,
    firstAfter: [
      [4, 0],
      [5, 1],
      [6, 1],
      [9, 2],
      [13, 2],
      [14, 3],
    ],
  },
  {
    name: "size 1",
    size: 1,
    ops: [4, 7],
    seqs: [7],
    floor: 4,
    firstAfter: [
      [4, 0],
      [6, 0],
      [7, 1],
    ],
  },
  {
    name: "reset after wrapping forgets the old lines",
    size: 3,
    ops: [1, 2, 3, 4, { reset: 20 }, 21, 22],
    seqs: [21, 22],
    floor: 20,
    firstAfter: [
      [3, 0],
      [20, 0],
      [21, 1],
      [22, 2],
    ],
  },
  {
    name: "reset, then overflow again",
    size: 2,
    ops: [1, 2, 3, { reset: 50 }, 51, 52, 53],
    seqs: [52, 53],
    floor: 51,
    firstAfter: [
      [51, 0],
      [52, 1],
      [53, 2],
    ],
  },
];

describe("Ring", () => {
  it.each(cases)("$name", ({ size, ops, seqs, floor, firstAfter }) => {
    const ring = new Ring(size);
    let sinceReset: number[] = [];
    for (const op of ops) {
      if (typeof op === "number") {
        ring.push(mk(op));
        sinceReset.push(op);
      } else {
        ring.reset(op.reset);
        sinceReset = [];
      }
    }
    expect(ring.length).toBe(seqs.length);
    expect(Array.from({ length: ring.length }, (_, i) => ring.at(i))).toEqual(seqs.map(mk));
    expect(ring.floor).toBe(floor);
    // The promise the channel relies on: every line pushed since the reset with seq > floor is held.
    expect(sinceReset.filter((s) => s > ring.floor)).toEqual(seqs);
    for (const [seq, index] of firstAfter) expect(ring.firstAfter(seq), `firstAfter(${seq})`).toBe(index);
  });
});
