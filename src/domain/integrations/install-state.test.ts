import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { InstallStateSigner } from "./install-state.ts";

const k1 = randomBytes(32);
const k2 = randomBytes(32);
const keys = { currentId: "k1", keys: { k1 } };
const ACCOUNT = "0190d4c8-0000-7000-8000-000000000001";
const T0 = 1_700_000_000_000;

function tamper(state: string, part: number, edit: (s: string) => string): string {
  const parts = state.split(".");
  parts[part] = edit(parts[part]!);
  return parts.join(".");
}

const payloadWith = (state: string, change: Record<string, unknown>) =>
  tamper(state, 2, (b) => Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(b, "base64url").toString()), ...change })).toString("base64url"));

describe("InstallStateSigner", () => {
  const signer = new InstallStateSigner(keys, () => T0);
  const { state, expiresAt } = signer.issue(ACCOUNT);

  it("verifies its own state, bound to the account, for an hour", () => {
    expect(signer.verify(state)).toEqual({ accountId: ACCOUNT, issuedAt: T0 / 1000, expiresAt: T0 / 1000 + 3600 });
    expect(expiresAt.getTime()).toBe(T0 + 3_600_000);
    expect(state).toMatch(/^v1\.k1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
  });

  it("issues a different state each time", () => {
    expect(signer.issue(ACCOUNT).state).not.toBe(state);
  });

  it.each([
    ["empty", "", "malformed"],
    ["not four parts", "v1.k1.abc", "malformed"],
    ["another version", state.replace(/^v1/, "v2"), "malformed"],
    ["a key id nobody has", tamper(state, 1, () => "k9"), "bad_signature"],
    ["another account in the payload", payloadWith(state, { a: "0190d4c8-0000-7000-8000-000000000002" }), "bad_signature"],
    ["a later expiry in the payload", payloadWith(state, { exp: T0 / 1000 + 86_400 }), "bad_signature"],
    ["a flipped MAC character", tamper(state, 3, (m) => (m[0] === "A" ? "B" : "A") + m.slice(1)), "bad_signature"],
    ["a truncated MAC", tamper(state, 3, (m) => m.slice(0, 20)), "malformed"],
    ["characters outside base64url", tamper(state, 2, (b) => `${b}+/`), "malformed"],
  ])("refuses %s", (_name, given, problem) => {
    expect(signer.verify(given)).toBe(problem);
  });

  it("refuses a state signed with another service's key", () => {
    const other = new InstallStateSigner({ currentId: "k1", keys: { k1: k2 } }, () => T0);
    expect(other.verify(state)).toBe("bad_signature");
  });

  it("refuses a state once it expired, and not a second before", () => {
    expect(new InstallStateSigner(keys, () => T0 + 3_599_000).verify(state)).not.toBeTypeOf("string");
    expect(new InstallStateSigner(keys, () => T0 + 3_600_000).verify(state)).toBe("expired");
  });

  it("still verifies a state issued before a key rotation while the old key is kept", () => {
    const rotated = new InstallStateSigner({ currentId: "k2", keys: { k1, k2 } }, () => T0);
    expect(rotated.verify(state)).toMatchObject({ accountId: ACCOUNT });
    expect(rotated.issue(ACCOUNT).state).toMatch(/^v1\.k2\./);
    expect(new InstallStateSigner({ currentId: "k2", keys: { k2 } }, () => T0).verify(state)).toBe("bad_signature");
  });

  it("does not sign with the encryption key itself (a derived key)", () => {
    const [, , body, mac] = state.split(".");
    expect(createHmac("sha256", k1).update(`k1.${body}`).digest("base64url")).not.toBe(mac);
  });
});
