import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import type { EncryptionKeys } from "../../config.ts";

// AES-256-GCM with a fresh 96-bit nonce per value. Layout of a sealed value:
// version(1) | nonce(12) | ciphertext | tag(16). The key id is stored beside it
// (its own column) so keys can be rotated: decrypt with the named key, and
// re-encrypt under the current one. The associated data binds a value to its
// row, so a ciphertext copied into another row does not decrypt.

const VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export interface Sealed {
  keyId: string;
  data: Buffer;
}

export class SecretBox {
  readonly #keys: EncryptionKeys;

  constructor(keys: EncryptionKeys) {
    this.#keys = keys;
  }

  get currentKeyId(): string {
    return this.#keys.currentId;
  }

  seal(plaintext: string, associatedData: string): Sealed {
    const key = this.#key(this.#keys.currentId);
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv("aes-256-gcm", key, nonce);
    cipher.setAAD(Buffer.from(associatedData, "utf8"));
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return {
      keyId: this.#keys.currentId,
      data: Buffer.concat([Buffer.from([VERSION]), nonce, body, cipher.getAuthTag()]),
    };
  }

  open(sealed: Sealed, associatedData: string): string {
    const { data } = sealed;
    if (data.length < 1 + NONCE_BYTES + TAG_BYTES || data[0] !== VERSION) {
      throw new Error("sealed value has an unknown format");
    }
    const nonce = data.subarray(1, 1 + NONCE_BYTES);
    const tag = data.subarray(data.length - TAG_BYTES);
    const body = data.subarray(1 + NONCE_BYTES, data.length - TAG_BYTES);
    const decipher = createDecipheriv("aes-256-gcm", this.#key(sealed.keyId), nonce);
    decipher.setAAD(Buffer.from(associatedData, "utf8"));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
  }

  #key(id: string): Buffer {
    const key = this.#keys.keys[id];
    if (!key) throw new Error(`encryption key '${id}' is not configured (set CODEPLANE_ENCRYPTION_OLD_KEYS)`);
    return key;
  }
}
