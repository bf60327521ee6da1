import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
  type S3ServiceException,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { S3Settings } from "../config.ts";
import { checkKey, checkPrefix } from "./keys.ts";
import { MeasuringStream } from "./measure.ts";
import {
  InvalidRangeError,
  ObjectStoreUnavailableError,
  resolveRange,
  type ByteRange,
  type ListedObject,
  type ObjectBody,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
  type StoredObject,
} from "./object-store.ts";

// The object store on an S3-compatible service (AWS S3, MinIO, Ceph RGW,
// versitygw, R2, ...), through the AWS SDK: @aws-sdk/lib-storage streams a put
// in parts of bounded size (never the whole body in memory) and aborts the
// multipart upload when the body fails, so a rejected put stores nothing.
// docs/decisions/0014-object-store.md says why this client.

/** Part size floor (S3's minimum is 5 MiB) and parts in flight: memory per put is about their product. */
const PART_BYTES = 8 * 1024 * 1024;
const PARTS_IN_FLIGHT = 3;
/** S3's most parts per upload: a larger maxBytes gets larger parts. */
const MAX_PARTS = 10_000;
const CHECK_TIMEOUT_MS = 15_000;

type SdkError = Partial<S3ServiceException> & { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };

const statusOf = (err: unknown) => (err as SdkError | null)?.$metadata?.httpStatusCode;
const isNotFound = (err: unknown) => statusOf(err) === 404 || ["NoSuchKey", "NotFound"].includes((err as SdkError | null)?.name ?? "");

/** The S3 client for these settings: explicit keys, or else the SDK's default chain (AWS_* variables, web identity, instance role). */
export function s3Client(s: S3Settings): S3Client {
  return new S3Client({
    region: s.region,
    ...(s.endpoint ? { endpoint: s.endpoint } : {}),
    forcePathStyle: s.forcePathStyle,
    ...(s.accessKeyId && s.secretAccessKey ? { credentials: { accessKeyId: s.accessKeyId, secretAccessKey: s.secretAccessKey } } : {}),
    // Checksums only where S3 requires them: many S3-compatible servers reject the newer default trailers.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
    // A dead endpoint fails in seconds; no socket timeout, which would cut a download its reader paused.
    requestHandler: { connectionTimeout: 5_000 },
    maxAttempts: 3,
  });
}

export class S3Store implements ObjectStore {
  readonly kind = "s3";
  readonly location: string;
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #endpoint: string;

  constructor(settings: S3Settings, client: S3Client = s3Client(settings)) {
    this.#client = client;
    this.#bucket = settings.bucket;
    this.#endpoint = settings.endpoint ?? `AWS S3 (${settings.region})`;
    this.location = `s3 bucket ${settings.bucket} at ${this.#endpoint}`;
  }

  async put(key: string, body: Readable, opts: PutOptions): Promise<StoredObject> {
    checkKey(key);
    const measure = new MeasuringStream(opts.maxBytes);
    // Settles when the body has all passed through (or failed: too large, or its source broke).
    const piped: Promise<Error | null> = pipeline(body, measure).then(
      () => null,
      (err: unknown) => (err instanceof Error ? err : new Error(String(err))),
    );
    const upload = new Upload({
      client: this.#client,
      params: { Bucket: this.#bucket, Key: key, Body: measure, ...(opts.contentType ? { ContentType: opts.contentType } : {}) },
      partSize: Math.max(PART_BYTES, Math.ceil(opts.maxBytes / MAX_PARTS)),
      queueSize: PARTS_IN_FLIGHT,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (err) {
      measure.destroy();
      body.destroy();
      // The body's own failure (ObjectTooLargeError, say) is the reason, not the upload it broke.
      throw (await piped) ?? err;
    }
    const bodyError = await piped;
    if (bodyError) throw bodyError;
    return { size: measure.bytesSeen, sha256: measure.digest() };
  }

  async get(key: string, range?: ByteRange): Promise<ObjectBody | null> {
    checkKey(key);
    if (range) resolveRange(range, Number.MAX_SAFE_INTEGER); // the shape only; the size is the server's
    try {
      const res = await this.#client.send(
        new GetObjectCommand({ Bucket: this.#bucket, Key: key, ...(range ? { Range: `bytes=${range.start}-${range.end ?? ""}` } : {}) }),
      );
      const size = res.ContentLength ?? 0;
      const total = /\/(\d+)$/.exec(res.ContentRange ?? "");
      return { body: res.Body as Readable, size, totalSize: total ? Number(total[1]) : size };
    } catch (err) {
      if (isNotFound(err)) return null;
      if (range && statusOf(err) === 416) {
        const info = await this.head(key);
        if (!info) return null;
        throw new InvalidRangeError(range, info.size);
      }
      throw err;
    }
  }

  async head(key: string): Promise<ObjectInfo | null> {
    checkKey(key);
    try {
      const res = await this.#client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key: key }));
      return { size: res.ContentLength ?? 0, modified: res.LastModified ?? new Date(0) };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: key }));
  }

  async *list(prefix: string): AsyncIterable<ListedObject> {
    checkPrefix(prefix);
    let token: string | undefined;
    do {
      const page = await this.#client.send(
        new ListObjectsV2Command({ Bucket: this.#bucket, ...(prefix ? { Prefix: prefix } : {}), ...(token ? { ContinuationToken: token } : {}) }),
      );
      for (const o of page.Contents ?? []) {
        if (o.Key !== undefined) yield { key: o.Key, size: o.Size ?? 0, modified: o.LastModified ?? new Date(0) };
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  /** HeadBucket within 15 s; else one line naming endpoint, bucket and what failed (never a credential). */
  async check(): Promise<void> {
    try {
      await this.#client.send(new HeadBucketCommand({ Bucket: this.#bucket }), { abortSignal: AbortSignal.timeout(CHECK_TIMEOUT_MS) });
    } catch (err) {
      throw new ObjectStoreUnavailableError(`object store: cannot use ${this.location}: ${describeFailure(err)}`, { cause: err });
    }
  }

  /** Closes the client's pooled connections. */
  close(): void {
    this.#client.destroy();
  }
}

/** What went wrong reaching a bucket, in words that name the setting to look at. */
export function describeFailure(err: unknown): string {
  const e = (err ?? {}) as SdkError & { cause?: { code?: string } };
  const status = statusOf(err);
  const code = e.code ?? e.cause?.code;
  if (e.name === "TimeoutError" || e.name === "AbortError")
    return `no answer within ${CHECK_TIMEOUT_MS / 1000} s (check CODEPLANE_S3_ENDPOINT and the network to it)`;
  if (code && /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|CERT_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO)/.test(code)) {
    return `cannot connect (${code}; check CODEPLANE_S3_ENDPOINT)`;
  }
  if (e.name === "CredentialsProviderError")
    return "no credentials (set CODEPLANE_S3_ACCESS_KEY_ID and CODEPLANE_S3_SECRET_ACCESS_KEY, or give the pod a cloud identity)";
  if (status === 404) return "the bucket does not exist (create it, or fix CODEPLANE_S3_BUCKET)";
  if (status === 403 || status === 401)
    return `access denied (HTTP ${status}; check CODEPLANE_S3_ACCESS_KEY_ID and CODEPLANE_S3_SECRET_ACCESS_KEY, and that they may use the bucket)`;
  if (status === 301 || status === 400)
    return `HTTP ${status} (the bucket may be in another region than CODEPLANE_S3_REGION, or need CODEPLANE_S3_FORCE_PATH_STYLE=true)`;
  if (status) return `HTTP ${status} ${e.name ?? ""}`.trim();
  return `${e.name ?? "error"}: ${(err as Error)?.message ?? String(err)}`;
}
