// What a busy SSE stream costs the server in writes to its socket, through
// Node's real HTTP response (chunked encoding, its corking): each flush of a
// window's events must reach the socket as one write, whatever the number of
// events, since every write is a system call per subscriber. Node's response,
// when corked and uncorked, writes each held event and each chunk's length and
// line ends on their own (1,000 subscribers at 200 lines a second spent four
// fifths of the service's time there); the unit tests' fake response cannot
// show that, so this counts the writes the real socket is asked to make.
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import Koa from "koa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatLine, streamLogs } from "../../src/api/sse.ts";
import type { LogLine, Subscriber } from "../../src/logs/contracts.ts";

const TS = "2026-11-22T04:13:09.123Z";
// Long enough that a loaded machine's timer slop cannot split the second
// phase's events across two windows (at 40 ms a CI run under load did).
const WINDOW_MS = 250;
let server: Server;
let port: number;
let sink: Subscriber | null = null;
/** The server side's socket writes (each a system call) while counting is on. */
const writes: number[] = [];
let counting = false;

beforeAll(async () => {
  const app = new Koa();
  app.use(async (ctx) => {
    const socket = ctx.req.socket as Socket & { _write: (...a: unknown[]) => void; _writev?: (...a: unknown[]) => void };
    const write = socket._write.bind(socket);
    socket._write = (...a: unknown[]) => {
      if (counting) writes.push(1);
      write(...a);
    };
    const writev = socket._writev?.bind(socket);
    if (writev) {
      socket._writev = (chunks: unknown, cb: unknown) => {
        if (counting) writes.push((chunks as unknown[]).length);
        writev(chunks, cb);
      };
    }
    await streamLogs(ctx, {
      hub: {
        subscribe: (_id: string, _after: number, s: Subscriber) => {
          sink = s;
          return () => undefined;
        },
      },
      id: "r1",
      afterSeq: 0,
      coalesceMs: WINDOW_MS,
    });
  });
  server = createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe("a busy SSE stream's socket writes", () => {
  it("are one per flush: a turn's events together, then a window's together", async () => {
    const received: string[] = [];
    const res = await fetch(`http://127.0.0.1:${port}/`);
    const reader = res.body!.getReader();
    const pump = (async () => {
      const decoder = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        received.push(decoder.decode(value, { stream: true }));
      }
    })();
    for (let i = 0; !sink && i < 100; i++) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, WINDOW_MS * 2));

    const line = (seq: number): LogLine => ({ seq, stream: "stdout", ts: TS, line: `line ${seq} ${"x".repeat(40)}` });
    counting = true;
    // Eight in one turn: one flush at its end.
    for (let seq = 1; seq <= 8; seq++) sink!.line(line(seq));
    await new Promise((r) => setTimeout(r, 5));
    // Eight more, each in a turn of its own, within the window that follows: one flush when it ends.
    for (let seq = 9; seq <= 16; seq++) {
      sink!.line(line(seq));
      await new Promise((r) => setImmediate(r));
    }
    await new Promise((r) => setTimeout(r, WINDOW_MS * 2));
    counting = false;
    expect(writes).toHaveLength(2);

    sink!.end({ status: "completed", exit_code: 0 });
    await pump;
    const text = received.join("");
    const expected = Array.from({ length: 16 }, (_, i) => formatLine(line(i + 1))).join("");
    expect(text).toContain(expected);
    expect(text.endsWith('event: end\ndata: {"status":"completed","exit_code":0}\n\n')).toBe(true);
  });
});
