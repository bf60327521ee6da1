// What an unauthenticated sender can make POST /v1/webhooks/github hold (issue
// 29, defect 1), measured rather than inferred from status codes: the
// service's own count of webhook body bytes read and reserved (/metrics), the
// test process's buffer memory (the service runs in this process), and
// whether the server closed the connection before the body was sent. Raw
// sockets on loopback, so a request can declare a body it never sends. Client
// addresses are told apart by X-Forwarded-For (CODEPLANE_TRUST_PROXY), so each
// case has budgets of its own.
import { createHmac, randomUUID } from "node:crypto";
import { webhookOnlyGitHubEnv } from "../helpers/github-env.ts";
import net from "node:net";
import v8 from "node:v8";
import vm from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../helpers/service.ts";
import { until } from "../helpers/until.ts";

const SECRET = "limits-webhook-secret";
const MiB = 1024 * 1024;
const MAX_BODY = 4 * MiB;
const MAX_INFLIGHT = 8 * MiB;
const RATE = 5;
const FAILURES = 2;
const githubEnv = webhookOnlyGitHubEnv(SECRET, { CODEPLANE_TRUST_PROXY: "true" });

const sign = (body: string | Buffer) => `sha256=${createHmac("sha256", SECRET).update(body).digest("hex")}`;
const FORGED = `sha256=${"ab".repeat(32)}`;
let addresses = 0;
/** A client address of its own (only ever a header: no traffic goes there). */
const address = () => `198.51.100.${++addresses}`;

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One raw HTTP/1.1 request on its own connection: the head is sent at once, the body only as the test writes it. */
class Conn {
  readonly answer: Promise<Answer>;
  readonly closed: Promise<void>;
  readonly #socket: net.Socket;

  constructor(base: string, headers: Record<string, string>) {
    const u = new URL(base);
    this.#socket = net.connect(Number(u.port), u.hostname);
    this.#socket.on("error", () => undefined); // writes after the server closed: expected
    const head = Object.entries({ host: u.host, ...headers })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("");
    this.#socket.write(`POST /v1/webhooks/github HTTP/1.1\r\n${head}\r\n`);
    this.closed = new Promise((resolve) => this.#socket.once("close", () => resolve()));
    this.answer = new Promise((resolve, reject) => {
      let got = Buffer.alloc(0);
      this.#socket.on("data", (d: Buffer) => {
        got = Buffer.concat([got, d]);
        const end = got.indexOf("\r\n\r\n");
        if (end < 0) return;
        const [statusLine, ...lines] = got.subarray(0, end).toString("latin1").split("\r\n");
        const h = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
        const body = got.subarray(end + 4);
        if (body.length >= Number(h["content-length"] ?? 0)) resolve({ status: Number(statusLine!.split(" ")[1]), headers: h, body: body.toString("utf8") });
      });
      void this.closed.then(() => reject(new Error("closed without an answer")));
    });
    this.answer.catch(() => undefined);
  }

  /** Sends `bytes` of body, waiting for the socket to drain; stops quietly once the server has closed it. */
  async send(bytes: number | Buffer): Promise<void> {
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    if (Buffer.isBuffer(bytes)) {
      if (!this.#socket.destroyed) this.#socket.write(bytes);
      return;
    }
    for (let sent = 0; sent < bytes && !this.#socket.destroyed; sent += chunk.length) {
      const part = chunk.subarray(0, Math.min(chunk.length, bytes - sent));
      if (!this.#socket.write(part)) await new Promise((r) => (this.#socket.once("drain", r), this.#socket.once("close", r)));
    }
  }

  destroy(): void {
    this.#socket.destroy();
  }
}

const deliveryHeaders = (o: { ip: string; length?: number; signature?: string; event?: string; id?: string }) => ({
  "content-type": "application/json",
  "x-github-event": o.event ?? "ping",
  "x-github-delivery": o.id ?? randomUUID(),
  "x-hub-signature-256": o.signature ?? FORGED,
  "x-forwarded-for": o.ip,
  ...(o.length !== undefined && { "content-length": String(o.length) }),
});

async function metric(svc: TestService, name: string): Promise<number> {
  const text = await (await fetch(`${svc.url}/metrics`)).text();
  const m = new RegExp(`^${name} (\\d+)`, "m").exec(text);
  return m ? Number(m[1]) : 0;
}
const bytesRead = (svc: TestService) => metric(svc, "codeplane_webhook_body_bytes_read_total");
const inflight = (svc: TestService) => metric(svc, "codeplane_webhook_inflight_bytes");

/** Buffer memory of this process after a full collection: what is still held, not garbage not yet collected. */
v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc") as () => void;
const heldBuffers = async () => {
  // Twice, a moment apart: freed backing stores are swept after the collection.
  gc();
  await new Promise((r) => setTimeout(r, 200));
  gc();
  return process.memoryUsage().arrayBuffers;
};

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({
    ...githubEnv,
    CODEPLANE_WEBHOOK_MAX_BODY_BYTES: String(MAX_BODY),
    CODEPLANE_WEBHOOK_MAX_INFLIGHT_BYTES: String(MAX_INFLIGHT),
    CODEPLANE_WEBHOOK_READ_TIMEOUT_SECONDS: "120",
    CODEPLANE_WEBHOOK_RATE_LIMIT_REQUESTS: String(RATE),
    CODEPLANE_AUTH_FAILURE_LIMIT: String(FAILURES),
  });
});

afterAll(async () => {
  await svc?.close();
});

describe("webhook bytes in flight", () => {
  it("reads at most CODEPLANE_WEBHOOK_MAX_INFLIGHT_BYTES from slow senders at once; the rest get 503 with Retry-After before any byte is read", async () => {
    const before = { read: await bytesRead(svc), buffers: await heldBuffers() };
    const senders = Array.from({ length: 20 }, () => new Conn(svc.url, deliveryHeaders({ ip: address(), length: MAX_BODY })));
    try {
      // Each sends 3 MiB of its declared 4 MiB and stalls (the attack: 20 x 3 MiB held, were they all read).
      void Promise.all(senders.map((c) => c.send(3 * MiB)));
      const reading = 2 * 3 * MiB;
      await until("the two admitted bodies' 3 MiB each to be read", 60_000, async () => (await bytesRead(svc)) - before.read >= reading);
      const refused = await until("18 answers", 60_000, async () => {
        const settled = await Promise.all(senders.map((c) => Promise.race([c.answer, new Promise<null>((r) => setTimeout(() => r(null), 10))])));
        const answers = settled.filter((a): a is Answer => a !== null);
        return answers.length >= 18 && answers;
      });
      expect(refused.length).toBe(18);
      for (const a of refused) {
        expect(a.status).toBe(503);
        expect(Number(a.headers["retry-after"])).toBeGreaterThan(0);
        expect(JSON.parse(a.body).detail).toMatch(/retry later/);
      }
      const held = { read: (await bytesRead(svc)) - before.read, inflight: await inflight(svc), buffers: (await heldBuffers()) - before.buffers };
      console.info(
        `webhook in flight: 20 senders x 3 MiB -> ${held.read} bytes read, ${held.inflight} reserved, buffers +${(held.buffers / MiB).toFixed(1)} MiB`,
      );
      expect(held.read).toBe(reading);
      expect(held.inflight).toBe(MAX_INFLIGHT);
      // Buffers held in this process (service and client): the two reserved bodies and a little for sockets; the 20 bodies read would be 60 MiB.
      expect(held.buffers).toBeLessThan(MAX_INFLIGHT + 4 * MiB);
    } finally {
      for (const c of senders) c.destroy();
    }
    await until("the reservations to be released", 60_000, async () => (await inflight(svc)) === 0);
  }, 180_000);

  it("still accepts a real delivery up to CODEPLANE_WEBHOOK_MAX_BODY_BYTES", async () => {
    const body = JSON.stringify({ zen: "x".repeat(MAX_BODY - 100) });
    const c = new Conn(svc.url, deliveryHeaders({ ip: address(), length: Buffer.byteLength(body), signature: sign(body) }));
    await c.send(Buffer.from(body));
    expect((await c.answer).status).toBe(202);
    c.destroy();
  });
});

describe("refused before the body is read", () => {
  it.each([
    { name: "a signature that is not sha256=<64 hex>", h: { signature: "sha1=0123" }, status: 401 },
    { name: "an upper-case signature", h: { signature: `sha256=${"AB".repeat(32)}` }, status: 401 },
    { name: "an event that is not an event name", h: { event: "Push!" }, status: 400 },
    { name: "a delivery id that is not one", h: { id: "../../x" }, status: 400 },
    { name: "no Content-Length", h: { length: undefined, chunked: true }, status: 411 },
    { name: "a Content-Length over the limit", h: { length: MAX_BODY + 1 }, status: 413 },
  ])("$name: $status, and the connection is closed", async ({ h, status }) => {
    const read = await bytesRead(svc);
    const { chunked, ...o }: { chunked?: boolean; length?: number; signature?: string; event?: string; id?: string } = h;
    const headers = deliveryHeaders({ ip: address(), length: MAX_BODY, ...o });
    if (chunked) {
      delete (headers as Record<string, string>)["content-length"];
      (headers as Record<string, string>)["transfer-encoding"] = "chunked";
    }
    const c = new Conn(svc.url, headers);
    const answer = await c.answer;
    expect(answer.status).toBe(status);
    expect(JSON.parse(answer.body).detail).toEqual(expect.any(String));
    await c.closed;
    expect(await bytesRead(svc)).toBe(read);
  });

  it("a forged signature: read once and refused 401; once the address has spent CODEPLANE_AUTH_FAILURE_LIMIT, its next large body is 429 unread", async () => {
    const ip = address();
    const start = await bytesRead(svc);
    for (let i = 0; i < FAILURES; i++) {
      const c = new Conn(svc.url, deliveryHeaders({ ip, length: 1 * MiB }));
      void c.send(1 * MiB);
      expect((await c.answer).status).toBe(401);
      c.destroy();
    }
    expect((await bytesRead(svc)) - start).toBe(FAILURES * MiB);
    const big = new Conn(svc.url, deliveryHeaders({ ip, length: MAX_BODY }));
    const answer = await big.answer;
    expect(answer.status).toBe(429);
    expect(Number(answer.headers["retry-after"])).toBeGreaterThan(0);
    await big.closed;
    await big.send(MAX_BODY); // too late: the server has closed the connection
    expect((await bytesRead(svc)) - start).toBe(FAILURES * MiB);
  });
});

describe("per-address rate limit", () => {
  it("accepts CODEPLANE_WEBHOOK_RATE_LIMIT_REQUESTS deliveries per address and window and refuses the rest with 429; another address is unaffected", async () => {
    const ip = address();
    const post = async (from: string) => {
      const body = JSON.stringify({ zen: "rate" });
      const res = await fetch(`${svc.url}/v1/webhooks/github`, {
        method: "POST",
        headers: { ...deliveryHeaders({ ip: from, signature: sign(body) }) },
        body,
      });
      return { status: res.status, retryAfter: res.headers.get("retry-after") };
    };
    const answers = [];
    for (let i = 0; i < RATE + 3; i++) answers.push(await post(ip));
    expect(answers.filter((a) => a.status === 202)).toHaveLength(RATE);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused).toHaveLength(3);
    for (const a of refused) expect(Number(a.retryAfter)).toBeGreaterThan(0);
    expect((await post(address())).status).toBe(202);
  });
});

describe("body-read deadline", () => {
  it("cuts off a sender that stalls mid-body after CODEPLANE_WEBHOOK_READ_TIMEOUT_SECONDS with 408 and closes the connection", async () => {
    const quick = await startTestService({ ...githubEnv, CODEPLANE_WEBHOOK_READ_TIMEOUT_SECONDS: "1" });
    try {
      const started = Date.now();
      const c = new Conn(quick.url, deliveryHeaders({ ip: address(), length: 1000 }));
      await c.send(10);
      const answer = await c.answer;
      expect(answer.status).toBe(408);
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      await c.closed;
      expect(await inflight(quick)).toBe(0);
      expect(await bytesRead(quick)).toBe(10);
    } finally {
      await quick.close();
    }
  }, 120_000);
});
