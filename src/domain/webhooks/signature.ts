import { createHmac, timingSafeEqual, type Hmac } from "node:crypto";

// The X-Hub-Signature-256 check, fed as the body streams in: one HMAC per
// accepted secret is updated with each chunk, so no copy of the body is
// needed to verify it and the work is one native pass over the bytes.

export interface WebhookSecrets {
  current: string;
  /** Accepted too, while GitHub is switched over to the current one. */
  old: readonly string[];
}

/** What GitHub sends: `sha256=` and 64 lowercase hex digits. Anything else is refused before the body is read. */
export const SIGNATURE = /^sha256=[0-9a-f]{64}$/;

export interface SignatureCheck {
  update(chunk: Buffer): void;
  /** Whether the bytes given so far are signed by one of the secrets (constant-time compare). Call once, at the end. */
  matches(): boolean;
}

/** null when the header is not a well-formed signature: nothing to verify, refuse without reading. */
export function signatureCheck(secrets: WebhookSecrets, signature: string | undefined): SignatureCheck | null {
  if (!signature || !SIGNATURE.test(signature)) return null;
  const expected = Buffer.from(signature.slice("sha256=".length), "hex");
  const hmacs: Hmac[] = [secrets.current, ...secrets.old].map((secret) => createHmac("sha256", secret));
  return {
    update(chunk) {
      for (const h of hmacs) h.update(chunk);
    },
    matches() {
      // Every digest is compared, so the time taken does not say which secret matched.
      let ok = false;
      for (const h of hmacs) ok = timingSafeEqual(h.digest(), expected) || ok;
      return ok;
    },
  };
}
