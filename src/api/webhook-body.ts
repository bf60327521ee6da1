import type { IncomingMessage } from "node:http";
import { Counter, Gauge, type Registry } from "prom-client";
import { HttpError } from "./http-error.ts";

// Reading a GitHub webhook's body without letting an unauthenticated sender
// hold the process's memory: the bytes a body may take are reserved from a
// per-process budget (from Content-Length, before any is read), the body is
// read into exactly that much, each chunk goes to the signature check as it
// arrives, and a sender that has not finished by the deadline is cut off.

export interface WebhookIntakeLimits {
  /** Largest body (CODEPLANE_WEBHOOK_MAX_BODY_BYTES): GitHub's own cap is 25 MB. */
  maxBodyBytes: number;
  /** Webhook body bytes reserved at once in this process (CODEPLANE_WEBHOOK_MAX_INFLIGHT_BYTES); beyond it 503. */
  maxInflightBytes: number;
  /** Longest a body may take to arrive (CODEPLANE_WEBHOOK_READ_TIMEOUT_SECONDS); then 408 and the connection is closed. */
  readTimeoutMs: number;
  /** Deliveries per client address and window (CODEPLANE_WEBHOOK_RATE_LIMIT_REQUESTS); 0 disables. */
  rateLimitRequests: number;
}

export const DEFAULT_WEBHOOK_LIMITS: WebhookIntakeLimits = {
  maxBodyBytes: 25 * 1024 * 1024,
  maxInflightBytes: 64 * 1024 * 1024,
  readTimeoutMs: 10_000,
  rateLimitRequests: 600,
};

/** The per-process budget of webhook body bytes, and what it has measured (/metrics). */
export class InflightBytes {
  readonly #max: number;
  #used = 0;
  readonly #gauge: Gauge | null;
  readonly #read: Counter | null;

  constructor(max: number, registry?: Registry) {
    this.#max = max;
    this.#gauge = registry
      ? new Gauge({
          name: "codeplane_webhook_inflight_bytes",
          help: "Webhook body bytes reserved by deliveries being read or accepted now.",
          registers: [registry],
        })
      : null;
    this.#read = registry
      ? new Counter({ name: "codeplane_webhook_body_bytes_read_total", help: "Webhook body bytes read from senders.", registers: [registry] })
      : null;
  }

  get used(): number {
    return this.#used;
  }

  /** Takes `bytes` from the budget; false (take nothing) when they do not fit. */
  reserve(bytes: number): boolean {
    if (this.#used + bytes > this.#max) return false;
    this.#used += bytes;
    this.#gauge?.set(this.#used);
    return true;
  }

  release(bytes: number): void {
    this.#used -= bytes;
    this.#gauge?.set(this.#used);
  }

  countRead(bytes: number): void {
    this.#read?.inc(bytes);
  }
}

/**
 * Reads exactly `size` bytes (the declared Content-Length), giving each chunk
 * to `onChunk` as it arrives. 408 when the body has not arrived within
 * `timeoutMs`; 400 when the sender stops early.
 */
export function readDeclaredBody(req: IncomingMessage, size: number, timeoutMs: number, onChunk: (chunk: Buffer) => void): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    // Exactly the reserved size, allocated once: no list of chunks and no copy to join them.
    const body = Buffer.allocUnsafe(size);
    let got = 0;
    let done = false;
    const finish = (err: Error | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.off("data", onData).off("end", onEnd).off("error", onGone).off("close", onGone);
      req.pause();
      if (err) reject(err);
      else resolve(body);
    };
    const onData = (chunk: Buffer) => {
      // Node's parser never gives more than Content-Length; checked anyway, the buffer is that size.
      if (got + chunk.length > size) return finish(new HttpError(413, `Webhook bodies are limited to their Content-Length (${size} bytes)`));
      chunk.copy(body, got);
      got += chunk.length;
      onChunk(chunk);
    };
    const onEnd = () => finish(got === size ? null : new HttpError(400, "The body ended before its Content-Length"));
    const onGone = () => finish(new HttpError(400, "The connection closed before the body arrived"));
    const timer = setTimeout(() => finish(new HttpError(408, `The webhook body did not arrive within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
    req.on("data", onData).on("end", onEnd).on("error", onGone).on("close", onGone);
    req.resume();
  });
}
