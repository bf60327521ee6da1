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
 * bound to (the signed-in session's id, or before sign-in the login cookie),
 * under a key derived from the encryption key. Nothing to store, and useless
 * without the HttpOnly cookie it is bound to.
 */
export class CsrfTokens {
  readonly #key: Buffer;

  constructor(secret: Buffer) {
    this.#key = createHmac("sha256", secret).update("codeplane oauth csrf v1").digest();
  }

  issue(purpose: string, binding: string): string {
    return createHmac("sha256", this.#key).update(`${purpose}\n${binding}`).digest("base64url");
  }

  verify(purpose: string, binding: string, token: unknown): boolean {
    return typeof token === "string" && sameText(this.issue(purpose, binding), token);
  }
}

/** RFC 7636 S256: BASE64URL(SHA256(verifier)). */
export const s256 = (verifier: string): string => createHash("sha256").update(verifier, "ascii").digest("base64url");
