import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { newSecret, sign, verify, webhookHeaders } from "./signing.ts";

// Signatures checked against the official Standard Webhooks library, not only
// against this module's own verify: a mistake shared by sign and verify here
// (the wrong key decoding, the wrong separator) still fails.

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

describe("Standard Webhooks signing", () => {
  it.each([
    { name: "a small JSON body", id: "msg_p5jXN8AQM9LWM0D4loKWxJek", body: '{"test": 2432232314}' },
    { name: "an empty body", id: "0190b1c2-3d4e-7f00-8a1b-2c3d4e5f6a7b", body: "" },
    { name: "non-ASCII text", id: "0190b1c2-3d4e-7f00-8a1b-2c3d4e5f6a7c", body: JSON.stringify({ type: "run.failed", data: { error: "échec ✗ 失敗" } }) },
    { name: "a body with dots and newlines", id: "a.b", body: '{"a":"x.y"}\n' },
  ])("the official library verifies $name", ({ id, body }) => {
    const now = new Date();
    const headers = webhookHeaders(SECRET, id, body, now);
    const official = new Webhook(SECRET);
    expect(() => official.verify(body, headers, { jsonParse: false })).not.toThrow();
    // Both sides compute the same signature for the same message and time.
    expect(headers["webhook-signature"]).toBe(official.sign(id, now, body));
    expect(verify(SECRET, { id, timestamp: headers["webhook-timestamp"]!, signature: headers["webhook-signature"]! }, body)).toBe(true);
  });

  it.each([
    { name: "the body changed", change: (h: Record<string, string>, b: string) => [h, b + " "] as const },
    { name: "the id changed", change: (h: Record<string, string>, b: string) => [{ ...h, "webhook-id": "other" }, b] as const },
    {
      name: "the timestamp changed",
      change: (h: Record<string, string>, b: string) => [{ ...h, "webhook-timestamp": String(Number(h["webhook-timestamp"]) - 1) }, b] as const,
    },
    { name: "another secret signed it", change: (_h: Record<string, string>, b: string) => [webhookHeaders(newSecret(), "m", b, new Date()), b] as const },
  ])("the official library refuses the message when $name", ({ change }) => {
    const body = '{"type":"run.completed"}';
    const [headers, sent] = change(webhookHeaders(SECRET, "m", body, new Date()), body);
    expect(() => new Webhook(SECRET).verify(sent, headers)).toThrow();
  });

  it("refuses a timestamp older than the library's tolerance (replay)", () => {
    const body = "{}";
    const headers = webhookHeaders(SECRET, "m", body, new Date(Date.now() - 10 * 60 * 1000));
    expect(() => new Webhook(SECRET).verify(body, headers)).toThrow(/timestamp/i);
  });

  it("makes secrets of 32 random bytes the library accepts", () => {
    const a = newSecret();
    const b = newSecret();
    expect(a).not.toBe(b);
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(a.slice(6), "base64")).toHaveLength(32);
    const body = '{"x":1}';
    expect(new Webhook(a).verify(body, webhookHeaders(a, "id", body, new Date()))).toEqual({ x: 1 });
  });

  it("signs id.timestamp.body with the decoded key", () => {
    // The Standard Webhooks specification's own example.
    expect(sign("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, '{"test": 2432232314}')).toBe(
      "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    );
  });
});
