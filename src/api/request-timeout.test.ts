import type { IncomingMessage } from "node:http";
import { request } from "node:http";
import Koa from "koa";
import { afterEach, describe, expect, it } from "vitest";
import { createRootLogger } from "../logger.ts";
import { requestTimeoutFor } from "./routes/environment-archives.ts";
import { listen, REQUEST_TIMEOUT_MS, type HttpServer } from "./server.ts";

// How long a request may take to arrive is kept per request, not as Node's one
// server-wide requestTimeout (300 s): an environment archive upload gets its
// own bound (CODEPLANE_ENVIRONMENT_UPLOAD_TIMEOUT_SECONDS), everything else keeps 300 s.

describe("requestTimeoutFor", () => {
  const bound = requestTimeoutFor(3_600_000);
  const id = "0190b1c2-3d4e-7f00-8a1b-2c3d4e5f6a70";
  it.each([
    ["a build's archive upload", "PUT", `/internal/environments/${id}/archive`, 3_600_000],
    ["a build's log", "PUT", `/internal/environments/${id}/log`, REQUEST_TIMEOUT_MS],
    ["a run's restore (a download: its body is empty)", "GET", `/internal/environments/${"a".repeat(64)}/archive`, REQUEST_TIMEOUT_MS],
    ["an API request", "POST", "/v1/repositories", REQUEST_TIMEOUT_MS],
    ["a path that only ends like the door", "PUT", `/v1/internal/environments/${id}/archive`, REQUEST_TIMEOUT_MS],
  ])("%s: %s %s gets %i ms", (_name, method, url, ms) => {
    expect(bound({ method, url } as IncomingMessage)).toBe(ms);
  });
});

describe("listen's per-request bound", () => {
  let server: HttpServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  /** PUTs a body in pieces, one every gapMs: the status, or "closed" if the connection was cut first. */
  function slowPut(port: number, path: string, pieces: number, gapMs: number): Promise<number | "closed"> {
    return new Promise((resolve) => {
      const req = request({ port, host: "127.0.0.1", method: "PUT", path, headers: { "transfer-encoding": "chunked" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", () => resolve("closed"));
      let sent = 0;
      const tick = () => {
        if (req.destroyed) return;
        if (sent++ === pieces) return void req.end();
        req.write("x".repeat(1024));
        setTimeout(tick, gapMs);
      };
      tick();
    });
  }

  it("cuts a request that has not arrived within its own bound with 408, and lets a slow one with a longer bound finish", async () => {
    const app = new Koa();
    // The cut request's body read fails ("aborted"): expected here, not worth printing.
    app.silent = true;
    app.use(async (ctx) => {
      let bytes = 0;
      for await (const chunk of ctx.req as AsyncIterable<Buffer>) bytes += chunk.length;
      ctx.body = { bytes };
    });
    server = await listen(app, {
      host: "127.0.0.1",
      port: 0,
      shutdownTimeoutMs: 1000,
      logger: createRootLogger("silent"),
      requestTimeoutMs: (req) => (req.url === "/long" ? 60_000 : 300),
    });
    expect(server.server.requestTimeout).toBe(0);
    // 1.5 s of trickle: past the short bound, well within the long one.
    const [short, long] = await Promise.all([slowPut(server.port, "/short", 15, 100), slowPut(server.port, "/long", 15, 100)]);
    expect([408, "closed"]).toContain(short);
    expect(long).toBe(200);
  });
});
