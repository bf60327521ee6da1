import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config.ts";

const key = randomBytes(32).toString("base64");
const base = { DATABASE_URL: "postgres://x@127.0.0.1/db", CODEPLANE_ENCRYPTION_KEY: key };

describe("loadConfig", () => {
  it("applies the documented defaults", () => {
    const c = loadConfig(base);
    expect(c.http.port).toBe(8080);
    expect(c.repositories.allowLocal).toBe(false);
    expect(c.rateLimit).toEqual({ requests: 600, windowSeconds: 60, authFailures: 30 });
    expect(c.kubernetes).toEqual({ kubeconfig: null, namespace: "codeplane", resourceRetentionSeconds: 7 * 86_400, leaderLeaseSeconds: 10 });
    expect(c.dataDir).toBe(path.resolve("./.codeplane"));
    expect(c.encryption.currentId).toBe("k1");
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.http)).toBe(true);
  });

  it("gives the environment archive upload its own bound, 30 minutes unless set", () => {
    expect(loadConfig(base).environments.uploadTimeoutMs).toBe(1_800_000);
    expect(loadConfig({ ...base, CODEPLANE_ENVIRONMENT_UPLOAD_TIMEOUT_SECONDS: "7200" }).environments.uploadTimeoutMs).toBe(7_200_000);
  });

  it.each([
    ["a non-numeric port", { PORT: "http" }, "PORT"],
    ["a port out of range", { PORT: "70000" }, "PORT"],
    ["a short encryption key", { CODEPLANE_ENCRYPTION_KEY: Buffer.alloc(16).toString("base64") }, "CODEPLANE_ENCRYPTION_KEY"],
    ["a non-boolean flag", { CODEPLANE_ALLOW_LOCAL_REPOSITORIES: "maybe" }, "CODEPLANE_ALLOW_LOCAL_REPOSITORIES"],
    ["a bad log level", { CODEPLANE_LOG_LEVEL: "loud" }, "CODEPLANE_LOG_LEVEL"],
    ["a negative failed-authentication limit", { CODEPLANE_AUTH_FAILURE_LIMIT: "-1" }, "CODEPLANE_AUTH_FAILURE_LIMIT"],
    ["a bad namespace", { CODEPLANE_NAMESPACE: "Not_Valid" }, "CODEPLANE_NAMESPACE"],
    ["malformed old keys", { CODEPLANE_ENCRYPTION_OLD_KEYS: "k0" }, "CODEPLANE_ENCRYPTION_OLD_KEYS"],
    ["a malformed bootstrap key", { CODEPLANE_BOOTSTRAP_API_KEY: "secret" }, "CODEPLANE_BOOTSTRAP_API_KEY"],
    ["an archive upload bound under a minute", { CODEPLANE_ENVIRONMENT_UPLOAD_TIMEOUT_SECONDS: "30" }, "CODEPLANE_ENVIRONMENT_UPLOAD_TIMEOUT_SECONDS"],
  ])("refuses %s with a message naming the variable", (_name, env, variable) => {
    expect(() => loadConfig({ ...base, ...env })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, ...env })).toThrow(new RegExp(variable));
  });

  it("requires an encryption key with a database server", () => {
    expect(() => loadConfig({ DATABASE_URL: base.DATABASE_URL })).toThrow(/CODEPLANE_ENCRYPTION_KEY: required when DATABASE_URL is set/);
  });

  it("creates and then reuses a private key for the embedded database", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "cfg-"));
    const first = loadConfig({ CODEPLANE_DATA_DIR: dir });
    const file = path.join(dir, "encryption.key");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(file, "utf8").trim(), "base64")).toHaveLength(32);
    const second = loadConfig({ CODEPLANE_DATA_DIR: dir });
    expect(second.encryption.keys.k1!.equals(first.encryption.keys.k1!)).toBe(true);
  });

  it("keeps old keys for decryption next to the current one", () => {
    const old = randomBytes(32).toString("base64");
    const c = loadConfig({ ...base, CODEPLANE_ENCRYPTION_KEY_ID: "k2", CODEPLANE_ENCRYPTION_OLD_KEYS: `k1:${old}` });
    expect(c.encryption.currentId).toBe("k2");
    expect(Object.keys(c.encryption.keys).sort()).toEqual(["k1", "k2"]);
  });

  it.each([
    ["unset", {}, [{ image: "codeplane-runner:dev", toolchains: { python: "3.11", node: "24" }, packages: [] }]],
    [
      "[] (the chart's default)",
      { CODEPLANE_ENVIRONMENT_IMAGES: "[]" },
      [{ image: "codeplane-runner:dev", toolchains: { python: "3.11", node: "24" }, packages: [] }],
    ],
    [
      "a catalog",
      {
        CODEPLANE_ENVIRONMENT_IMAGES:
          '[{"image":"go:1","toolchains":{"go":"1.27"}},{"image":"t:1","toolchains":{"python":"3.11"},"packages":["torch"],"presets":["gpu"]}]',
      },
      [
        { image: "go:1", toolchains: { go: "1.27" }, packages: [] },
        { image: "t:1", toolchains: { python: "3.11" }, packages: ["torch"], presets: ["gpu"] },
      ],
    ],
  ])("reads the environment catalog: %s", (_name, env, catalog) => {
    expect(loadConfig({ ...base, ...env }).environments.catalog).toEqual(catalog);
  });

  it.each([
    ["not JSON", "[{image"],
    ["an entry without toolchains", '[{"image":"x"}]'],
    ["a field it does not know", '[{"image":"x","toolchains":{},"tag":"y"}]'],
    ["a toolchain name that is not one", '[{"image":"x","toolchains":{"Go Lang":"1"}}]'],
  ])("refuses a catalog that is %s, naming the setting", (_name, value) => {
    expect(() => loadConfig({ ...base, CODEPLANE_ENVIRONMENT_IMAGES: value })).toThrow(/CODEPLANE_ENVIRONMENT_IMAGES/);
  });

  it.each<[string, string | undefined, string[]]>([
    ["unset: repository images never used", undefined, []],
    ["empty", "", []],
    ["a list, normalised", " ghcr.io/acme/ , GHCR.IO/acme docker.io/library,localhost:5000 ", ["ghcr.io/acme", "docker.io/library", "localhost:5000"]],
  ])("reads the registries repositories may declare images from: %s", (_name, value, want) => {
    const env = value === undefined ? {} : { CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES: value };
    expect(loadConfig({ ...base, ...env }).environments.allowedRegistries).toEqual(want);
  });

  it.each([
    ["a bare name (no registry host)", "python", /must start with a registry host/],
    ["a tag", "ghcr.io/acme/x:1", /names a tag/],
    ["an uppercase path", "ghcr.io/Acme", /lowercase/],
  ])("refuses allowed registries with %s, naming the setting", (_name, value, reason) => {
    expect(() => loadConfig({ ...base, CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES: value })).toThrow(/CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES/);
    expect(() => loadConfig({ ...base, CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES: value })).toThrow(reason);
  });

  it("treats empty variables as unset", () => {
    expect(loadConfig({ ...base, PORT: "" }).http.port).toBe(8080);
  });

  it("shares git fetch slots per account: half of the total by default, never more than the total", () => {
    const slots = (env: Record<string, string>) => {
      const r = loadConfig({ ...base, ...env }).repositories;
      return [r.maxConcurrentFetches, r.maxConcurrentFetchesPerAccount, r.fetchQueueWaitMs];
    };
    expect(slots({})).toEqual([4, 2, 10_000]);
    expect(slots({ CODEPLANE_GIT_MAX_FETCHES: "1" })).toEqual([1, 1, 10_000]);
    expect(slots({ CODEPLANE_GIT_MAX_FETCHES: "9", CODEPLANE_GIT_MAX_FETCHES_PER_ACCOUNT: "", CODEPLANE_GIT_QUEUE_WAIT_SECONDS: "0" })).toEqual([9, 4, 0]);
    expect(slots({ CODEPLANE_GIT_MAX_FETCHES: "8", CODEPLANE_GIT_MAX_FETCHES_PER_ACCOUNT: "8" })).toEqual([8, 8, 10_000]);
    expect(() => slots({ CODEPLANE_GIT_MAX_FETCHES: "2", CODEPLANE_GIT_MAX_FETCHES_PER_ACCOUNT: "3" })).toThrow(
      /CODEPLANE_GIT_MAX_FETCHES_PER_ACCOUNT: must not exceed/,
    );
    expect(() => slots({ CODEPLANE_GIT_MAX_FETCHES: "0" })).toThrow(/CODEPLANE_GIT_MAX_FETCHES/);
  });

  it("limits an account's run event streams per process to 10 unless set, within 1-10,000", () => {
    const streams = (env: Record<string, string>) => loadConfig({ ...base, ...env }).runEvents.streamsPerAccount;
    expect(streams({})).toBe(10);
    expect(streams({ CODEPLANE_RUN_EVENT_STREAMS_PER_ACCOUNT: "" })).toBe(10);
    expect(streams({ CODEPLANE_RUN_EVENT_STREAMS_PER_ACCOUNT: "50" })).toBe(50);
    expect(() => streams({ CODEPLANE_RUN_EVENT_STREAMS_PER_ACCOUNT: "0" })).toThrow(/CODEPLANE_RUN_EVENT_STREAMS_PER_ACCOUNT/);
    expect(() => streams({ CODEPLANE_RUN_EVENT_STREAMS_PER_ACCOUNT: "ten" })).toThrow(/CODEPLANE_RUN_EVENT_STREAMS_PER_ACCOUNT/);
  });

  it("refuses run egress the NetworkPolicy could not enforce with the metadata address closed", () => {
    expect(() => loadConfig({ ...base, CODEPLANE_RUN_EGRESS_ALLOW: "10.0.5.0/24@443,169.254.169.254/32@80" })).toThrow(
      /CODEPLANE_RUN_EGRESS_ALLOW: '169\.254\.169\.254\/32' lies inside the cloud metadata range 169\.254\.0\.0\/16/,
    );
    expect(() => loadConfig({ ...base, CODEPLANE_RUN_EGRESS_ALLOW: "fd00:ec2::254/128" })).toThrow(/CODEPLANE_RUN_EGRESS_ALLOW: 'fd00:ec2::254\/128'/);
    expect(() => loadConfig({ ...base, CODEPLANE_RUN_EGRESS_CLUSTER_CIDRS: "0.0.0.0/0" })).toThrow(
      /CODEPLANE_RUN_EGRESS_CLUSTER_CIDRS: '0\.0\.0\.0\/0' is every address/,
    );
    expect(() => loadConfig({ ...base, CODEPLANE_INTERNAL_URL: "http://169.254.1.1:8081" })).toThrow(/CODEPLANE_INTERNAL_URL: 169\.254\.1\.1/);
    // A CIDR holding the metadata range is fine: the policy keeps the range out.
    expect(
      loadConfig({ ...base, CODEPLANE_RUN_EGRESS_ALLOW: "0.0.0.0/0@443", CODEPLANE_INTERNAL_URL: "http://codeplane.codeplane.svc:8081" }).runs.egress.allow,
    ).toEqual([{ cidr: "0.0.0.0/0", ports: [{ protocol: "TCP", port: 443 }] }]);
  });

  it.each<[string, Record<string, string>, { policyName: string | null; gitPods: object | null }]>([
    ["unset: the controller applies no policy", {}, { policyName: null, gitPods: null }],
    [
      "the Helm chart's: a name and the API pods on the git port",
      {
        CODEPLANE_RUN_EGRESS_POLICY: "cp-codeplane-workloads",
        CODEPLANE_RUN_EGRESS_GIT_PODS: "codeplane/app.kubernetes.io/name=codeplane,app.kubernetes.io/instance=cp",
        CODEPLANE_GIT_PORT: "8081",
      },
      {
        policyName: "cp-codeplane-workloads",
        gitPods: { namespace: "codeplane", podSelector: { "app.kubernetes.io/name": "codeplane", "app.kubernetes.io/instance": "cp" }, port: 8081 },
      },
    ],
    [
      "pods without a git port: the main port",
      { CODEPLANE_RUN_EGRESS_GIT_PODS: "ns/app=x", PORT: "9000" },
      { policyName: null, gitPods: { namespace: "ns", podSelector: { app: "x" }, port: 9000 } },
    ],
  ])("reads the workload policy's name and git pods: %s", (_, env, expected) => {
    expect(loadConfig({ ...base, ...env }).runs.egress).toMatchObject(expected);
  });

  it.each([["codeplane"], ["codeplane/"], ["Codeplane/app=x"], ["ns/app"], ["ns/app=x,=y"], ["ns/app=x y"]])(
    "refuses CODEPLANE_RUN_EGRESS_GIT_PODS=%s",
    (value) => {
      expect(() => loadConfig({ ...base, CODEPLANE_RUN_EGRESS_GIT_PODS: value })).toThrow(
        /CODEPLANE_RUN_EGRESS_GIT_PODS: must be <namespace>\/<label>=<value>/,
      );
    },
  );

  it("refuses a policy name Kubernetes would not accept", () => {
    expect(() => loadConfig({ ...base, CODEPLANE_RUN_EGRESS_POLICY: "Workloads_1" })).toThrow(/CODEPLANE_RUN_EGRESS_POLICY: must be a Kubernetes object name/);
  });
});
