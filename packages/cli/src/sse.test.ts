import { describe, expect, it } from "vitest";
import { SseParser } from "./sse.ts";

describe("SseParser", () => {
  it("reads events split anywhere across chunks, with ids, comments and retry", () => {
    const text =
      'retry: 3000\n\nevent: status\nid: 0:running\ndata: {"status":"running"}\n\n: ping\n\nevent: stdout\nid: 1\ndata: {"seq":1,"line":"a"}\n\nevent: end\ndata: {"status":"completed","exit_code":0}\n\n';
    for (const size of [1, 2, 7, text.length]) {
      const p = new SseParser();
      const events = [];
      for (let i = 0; i < text.length; i += size) events.push(...p.push(text.slice(i, i + size)));
      expect(events).toEqual([
        { event: "status", id: "0:running", data: '{"status":"running"}' },
        { event: "stdout", id: "1", data: '{"seq":1,"line":"a"}' },
        { event: "end", id: null, data: '{"status":"completed","exit_code":0}' },
      ]);
      expect(p.retry).toBe(3000);
    }
  });

  it("CRLF and CR line ends, multi-line data, a field without a space, and a default event name", () => {
    const p = new SseParser();
    expect(p.push("data:one\r\ndata: two\r\n\r\n")).toEqual([{ event: "message", id: null, data: "one\ntwo" }]);
    // A CR at a chunk's end may be half of a CRLF: it counts once the next chunk says.
    expect(p.push("data: three\r\r")).toEqual([]);
    expect(p.push("data: four\n\n")).toEqual([
      { event: "message", id: null, data: "three" },
      { event: "message", id: null, data: "four" },
    ]);
  });

  it("keeps an unfinished event until its blank line", () => {
    const p = new SseParser();
    expect(p.push("event: stdout\ndata: x\n")).toEqual([]);
    expect(p.push("\n")).toEqual([{ event: "stdout", id: null, data: "x" }]);
  });
});
