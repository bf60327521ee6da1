import { connect, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import type { ServerResponse } from "node:http";
import Koa from "koa";
import { afterEach, describe, expect, it } from "vitest";
import type { RunFeedEvent, RunFeedSink } from "../domain/runs/run-feed.ts";
import type { Run } from "../domain/runs/runs.schemas.ts";
import { streamRunEvents } from "./run-events.ts";

// The runs feed's HTTP side over a real socket, with the feed played by the
// test: what happens to a client that stops reading.

const closers: (() => void)[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

async function waitFor<T>(what: string, probe: () => T | undefined | false, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function serve() {
  const state = { sink: null as RunFeedSink | null, res: null as ServerResponse | null, released: 0, left: 0 };
  const app = new Koa();
  app.use(async (ctx) => {
    state.res = ctx.res;
    await streamRunEvents(ctx, {
      feed: {
        subscribe: async (_filter, sink) => {
          state.sink = sink;
          sink.ready("1");
          return () => void state.left++;
        },
      },
      filter: { accountId: "a" },
      after: null,
      release: () => void state.released++,
    });
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  closers.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return { state, port: (server.address() as AddressInfo).port };
}

/** A client that sends its request and then reads nothing. */
async function stalledClient(port: number): Promise<Socket> {
  const socket = connect(port, "127.0.0.1");
  await new Promise((r) => socket.once("connect", r));
  socket.pause();
  socket.write("GET /v1/runs/events HTTP/1.1\r\nHost: x\r\n\r\n");
  closers.push(() => socket.destroy());
  return socket;
}

const bigRun = (i: number) => ({ kind: "run", run: { run_id: String(i), error: "x".repeat(64 * 1024) } as unknown as Run }) as RunFeedEvent;

describe("the runs feed's stream", () => {
  it("drops a client that leaves 1 MiB unread, and holds none of it afterwards", async () => {
    const { state, port } = await serve();
    await stalledClient(port);
    const sink = (await waitFor("the subscription", () => state.sink))!;
    // 64 KiB a batch, until this process holds more than 1 MiB for the client.
    for (let i = 0; state.released === 0 && i < 10_000; i++) {
      sink.events([bigRun(i)], String(i + 2));
      await new Promise((r) => setImmediate(r));
    }
    expect(state.released).toBe(1);
    expect(state.left).toBe(1);
    // Ended with what it held still queued, the response would keep it (and the
    // connection) for as long as the client reads nothing, its place in the
    // account's limit already given back: the connection is dropped instead.
    const res = state.res!;
    await waitFor("the connection dropped", () => res.destroyed);
    expect(res.writableLength).toBe(0);
  }, 60_000);

  it("delivers a batch larger than 1 MiB whole, with its id, to a client that reads", async () => {
    const { state, port } = await serve();
    const socket = connect(port, "127.0.0.1");
    closers.push(() => socket.destroy());
    let received = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => void (received += chunk));
    await new Promise((r) => socket.once("connect", r));
    socket.write("GET /v1/runs/events HTTP/1.1\r\nHost: x\r\n\r\n");
    const sink = (await waitFor("the subscription", () => state.sink))!;
    // 40 runs of 64 KiB in one look's batch: 2.5 MiB written at once.
    sink.events(
      Array.from({ length: 40 }, (_, i) => bigRun(i)),
      "42",
    );
    await waitFor("the batch's id at the client", () => received.includes("id: 42\n"));
    expect(received.match(/^event: run$/gm)?.length).toBe(40);
    // Still open: the next event reaches the client too.
    sink.events([bigRun(99)], "43");
    await waitFor("the next id", () => received.includes("id: 43\n"));
    expect(state.released).toBe(0);
  }, 60_000);
});
