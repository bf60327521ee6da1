import type { Log } from "@kubernetes/client-node";
import type { Writable } from "node:stream";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { ATTEMPT_SEQ_STRIDE } from "../resources/run.ts";
import { followOnce, podLogNumbering, type FollowTarget } from "./pod-log.ts";

// How a pod's frames are numbered in its workload's log: as written, or (a
// retried run's later attempt) moved into the attempt's own range, with frames
// past the range dropped; the resume point (afterSeq) is in the log's numbers.

const frame = (seq: number, kind: string, payload: string) => `@cp1 ${seq} ${kind} 2026-01-01T00:00:0${seq % 10}.000Z ${payload}\n`;

/** A Log whose follow writes `body` and ends. */
const logOf = (body: string): Log =>
  ({
    log: async (_ns: string, _pod: string, _c: string, sink: Writable) => {
      sink.write(Buffer.from(body));
      sink.end();
      return new AbortController();
    },
  }) as unknown as Log;

async function follow(body: string, target: Partial<FollowTarget>, afterSeq = 0) {
  const lines: [number, string][] = [];
  const metrics: number[] = [];
  const exits: number[] = [];
  const result = await followOnce(
    logOf(body),
    { namespace: "ns", pod: "p", container: "main", ...target },
    {
      afterSeq,
      logger: pino({ level: "silent" }),
      handlers: { line: (l) => lines.push([l.seq, l.line]), metric: (m) => metrics.push(m.seq), exit: (e) => exits.push(e.seq) },
    },
  );
  return { lines, metrics, exits, result };
}

const BODY = [frame(1, "o", '"a"'), frame(2, "e", '"b"'), frame(3, "m", '"{}"'), frame(4, "o", '"c"'), frame(5, "x", '{"code":0,"signal":null}')].join("");

describe("followOnce numbering", () => {
  it("keeps the pod's own numbers without an offset", async () => {
    const r = await follow(BODY, {});
    expect(r.lines).toEqual([
      [1, "a"],
      [2, "b"],
      [4, "c"],
    ]);
    expect(r.metrics).toEqual([3]);
    expect(r.exits).toEqual([5]);
    expect(r.result.lastSeq).toBe(5);
  });

  it("moves every frame into the attempt's range, and resumes after a number of that range", async () => {
    const offset = 2 * ATTEMPT_SEQ_STRIDE;
    const r = await follow(BODY, { seqOffset: offset, seqLimit: ATTEMPT_SEQ_STRIDE }, offset + 1);
    expect(r.lines).toEqual([
      [offset + 2, "b"],
      [offset + 4, "c"],
    ]);
    expect(r.metrics).toEqual([offset + 3]);
    expect(r.exits).toEqual([offset + 5]);
    expect(r.result.lastSeq).toBe(offset + 5);
  });

  it("drops frames past the attempt's range", async () => {
    const body = frame(ATTEMPT_SEQ_STRIDE - 1, "o", '"last"') + frame(ATTEMPT_SEQ_STRIDE, "o", '"over"');
    const r = await follow(body, { seqOffset: ATTEMPT_SEQ_STRIDE, seqLimit: ATTEMPT_SEQ_STRIDE });
    expect(r.lines).toEqual([[2 * ATTEMPT_SEQ_STRIDE - 1, "last"]]);
  });
});

describe("podLogNumbering", () => {
  it.each([
    [null, {}],
    [{ metadata: {} }, {}],
    [{ metadata: { annotations: { "codeplane.dev/log-seq-offset": "0" } } }, { seqOffset: 0, seqLimit: ATTEMPT_SEQ_STRIDE }],
    [{ metadata: { annotations: { "codeplane.dev/log-seq-offset": "1000000000" } } }, { seqOffset: 1_000_000_000, seqLimit: ATTEMPT_SEQ_STRIDE }],
    [{ metadata: { annotations: { "codeplane.dev/log-seq-offset": "-5" } } }, {}],
    [{ metadata: { annotations: { "codeplane.dev/log-seq-offset": "12abc" } } }, {}],
  ])("%j: %j", (pod, expected) => {
    expect(podLogNumbering(pod)).toEqual(expected);
  });
});
