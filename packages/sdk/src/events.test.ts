import { describe, expect, it } from "vitest";
import { EventStreamParser, toLogEvent } from "./events.ts";

// The event-stream format as the WHATWG spec states it, chunked the ways a
// network splits it: each case's chunks are pushed in order.
const cases: { name: string; chunks: string[]; events: { event: string; data: string; id: string | null }[]; retry?: number }[] = [
  { name: "one event", chunks: ['event: stdout\nid: 1\ndata: {"seq":1}\n\n'], events: [{ event: "stdout", id: "1", data: '{"seq":1}' }] },
  { name: "split anywhere", chunks: ["eve", "nt: st", "dout\nid", ": 2\ndata: {}\n", "\n"], events: [{ event: "stdout", id: "2", data: "{}" }] },
  { name: "CRLF, with the CR and LF in two chunks", chunks: ["event: end\r", "\ndata: {}\r\n\r\n"], events: [{ event: "end", id: null, data: "{}" }] },
  {
    name: "lone CR line ends (the last CR known only once the next chunk comes)",
    chunks: ["data: a\rdata: b\r\r", ": next\n"],
    events: [{ event: "message", id: null, data: "a\nb" }],
  },
  { name: "comments and retry", chunks: [": ping\nretry: 3000\n\n"], events: [], retry: 3000 },
  { name: "no space after the colon, a field with no colon", chunks: ["data:x\nevent\ndata\n\n"], events: [{ event: "message", id: null, data: "x\n" }] },
  { name: "an id with NUL is ignored", chunks: ["id: a\0b\ndata: 1\n\n"], events: [{ event: "message", id: null, data: "1" }] },
  { name: "no data: no event", chunks: ["event: status\nid: 0:running\n\n"], events: [] },
  { name: "an incomplete event waits", chunks: ["data: 1\n"], events: [] },
];

describe("EventStreamParser", () => {
  it.each(cases)("$name", ({ chunks, events, retry }) => {
    const p = new EventStreamParser();
    expect(chunks.flatMap((c) => p.push(c))).toEqual(events);
    if (retry !== undefined) expect(p.retry).toBe(retry);
  });
});

describe("toLogEvent", () => {
  it.each([
    [
      { event: "status", id: "0:running", data: '{"status":"running"}' },
      { type: "status", id: "0:running", status: "running" },
    ],
    [
      { event: "stderr", id: "7", data: '{"seq":7,"ts":"t","line":"oops"}' },
      { type: "stderr", id: "7", seq: 7, ts: "t", line: "oops" },
    ],
    [
      { event: "setup", id: "0:preprocessing/3", data: '{"n":3,"ts":"t","line":"Collecting x"}' },
      { type: "setup", id: "0:preprocessing/3", n: 3, ts: "t", line: "Collecting x" },
    ],
    [
      { event: "timeline", id: null, data: '{"timeline":[{"event":"created","at":"t"}]}' },
      { type: "timeline", timeline: [{ event: "created", at: "t" }] },
    ],
    [
      { event: "end", id: null, data: '{"status":"failed","exit_code":null}' },
      { type: "end", status: "failed", exit_code: null },
    ],
    [{ event: "from-a-newer-server", id: null, data: "{}" }, null],
  ])("%j", (raw, expected) => {
    expect(toLogEvent(raw)).toEqual(expected);
  });
});
