import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import type { EncryptionKeys } from "../../config.ts";

// The `state` of the GitHub App's install flow: who asked (the account), when
// (issued and expiry), signed with HMAC-SHA-256 under a key derived (HKDF)
// from the service's encryption key, so nothing is stored and any replica can
// check it. The key id travels in the token, so a state issued before a key
// rotation still verifies while the old key is kept in
// CODEPLANE_ENCRYPTION_OLD_KEYS. The state is not secret (it is in a URL the
// person's browser shows) but cannot be forged or moved to another account.
//
// Format: v1.<key id>.<base64url JSON payload>.<base64url MAC>

export const INSTALL_STATE_TTL_SECONDS = 3600;
const PURPOSE = "codeplane github install state v1";

export interface InstallState {
  accountId: string;
  /** When it was issued (seconds since the epoch). */
  issuedAt: number;
  expiresAt: number;
}

export type InstallStateProblem = "malformed" | "bad_signature" | "expired";

interface Payload {
  a: string;
  iat: number;
  exp: number;
  n: string;
}

export class InstallStateSigner {
  readonly #keys: EncryptionKeys;
  readonly #derived = new Map<string, Buffer>();
  readonly #now: () => number;

  constructor(keys: EncryptionKeys, now: () => number = Date.now) {
    this.#keys = keys;
    this.#now = now;
  }

  issue(accountId: string, ttlSeconds = INSTALL_STATE_TTL_SECONDS): { state: string; expiresAt: Date } {
    const iat = Math.floor(this.#now() / 1000);
    const payload: Payload = { a: accountId, iat, exp: iat + ttlSeconds, n: randomBytes(12).toString("base64url") };
    const body = Buffer.from(JSON.stringify(payload), "utf8").toString("base64url");
    const keyId = this.#keys.currentId;
    return { state: `v1.${keyId}.${body}.${this.#mac(keyId, body)}`, expiresAt: new Date(payload.exp * 1000) };
  }

  verify(state: string): InstallState | InstallStateProblem {
    const parts = state.split(".");
    if (parts.length !== 4 || parts[0] !== "v1") return "malformed";
    const [, keyId, body, mac] = parts as [string, string, string, string];
    if (!/^[A-Za-z0-9_-]{1,32}$/.test(keyId) || !/^[A-Za-z0-9_-]+$/.test(body) || !/^[A-Za-z0-9_-]{43}$/.test(mac)) return "malformed";
    if (!this.#keys.keys[keyId]) return "bad_signature";
    const expected = Buffer.from(this.#mac(keyId, body), "utf8");
    const given = Buffer.from(mac, "utf8");
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return "bad_signature";
    let payload: Payload;
    try {
      payload = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as Payload;
    } catch {
      return "malformed";
    }
    if (typeof payload.a !== "string" || !Number.isInteger(payload.iat) || !Number.isInteger(payload.exp)) return "malformed";
    if (this.#now() / 1000 >= payload.exp) return "expired";
    return { accountId: payload.a, issuedAt: payload.iat, expiresAt: payload.exp };
  }

  #mac(keyId: string, body: string): string {
    let key = this.#derived.get(keyId);
    if (!key) {
      const master = this.#keys.keys[keyId];
      if (!master) throw new Error(`encryption key '${keyId}' is not configured`);
      key = Buffer.from(hkdfSync("sha256", master, Buffer.alloc(0), PURPOSE, 32));
      this.#derived.set(keyId, key);
    }
    return createHmac("sha256", key).update(`${keyId}.${body}`).digest("base64url");
  }
}
