import { describe, expect, it } from "vitest";
import { groupMarker, LogGroups } from "./loggroups.ts";

/** Every row's seq, the slow way: seqs 1..last without the collapsed groups' inner lines. */
function visible(g: LogGroups, last: number, hidden: (seq: number) => boolean): number[] {
  const out: number[] = [];
  for (let s = 1; s <= last; s++) if (!hidden(s)) out.push(s);
  return out;
}

describe("log groups", () => {
  it("reads the markers GitHub Actions prints, at a line's start", () => {
    expect(groupMarker("::group::Install deps ")).toEqual({ kind: "start", title: "Install deps" });
    expect(groupMarker("::endgroup::")).toEqual({ kind: "end" });
    expect(groupMarker("  ::endgroup::")).toBeNull();
    expect(groupMarker("echo ::group::x")).toBeNull();
  });

  it("collapses a finished group to its title row and maps rows to seqs both ways", () => {
    const g = new LogGroups();
    // 1 text, 2 ::group::A, 3-5 inside, 6 ::endgroup::, 7 text, 8 ::group::B, 9-10 inside, 11 ::group::C (ends B at 10), 12 inside (C still open)
    const lines: Record<number, string> = { 2: "::group::A", 6: "::endgroup::", 8: "::group::B", 11: "::group::C" };
    for (let s = 1; s <= 12; s++) g.add(s, lines[s] ?? `line ${s}`);
    expect(g.at(2)).toMatchObject({ end: 6, collapsed: true });
    expect(g.at(8)).toMatchObject({ end: 10, collapsed: true });
    expect(g.at(11)).toMatchObject({ end: null, collapsed: false });
    const want = visible(g, 12, (s) => (s >= 3 && s <= 6) || (s >= 9 && s <= 10));
    expect(want).toEqual([1, 2, 7, 8, 11, 12]);
    expect(g.rows(12)).toBe(want.length);
    want.forEach((seq, row) => {
      expect(g.seqAt(row)).toBe(seq);
      expect(g.rowOf(seq)).toBe(row);
    });
    // A hidden line's row is its group's title row.
    expect(g.rowOf(4)).toBe(1);
    expect(g.rowOf(10)).toBe(3);
    // Opened by the reader: its lines come back; it stays open.
    expect(g.toggle(2)).toBe(true);
    expect(g.rows(12)).toBe(10);
    expect(g.seqAt(2)).toBe(3);
    expect(g.rowOf(7)).toBe(6);
    // An open group cannot be collapsed; reveal opens the group a line is hidden in.
    expect(g.toggle(11)).toBe(false);
    expect(g.reveal(9)).toBe(true);
    expect(g.rows(12)).toBe(12);
  });

  it("ignores a marker seen twice and an end without a group", () => {
    const g = new LogGroups();
    expect(g.add(1, "::endgroup::")).toBe(false);
    expect(g.add(2, "::group::x")).toBe(true);
    expect(g.add(2, "::group::x")).toBe(false);
    expect(g.add(5, "::endgroup::")).toBe(true);
    expect(g.rows(10)).toBe(7);
  });

  it("maps rows over thousands of groups the same as the slow way", () => {
    const g = new LogGroups();
    const hidden = new Set<number>();
    let s = 1;
    while (s < 20_000) {
      const len = 1 + ((s * 7) % 13);
      g.add(s, "::group::g");
      g.add(s + len, "::endgroup::");
      for (let k = s + 1; k <= s + len; k++) hidden.add(k);
      s += len + 1 + (s % 3);
    }
    const want = visible(g, 20_000, (x) => hidden.has(x));
    expect(g.rows(20_000)).toBe(want.length);
    for (let row = 0; row < want.length; row += 97) expect(g.seqAt(row)).toBe(want[row]);
    for (let row = 0; row < want.length; row += 89) expect(g.rowOf(want[row]!)).toBe(row);
  });

  it("ends a group still open when its attempt ends (a retried run's lost attempt)", () => {
    const g = new LogGroups();
    // Rows are positions (logsegments.ts): attempt 1 is 1-4 with a group opened at 2 and never closed; attempt 2 starts at 5.
    g.add(2, "::group::setup");
    expect(g.cut(1)).toBe(false); // before the group: nothing to end
    expect(g.cut(4)).toBe(true);
    expect(g.at(2)).toMatchObject({ end: 4, collapsed: true });
    expect(g.cut(4)).toBe(false);
    // Attempt 2's own group is another, and the lines between are rows of their own.
    g.add(6, "::group::setup");
    g.add(8, "::endgroup::");
    expect(g.rows(9)).toBe(5);
    expect([0, 1, 2, 3, 4].map((r) => g.seqAt(r))).toEqual([1, 2, 5, 6, 9]);
  });
});
