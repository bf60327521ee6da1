import type { Readable } from "node:stream";

// Where codeplane keeps large blobs it produces and serves back: environment
// archives (issue 28), later run outputs. Two backends behind this one small
// interface: a directory under the data dir (the embedded default,
// directory-store.ts) and any S3-compatible service (s3-store.ts). Only the
// codeplane server holds the store and its credentials; pods reach objects
// through codeplane's own endpoints, never the store.

/** A byte range, inclusive at both ends as in HTTP's Range header; no `end`: to the object's end. */
export interface ByteRange {
  start: number;
  end?: number;
}

export interface PutOptions {
  /** More bytes than this and the put is rejected (ObjectTooLargeError) as soon as they arrive, with nothing stored. */
  maxBytes: number;
  contentType?: string;
}

export interface StoredObject {
  size: number;
  /** Hex SHA-256 of the bytes stored, computed while they streamed. */
  sha256: string;
}

export interface ObjectBody {
  body: Readable;
  /** Bytes in `body` (a Content-Length). */
  size: number;
  /** The whole object's size (for a Content-Range); equals `size` without a range. */
  totalSize: number;
}

export interface ObjectInfo {
  size: number;
  modified: Date;
}

export interface ListedObject extends ObjectInfo {
  key: string;
}

export interface ObjectStore {
  /** `directory` or `s3`, for logs and errors. */
  readonly kind: "directory" | "s3";
  /** Where it stores, for people (a path, or endpoint and bucket); never a credential. */
  readonly location: string;
  /**
   * Stores body under key atomically (a reader never sees a partial object, a
   * rejected put leaves what was there); rejects with ObjectTooLargeError when
   * more than maxBytes arrive, enforced while streaming, before it is all read.
   */
  put(key: string, body: Readable, opts: PutOptions): Promise<StoredObject>;
  /** null when absent; with a range, those bytes (InvalidRangeError when it starts at or past the end). */
  get(key: string, range?: ByteRange): Promise<ObjectBody | null>;
  head(key: string): Promise<ObjectInfo | null>;
  /** Absent is fine. */
  delete(key: string): Promise<void>;
  /** Every object whose key starts with prefix ("" for all), in key order (byte order, as S3 lists). */
  list(prefix: string): AsyncIterable<ListedObject>;
  /** Proves the store usable at start (writable directory, reachable bucket): ObjectStoreUnavailableError saying what failed. */
  check(): Promise<void>;
  /** Lets go of connections (at shutdown); the store is not used after. */
  close(): void;
}

/** A key or prefix outside the allowed form (keys.ts); a caller's mistake, never retried. */
export class InvalidKeyError extends Error {
  readonly key: string;
  constructor(key: string, reason: string) {
    super(`invalid object key ${JSON.stringify(key.slice(0, 200))}: ${reason}`);
    this.name = "InvalidKeyError";
    this.key = key;
  }
}

export class ObjectTooLargeError extends Error {
  readonly maxBytes: number;
  constructor(maxBytes: number) {
    super(`object larger than ${maxBytes} bytes`);
    this.name = "ObjectTooLargeError";
    this.maxBytes = maxBytes;
  }
}

/** A range that starts at or past the object's end (HTTP 416). */
export class InvalidRangeError extends Error {
  readonly range: ByteRange;
  readonly totalSize: number;
  constructor(range: ByteRange, totalSize: number) {
    super(`range ${range.start}-${range.end ?? ""} is outside the object (${totalSize} bytes)`);
    this.name = "InvalidRangeError";
    this.range = range;
    this.totalSize = totalSize;
  }
}

/** The store cannot be used at all: which store, and what failed, in one line people can act on. */
export class ObjectStoreUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ObjectStoreUnavailableError";
  }
}

/** A range checked against an object's size: the inclusive end clamped to the last byte, as HTTP does. */
export function resolveRange(range: ByteRange, totalSize: number): { start: number; end: number } {
  if (!Number.isSafeInteger(range.start) || range.start < 0 || (range.end !== undefined && (!Number.isSafeInteger(range.end) || range.end < range.start))) {
    throw new RangeError(`invalid byte range ${range.start}-${range.end ?? ""}`);
  }
  if (range.start >= totalSize) throw new InvalidRangeError(range, totalSize);
  return { start: range.start, end: Math.min(range.end ?? totalSize - 1, totalSize - 1) };
}
