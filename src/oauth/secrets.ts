import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

// Every secret the authorization server hands out is 256 random bits,
// base64url, behind a prefix that says what it is (and lets secret scanners
// find it). Only a SHA-256 of the whole string is stored: with that much
// entropy a slow hash would add latency and no security (as for API keys).

export type SecretKind = "access" | "refresh" | "code" | "client_secret" | "session" | "login";

const PREFIX: Record<SecretKind, string> = {
  access: "cpat_",
  refresh: "cprt_",
  code: "cpac_",
  client_secret: "cpcs_",
  session: "cps_",
  login: "cpl_",
};

export const newSecret = (kind: SecretKind): string => PREFIX[kind] + randomBytes(32).toString("base64url");

export const isSecretOf = (kind: SecretKind, value: string): boolean =>
  value.startsWith(PREFIX[kind]) && /^[A-Za-z0-9_-]{43}$/.test(value.slice(PREFIX[kind].length));

export const hashSecret = (value: string): string => createHash("sha256").update(value, "utf8").digest("hex");

/** Constant-time comparison of two strings. */
export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * CSRF tokens for the authorization page's forms: an HMAC of what the form is
 * bound to (the signed-in session's id, or before sign-in the login cookie,
 * together with the authorization request the page showed) and of when it was
 * issued, under a key derived from the encryption key. Nothing to store,
 * useless without the HttpOnly cookie it is bound to, good for that one
 * request only, and only for `maxAgeSeconds`.
 */
export class CsrfTokens {
  readonly #key: Buffer;

  constructor(secret: Buffer) {
    this.#key = createHmac("sha256", secret).update("codeplane oauth csrf v2").digest();
  }

  #mac(purpose: string, binding: string, issuedAt: string): string {
    return createHmac("sha256", this.#key).update(`${purpose}\n${issuedAt}\n${binding}`).digest("base64url");
  }

  /** `<issued at, base-36 seconds>.<HMAC>`. */
  issue(purpose: string, binding: string, now = Date.now()): string {
    const issuedAt = Math.floor(now / 1000).toString(36);
    return `${issuedAt}.${this.#mac(purpose, binding, issuedAt)}`;
  }

  verify(purpose: string, binding: string, token: unknown, maxAgeSeconds: number, now = Date.now()): boolean {
    if (typeof token !== "string") return false;
    const m = /^([0-9a-z]{1,10})\.([A-Za-z0-9_-]{43})$/.exec(token);
    if (!m || !sameText(this.#mac(purpose, binding, m[1]!), m[2]!)) return false;
    const age = now / 1000 - parseInt(m[1]!, 36);
    // A minute of clock difference between replicas is tolerated.
    return age >= -CLOCK_SKEW_SECONDS && age <= maxAgeSeconds;
  }
}

const CLOCK_SKEW_SECONDS = 60;

/** RFC 7636 S256: BASE64URL(SHA256(verifier)). */
export const s256 = (verifier: string): string => createHash("sha256").update(verifier, "ascii").digest("base64url");
