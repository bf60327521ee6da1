import { createHash } from "node:crypto";
import { Transform, type TransformCallback } from "node:stream";
import { ObjectTooLargeError } from "./object-store.ts";

/**
 * A pass-through that counts and hashes what flows, and fails with
 * ObjectTooLargeError on the chunk that goes past maxBytes: the limit holds
 * while the body streams, so a body that is too large is never read to its end
 * (the pipeline destroys the source) and never stored.
 */
export class MeasuringStream extends Transform {
  // Not `size`: @aws-sdk/lib-storage takes a body's `size` for its length, up front.
  bytesSeen = 0;
  readonly #hash = createHash("sha256");
  readonly #maxBytes: number;

  constructor(maxBytes: number) {
    super();
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) throw new RangeError(`maxBytes must be a whole number of bytes, not ${maxBytes}`);
    this.#maxBytes = maxBytes;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytesSeen += chunk.length;
    if (this.bytesSeen > this.#maxBytes) return done(new ObjectTooLargeError(this.#maxBytes));
    this.#hash.update(chunk);
    done(null, chunk);
  }

  /** Hex SHA-256 of everything that passed; call once, after the stream ended. */
  digest(): string {
    return this.#hash.digest("hex");
  }
}
