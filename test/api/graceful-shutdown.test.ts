import { Agent, request } from "node:http";
import Koa from "koa";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { listen } from "../../src/api/server.ts";

// A rollout stops a replica while clients hold kept-alive connections to it
// (through a Service, a proxy, a load balancer). Once it starts closing, each
// answer says "Connection: close" and each connection is closed as soon as it
// is idle: clients move to another replica instead of the process waiting out
// its shutdown timeout, or cutting a connection a client is about to use.

function get(agent: Agent, url: string): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("shutting down with kept-alive clients", () => {
  it("answers in-flight and further requests on a busy connection with Connection: close and closes long before the timeout", async () => {
    const app = new Koa();
    app.use(async (ctx) => {
      if (ctx.path === "/slow") await new Promise((r) => setTimeout(r, 300));
      ctx.body = "ok";
    });
    const http = await listen(app, { host: "127.0.0.1", port: 0, shutdownTimeoutMs: 20_000, logger: pino({ level: "silent" }) });
    const url = `http://127.0.0.1:${http.port}`;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    expect((await get(agent, `${url}/fast`)).connection).toBe("keep-alive");

    // A client that keeps its one connection busy: before, the server never saw it idle and waited the whole timeout.
    const inFlight = get(agent, `${url}/slow`);
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    const closed = http.close();
    const answer = await inFlight;
    expect(answer).toEqual({ status: 200, connection: "close" });
    await closed;
    expect(Date.now() - started).toBeLessThan(2_000);
    agent.destroy();
  });

  it("names what held it when the timeout is reached, without the query, then closes it", async () => {
    const app = new Koa();
    app.use(async (ctx) => {
      if (ctx.path.startsWith("/hang")) await new Promise(() => undefined);
      ctx.body = "ok";
    });
    const lines: { msg: string; open?: unknown }[] = [];
    const logger = pino({ level: "warn", base: null }, { write: (l: string) => void lines.push(JSON.parse(l)) });
    const http = await listen(app, { host: "127.0.0.1", port: 0, shutdownTimeoutMs: 300, logger });
    const agent = new Agent({ keepAlive: true });
    const hanging = get(agent, `http://127.0.0.1:${http.port}/hang/here?token=secret`).catch((err: Error) => err);
    await new Promise((r) => setTimeout(r, 50));
    await http.close();
    expect(await hanging).toBeInstanceOf(Error);
    expect(lines).toEqual([
      {
        msg: "shutdown timeout reached: closing remaining connections",
        open: [{ method: "GET", path: "/hang/here", streaming: false }],
        level: 40,
        time: expect.any(Number),
      },
    ]);
    agent.destroy();
  });
});
