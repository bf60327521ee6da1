import { describe, expect, it } from "vitest";
import { canonicalResource } from "./router.ts";
import { CsrfTokens, hashSecret, isSecretOf, newSecret, s256 } from "./secrets.ts";

describe("secrets", () => {
  it("are prefixed, 256 random bits, and stored as hashes", () => {
    const a = newSecret("access");
    expect(a).toMatch(/^cpat_[A-Za-z0-9_-]{43}$/);
    expect(isSecretOf("access", a)).toBe(true);
    expect(isSecretOf("refresh", a)).toBe(false);
    expect(newSecret("access")).not.toBe(a);
    expect(hashSecret(a)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("CSRF tokens are bound to their purpose, binding and key, and expire", () => {
    const csrf = new CsrfTokens(Buffer.alloc(32, 1));
    const now = Date.now();
    const t = csrf.issue("consent", "session-1", now);
    expect(csrf.verify("consent", "session-1", t, 600, now)).toBe(true);
    expect(csrf.verify("consent", "session-2", t, 600, now)).toBe(false);
    expect(csrf.verify("sign_in", "session-1", t, 600, now)).toBe(false);
    expect(new CsrfTokens(Buffer.alloc(32, 2)).verify("consent", "session-1", t, 600, now)).toBe(false);
    expect(csrf.verify("consent", "session-1", undefined, 600, now)).toBe(false);
    expect(csrf.verify("consent", "session-1", t, 600, now + 601_000)).toBe(false);
    // The issue time is signed: moving it forward breaks the token.
    const [, mac] = t.split(".");
    expect(csrf.verify("consent", "session-1", `${Math.floor((now + 500_000) / 1000).toString(36)}.${mac}`, 600, now + 601_000)).toBe(false);
  });

  it("S256 matches RFC 7636's example", () => {
    expect(s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")).toBe("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
  });

  it("a resource is the base URL or its /mcp endpoint", () => {
    const b = "https://cp.example";
    expect(canonicalResource(undefined, b)).toBe(b);
    expect(canonicalResource(b, b)).toBe(b);
    expect(canonicalResource(`${b}/`, b)).toBe(b);
    expect(canonicalResource(`${b}/mcp`, b)).toBe(b);
    expect(canonicalResource(`${b}/v2`, b)).toBeNull();
    expect(canonicalResource("https://cp.example.evil", b)).toBeNull();
  });
});
