import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

// Standard Webhooks signing (https://www.standardwebhooks.com, pure): the
// secret is `whsec_` + base64 of 24 to 64 random bytes; a message is signed as
// HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>") and sent as
// `webhook-signature: v1,<base64>`. Receivers verify with any Standard
// Webhooks library (the tests use the official `standardwebhooks` package).

const PREFIX = "whsec_";

/** A new endpoint secret: 32 random bytes. */
export function newSecret(): string {
  return PREFIX + randomBytes(32).toString("base64");
}

function keyOf(secret: string): Buffer {
  if (!secret.startsWith(PREFIX)) throw new Error("a webhook secret starts with whsec_");
  return Buffer.from(secret.slice(PREFIX.length), "base64");
}

/** The `webhook-signature` header's value for one attempt. */
export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac("sha256", keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`, "utf8").digest("base64");
  return `v1,${mac}`;
}

/** The three headers of one attempt, timestamped `now`. */
export function webhookHeaders(secret: string, id: string, body: string, now: Date): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return { "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": sign(secret, id, timestamp, body) };
}

/** Whether any `v1,` signature in a header (space-separated) matches: the receiver's side, for tests and docs. */
export function verify(secret: string, headers: { id: string; timestamp: string; signature: string }, body: string): boolean {
  const expected = Buffer.from(sign(secret, headers.id, Number(headers.timestamp), body));
  return headers.signature.split(" ").some((s) => {
    const got = Buffer.from(s);
    return got.length === expected.length && timingSafeEqual(got, expected);
  });
}
