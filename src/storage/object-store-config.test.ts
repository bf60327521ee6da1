import { randomBytes } from "node:crypto";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../config.ts";

// The object store's settings as loadConfig reads them: a directory by
// default, a bucket when asked, and settings of the other kind refused.

const base = { DATABASE_URL: "postgres://x@127.0.0.1/db", CODEPLANE_ENCRYPTION_KEY: randomBytes(32).toString("base64"), CODEPLANE_DATA_DIR: "/var/lib/cp" };
const s3 = { CODEPLANE_OBJECT_STORE: "s3", CODEPLANE_S3_BUCKET: "envs" };

describe("the object store's settings", () => {
  it.each<[string, Record<string, string>, unknown]>([
    ["the default: a folder under the data dir", {}, { kind: "directory", dir: "/var/lib/cp/objects" }],
    ["a folder of its own", { CODEPLANE_OBJECT_STORE_DIR: "/mnt/objects" }, { kind: "directory", dir: "/mnt/objects" }],
    ["a relative folder, resolved", { CODEPLANE_OBJECT_STORE_DIR: "objs" }, { kind: "directory", dir: path.resolve("objs") }],
    [
      "AWS S3 with the SDK's own credentials",
      s3,
      { kind: "s3", s3: { endpoint: null, bucket: "envs", region: "us-east-1", forcePathStyle: false, accessKeyId: null, secretAccessKey: null } },
    ],
    [
      "an S3-compatible server with keys",
      {
        ...s3,
        CODEPLANE_S3_ENDPOINT: "http://minio.storage:9000/",
        CODEPLANE_S3_REGION: "eu-west-3",
        CODEPLANE_S3_FORCE_PATH_STYLE: "true",
        CODEPLANE_S3_ACCESS_KEY_ID: "AK",
        CODEPLANE_S3_SECRET_ACCESS_KEY: "SK",
      },
      {
        kind: "s3",
        s3: { endpoint: "http://minio.storage:9000", bucket: "envs", region: "eu-west-3", forcePathStyle: true, accessKeyId: "AK", secretAccessKey: "SK" },
      },
    ],
    [
      "empty S3 settings with a directory (unset, as a chart leaves them)",
      { CODEPLANE_S3_BUCKET: "", CODEPLANE_S3_REGION: "" },
      { kind: "directory", dir: "/var/lib/cp/objects" },
    ],
  ])("%s", (_what, env, want) => {
    expect(loadConfig({ ...base, ...env }).objectStore).toEqual(want);
  });

  it.each<[string, Record<string, string>, RegExp]>([
    ["a kind it does not know", { CODEPLANE_OBJECT_STORE: "gcs" }, /CODEPLANE_OBJECT_STORE: /],
    ["s3 without a bucket", { CODEPLANE_OBJECT_STORE: "s3" }, /CODEPLANE_S3_BUCKET: required when CODEPLANE_OBJECT_STORE is s3/],
    ["a bucket name S3 refuses", { ...s3, CODEPLANE_S3_BUCKET: "Envs_Bucket" }, /CODEPLANE_S3_BUCKET: must be an S3 bucket name/],
    ["an endpoint with credentials in it", { ...s3, CODEPLANE_S3_ENDPOINT: "http://ak:sk@minio:9000" }, /CODEPLANE_S3_ENDPOINT: must not carry credentials/],
    ["an endpoint that is no URL", { ...s3, CODEPLANE_S3_ENDPOINT: "minio:9000" }, /CODEPLANE_S3_ENDPOINT: must be an http/],
    ["a key id without its secret", { ...s3, CODEPLANE_S3_ACCESS_KEY_ID: "AK" }, /CODEPLANE_S3_SECRET_ACCESS_KEY: required with the other/],
    ["a secret without its key id", { ...s3, CODEPLANE_S3_SECRET_ACCESS_KEY: "SK" }, /CODEPLANE_S3_ACCESS_KEY_ID: required with the other/],
    ["a bucket with the store left at directory", { CODEPLANE_S3_BUCKET: "envs" }, /CODEPLANE_S3_BUCKET: set, but CODEPLANE_OBJECT_STORE is directory/],
    ["a region with the store left at directory", { CODEPLANE_S3_REGION: "eu-west-3" }, /CODEPLANE_S3_REGION: set, but CODEPLANE_OBJECT_STORE is directory/],
    ["a folder with s3", { ...s3, CODEPLANE_OBJECT_STORE_DIR: "/mnt/objects" }, /CODEPLANE_OBJECT_STORE_DIR: set, but CODEPLANE_OBJECT_STORE is s3/],
    ["a path-style flag that is no boolean", { ...s3, CODEPLANE_S3_FORCE_PATH_STYLE: "maybe" }, /CODEPLANE_S3_FORCE_PATH_STYLE: must be true or false/],
  ])("refuses %s, naming the setting", (_what, env, message) => {
    expect(() => loadConfig({ ...base, ...env })).toThrow(message);
  });

  it("never quotes the secret in an error", () => {
    const secret = "sk-very-secret-value";
    let message = "";
    try {
      loadConfig({ ...base, CODEPLANE_S3_SECRET_ACCESS_KEY: secret });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/CODEPLANE_S3_SECRET_ACCESS_KEY: set, but/);
    expect(message).not.toContain(secret);
  });
});
