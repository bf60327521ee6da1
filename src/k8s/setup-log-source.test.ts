import type { V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { installState, LineSplitter, splitTimestamp } from "./setup-log-source.ts";

const NOW = new Date("2026-11-26T13:10:00.000Z");

describe("splitTimestamp", () => {
  it.each<[string, string, string]>([
    ["2026-11-26T13:00:01.234567890Z Collecting click==8.5.1", "2026-11-26T13:00:01.234Z", "Collecting click==8.5.1"],
    ["2026-11-26T13:00:01Z no fraction", "2026-11-26T13:00:01.000Z", "no fraction"],
    ["2026-11-26T13:00:01.5Z short fraction", "2026-11-26T13:00:01.500Z", "short fraction"],
    ["2026-11-26T14:00:01.234+01:00 an offset", "2026-11-26T13:00:01.234Z", "an offset"],
    ["2026-11-26T13:00:01.234567890Z ", "2026-11-26T13:00:01.234Z", ""],
    ["2026-11-26T13:00:01.234567890Z  two spaces kept", "2026-11-26T13:00:01.234Z", " two spaces kept"],
    [
      "2026-11-26T13:00:01.234567890Z 2026-11-26T13:00:00Z a line that starts with a time",
      "2026-11-26T13:00:01.234Z",
      "2026-11-26T13:00:00Z a line that starts with a time",
    ],
    // No time (it should not happen): the whole text, at the time it was read.
    ["plain text", NOW.toISOString(), "plain text"],
    ["", NOW.toISOString(), ""],
    ["2026-13-45T99:99:99Z impossible", NOW.toISOString(), "impossible"],
  ])("%j → %s %j", (raw, ts, text) => {
    expect(splitTimestamp(raw, () => NOW)).toEqual({ ts, text });
  });
});

describe("LineSplitter", () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  it.each<[string, string[], string[], string[]]>([
    ["whole lines", ["a\nb\n"], ["a", "b"], []],
    ["a line across chunks", ["ab", "c\nd"], ["abc"], ["d"]],
    ["an empty line", ["\n\n"], ["", ""], []],
    ["nothing", [], [], []],
    ["no newline at the end", ["tail"], [], ["tail"]],
  ])("%s", (_what, chunks, lines, atEnd) => {
    const s = new LineSplitter();
    expect(chunks.flatMap((c) => s.push(enc(c)))).toEqual(lines);
    expect(s.end()).toEqual(atEnd);
  });

  it("joins a character split between chunks", () => {
    const bytes = enc("é\n");
    const s = new LineSplitter();
    expect([...s.push(bytes.subarray(0, 1)), ...s.push(bytes.subarray(1))]).toEqual(["é"]);
  });
});

describe("installState", () => {
  const pod = (state: object | null): V1Pod =>
    ({
      status: {
        initContainerStatuses: state
          ? [
              { name: "checkout", state: { terminated: { exitCode: 0 } } },
              { name: "install", state },
            ]
          : [],
      },
    }) as unknown as V1Pod;
  it.each<[string, V1Pod | null, string]>([
    ["no pod", null, "waiting"],
    ["no status yet", {}, "waiting"],
    ["the install not started", pod({ waiting: { reason: "PodInitializing" } }), "waiting"],
    ["the install running", pod({ running: { startedAt: new Date() } }), "running"],
    ["the install ended", pod({ terminated: { exitCode: 1 } }), "terminated"],
    ["no install container", pod(null), "waiting"],
  ])("%s → %s", (_what, p, expected) => {
    expect(installState(p)).toBe(expected);
  });
});
