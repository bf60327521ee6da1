import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { sendAttempt } from "./sender.ts";

// One attempt against real servers on loopback (local addresses allowed, as
// in development): what counts as delivered, the timeout, the bounded read of
// the answer, no redirects followed, and the policy refusing before any
// connection when local addresses are not allowed.

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

async function serve(handler: http.RequestListener): Promise<string> {
  const s = http.createServer(handler);
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}/hook`;
}

const opts = { timeoutMs: 2000, maxResponseBytes: 64, allowLocal: true };

describe("one delivery attempt", () => {
  it.each([
    { status: 200, ok: true },
    { status: 204, ok: true },
    { status: 299, ok: true },
    { status: 301, ok: false }, // redirects are not followed
    { status: 410, ok: false },
    { status: 500, ok: false },
  ])("HTTP $status: delivered $ok", async ({ status, ok }) => {
    const url = await serve((_req, res) => res.writeHead(status, { location: "http://127.0.0.1:1/" }).end("answer"));
    const r = await sendAttempt(url, { "webhook-id": "x" }, "{}", opts);
    expect(r).toMatchObject({ status, ok });
    expect(r.error).toBe(ok ? null : `HTTP ${status}: answer`);
  });

  it("sends the body and headers as given, as JSON", async () => {
    let seen: { headers: http.IncomingHttpHeaders; body: string } | null = null;
    const url = await serve((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        seen = { headers: req.headers, body };
        res.writeHead(200).end();
      });
    });
    await sendAttempt(url, { "webhook-id": "id1", "webhook-signature": "v1,abc" }, '{"a":"é"}', opts);
    expect(seen!.body).toBe('{"a":"é"}');
    expect(seen!.headers).toMatchObject({ "webhook-id": "id1", "webhook-signature": "v1,abc", "content-type": "application/json", "content-length": "10" });
  });

  it("gives up after the timeout", async () => {
    const url = await serve(() => {
      /* never answers */
    });
    const started = Date.now();
    const r = await sendAttempt(url, {}, "{}", { ...opts, timeoutMs: 300 });
    expect(r).toEqual({ status: null, ok: false, error: "no answer within 300 ms" });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("reads at most maxResponseBytes of an endless answer", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(500);
      const chunk = "x".repeat(16 * 1024);
      const pump = () => {
        while (res.write(chunk));
      };
      res.on("drain", pump);
      pump();
    });
    const r = await sendAttempt(url, {}, "{}", { ...opts, timeoutMs: 10_000 });
    expect(r.status).toBe(500);
    expect(r.error).toBe(`HTTP 500: ${"x".repeat(64)}`);
  });

  it("refuses a loopback endpoint before connecting when local addresses are not allowed", async () => {
    let hit = false;
    const url = await serve((_req, res) => {
      hit = true;
      res.writeHead(200).end();
    });
    const r = await sendAttempt(url.replace("http:", "https:"), {}, "{}", { ...opts, allowLocal: false });
    expect(r.ok).toBe(false);
    expect(r.error).toContain("refused by the endpoint URL policy");
    expect(hit).toBe(false);
  });

  it("records a refused connection", async () => {
    const url = await serve((_req, res) => res.end());
    await new Promise((r) => servers.pop()!.close(r));
    const r = await sendAttempt(url, {}, "{}", opts);
    expect(r).toMatchObject({ status: null, ok: false, error: expect.stringContaining("ECONNREFUSED") });
  });
});
