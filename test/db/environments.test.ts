import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import type { V1Job, V1Secret } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EnvironmentBuilds } from "../../src/controller/environment-builds.ts";
import { mintCheckoutToken, revokeCheckoutTokens } from "../../src/domain/checkout/checkout-tokens.ts";
import { claimBuild, findEnvironment, hashUploadToken } from "../../src/domain/environments/environment-rows.ts";
import { EnvironmentService } from "../../src/domain/environments/environments.ts";
import { NO_ENVIRONMENT, type AnalyzedEnvironment } from "../../src/domain/environments/resolve.ts";
import { DomainError, DomainValidationError } from "../../src/domain/errors.ts";
import type { ClusterActions } from "../../src/k8s/cluster-actions.ts";
import { DEFAULT_COMPUTE_TYPES } from "../../src/resources/compute-types.ts";
import type { Catalog } from "../../src/resources/environment-catalog.ts";
import type { RunEnvironmentSpec } from "../../src/resources/run.ts";
import { createRootLogger } from "../../src/logger.ts";
import { DirectoryStore } from "../../src/storage/directory-store.ts";
import { seedAccountWithRepository } from "../helpers/seed.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/service.ts";

// Environments against a real Postgres and a real directory store: one row
// (and so one build) per account and key however many runs ask at once, the
// upload and restore doors opening exactly what their token allows, the size
// bounds, eviction and deletion. The cluster is a recording fake.

const logger = createRootLogger("silent");
const COMMIT = "c".repeat(40);
const CATALOG: Catalog = [
  { image: "runner:dev", toolchains: { python: "3.11", node: "24" }, packages: [] },
  { image: "torch:dev", toolchains: { python: "3.11", node: "24" }, packages: ["torch"], presets: ["gpu-standin"] },
];

let database: TestDatabase;
let dir: string;
let store: DirectoryStore;
let a: { accountId: string; repositoryId: string };
let b: { accountId: string; repositoryId: string };

const env = (over: Partial<AnalyzedEnvironment> = {}): AnalyzedEnvironment => ({
  ...NO_ENVIRONMENT,
  toolchains: [{ name: "python", version: "3.10", exact: false, source: "pyproject.toml" }],
  manifests: [{ path: "requirements.txt", sha256: "1".repeat(64) }],
  steps: [{ name: "pip install", run: "pip install -r requirements.txt", why: "requirements.txt", ecosystem: "python" }],
  ...over,
});

const service = (over: Partial<ConstructorParameters<typeof EnvironmentService>[0]> = {}) =>
  new EnvironmentService({ store, catalog: CATALOG, maxArchiveBytes: 1024 * 1024, maxCacheBytes: 1024 * 1024 * 1024, logger, ...over });

const run = (who: { accountId: string; repositoryId: string }, computeType = "cpu-general") => ({ ...who, commitHash: COMMIT, computeType });

/** A run row with this environment and a checkout token for it, as the controller mints one. */
async function runWithToken(who: { accountId: string; repositoryId: string }, key: string | null, kind: "run" | "analysis" = "run") {
  const id = crypto.randomUUID();
  if (kind === "run") {
    await database.db
      .insertInto("runs")
      .values({
        id,
        account_id: who.accountId,
        repository_id: who.repositoryId,
        commit_hash: COMMIT,
        workflow_id: `ns/run-${id}`,
        status: "pending",
        compute_type: "cpu-general",
        run_config: JSON.stringify({ command: ["true"], parameters: {}, timeout_seconds: 60 }),
        environment: key === null ? null : JSON.stringify({ key, image: "runner:dev", warnings: [] }),
        updated_at: new Date(),
      })
      .execute();
  }
  const token = await mintCheckoutToken(database.db, {
    workloadKind: kind,
    workloadId: id,
    ...who,
    commitHash: COMMIT,
    expiresAt: new Date(Date.now() + 600_000),
  });
  return { id, token };
}

const archive = (bytes: number) => Readable.from([Buffer.alloc(bytes, 1)]);

/** A building environment claimed with a known upload token, as a build Job holds it. */
async function building(svc: EnvironmentService, who = a, e = env()) {
  const plan = await svc.planRun(database.db, run(who), e, "runner:dev");
  const row = (await findEnvironment(database.db, who.accountId, plan.environment!.key))!;
  const token = `cpu_${crypto.randomUUID()}`;
  expect(await claimBuild(database.db, row.id, row.started_at, token, new Date(Date.now() + 600_000))).toBe(true);
  return { key: plan.environment!.key, id: row.id, token };
}

beforeAll(async () => {
  database = await createTestDatabase();
  a = await seedAccountWithRepository(database.db);
  b = await seedAccountWithRepository(database.db);
  dir = mkdtempSync(path.join(tmpdir(), "cp-envstore-"));
  store = new DirectoryStore(dir);
});
afterAll(async () => {
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe("planRun", () => {
  it("gives concurrent runs of a new environment one row, so one build", async () => {
    const e = env({ manifests: [{ path: "requirements.txt", sha256: "2".repeat(64) }] });
    const plans = await Promise.all(Array.from({ length: 10 }, () => service().planRun(database.db, run(a), e, "runner:dev")));
    const keys = new Set(plans.map((p) => p.environment!.key));
    expect(keys.size).toBe(1);
    const rows = await database.db
      .selectFrom("environments")
      .selectAll()
      .where("key", "=", [...keys][0]!)
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.status).toBe("building");
  });

  it("keeps accounts apart: the same key is another account's own row", async () => {
    const e = env({ manifests: [{ path: "requirements.txt", sha256: "3".repeat(64) }] });
    const pa = await service().planRun(database.db, run(a), e, "runner:dev");
    const pb = await service().planRun(database.db, run(b), e, "runner:dev");
    expect(pa.environment!.key).toBe(pb.environment!.key);
    const rows = await database.db.selectFrom("environments").select(["id", "account_id"]).where("key", "=", pa.environment!.key).execute();
    expect(new Set(rows.map((r) => r.account_id))).toEqual(new Set([a.accountId, b.accountId]));
  });

  it("gives a commit with nothing to install the image alone, and no analysis the runner image", async () => {
    const plain = await service().planRun(
      database.db,
      run(a),
      { ...NO_ENVIRONMENT, toolchains: [{ name: "python", version: null, exact: false, source: "x.py" }] },
      "runner:dev",
    );
    expect(plain).toMatchObject({ image: "runner:dev", environment: undefined });
    expect(await service().planRun(database.db, run(a), null, "fallback:dev")).toMatchObject({ image: "fallback:dev", environment: undefined, record: null });
  });

  it.each([
    [
      "a toolchain no image provides",
      env({ toolchains: [{ name: "rust", version: null, exact: false, source: "Cargo.toml" }] }),
      "cpu-general",
      /no image provides rust \(Cargo\.toml\)/,
    ],
    [
      "torch on a CPU preset when only the GPU stand-in provides it",
      env({ packages: ["torch"] }),
      "cpu-general",
      /needs torch.*only on compute types gpu-standin/,
    ],
  ])("refuses %s with a 422 naming what is missing", async (_name, e, preset, msg) => {
    const err = await service()
      .planRun(database.db, run(a, preset), e, "runner:dev")
      .catch((x: unknown) => x);
    expect(err).toBeInstanceOf(DomainValidationError);
    expect((err as DomainValidationError).issues[0]!.msg).toMatch(msg);
  });

  it("runs torch on the preset whose image provides it", async () => {
    const plan = await service().planRun(database.db, run(a, "gpu-standin"), env({ packages: ["torch"] }), "runner:dev");
    expect(plan.image).toBe("torch:dev");
  });

  it("refuses (409) a run of an environment whose build failed, pointing at its log", async () => {
    const e = env({ manifests: [{ path: "requirements.txt", sha256: "4".repeat(64) }] });
    const plan = await service().planRun(database.db, run(a), e, "runner:dev");
    await database.db
      .updateTable("environments")
      .set({ status: "failed", error: "environment build failed in step: pip" })
      .where("key", "=", plan.environment!.key)
      .execute();
    const err = await service()
      .planRun(database.db, run(a), e, "runner:dev")
      .catch((x: unknown) => x);
    expect(err).toMatchObject({ kind: "conflict" });
    expect((err as DomainError).message).toContain(`GET /v1/environments/${plan.environment!.key}`);
  });
});

describe("the archive doors", () => {
  it("stores a build's archive with its upload token only, once, and the environment is then ready", async () => {
    const svc = service();
    const { key, id, token } = await building(svc, a, env({ manifests: [{ path: "requirements.txt", sha256: "5".repeat(64) }] }));
    expect(await svc.receiveArchive(database.db, id, "cpu_wrong", archive(10))).toBeNull();
    expect(await svc.receiveLog(database.db, id, "cpu_wrong", "forged")).toBe(false);
    expect(await svc.receiveLog(database.db, id, token, "==> [1/1] pip install\nSuccessfully installed click-8.1.7\n")).toBe(true);
    expect(await svc.receiveArchive(database.db, id, token, archive(1000))).toEqual({ size: 1000 });
    const row = await findEnvironment(database.db, a.accountId, key);
    expect(row).toMatchObject({ status: "ready", upload_token_hash: null, log: "==> [1/1] pip install\nSuccessfully installed click-8.1.7\n" });
    expect(Number(row!.size)).toBe(1000);
    // The token is spent: a second upload (a replayed request) changes nothing.
    expect(await svc.receiveArchive(database.db, id, token, archive(5))).toBeNull();
  });

  it("refuses an archive over CODEPLANE_ENVIRONMENT_MAX_BYTES while it streams, storing nothing", async () => {
    const svc = service({ maxArchiveBytes: 64 * 1024 });
    const { key, id, token } = await building(svc, a, env({ manifests: [{ path: "requirements.txt", sha256: "6".repeat(64) }] }));
    const before = readdirSync(dir, { recursive: true }).length;
    // 16 MiB offered in 64 KiB chunks, generated as read: the refusal must come long before the end.
    let produced = 0;
    const body = Readable.from(
      (function* () {
        for (let i = 0; i < 256; i++) {
          produced += 64 * 1024;
          yield Buffer.alloc(64 * 1024, 2);
        }
      })(),
    );
    const err = await svc.receiveArchive(database.db, id, token, body).catch((x: unknown) => x);
    expect(err).toMatchObject({ kind: "payload_too_large" });
    expect(produced).toBeLessThan(16 * 1024 * 1024);
    expect((await findEnvironment(database.db, a.accountId, key))!.status).toBe("building");
    expect(readdirSync(dir, { recursive: true }).length).toBe(before);
  });

  it("opens a run's own environment with its checkout token, and nothing else", async () => {
    const svc = service();
    const e = env({ manifests: [{ path: "requirements.txt", sha256: "7".repeat(64) }] });
    const { key, id, token } = await building(svc, a, e);
    await svc.receiveArchive(database.db, id, token, archive(2048));
    const mine = await runWithToken(a, key);
    const opened = await svc.openArchive(database.db, mine.token, key);
    expect(opened).not.toBeNull();
    expect(opened).not.toBe("unauthenticated");
    if (opened && opened !== "unauthenticated") {
      expect(opened.size).toBe(2048);
      opened.body.resume();
    }

    // Another key with the same token; another run's token; another account's run with the same key; an analysis's token.
    const other = await building(svc, a, env({ manifests: [{ path: "requirements.txt", sha256: "8".repeat(64) }] }));
    await svc.receiveArchive(database.db, other.id, other.token, archive(10));
    expect(await svc.openArchive(database.db, mine.token, other.key)).toBeNull();
    expect(await svc.openArchive(database.db, (await runWithToken(a, other.key)).token, key)).toBeNull();
    expect(await svc.openArchive(database.db, (await runWithToken(b, key)).token, key)).toBeNull();
    expect(await svc.openArchive(database.db, (await runWithToken(a, key, "analysis")).token, key)).toBeNull();
    expect(await svc.openArchive(database.db, "cpg_" + "x".repeat(43), key)).toBe("unauthenticated");
    // A revoked token (the run's command started) opens nothing.
    await revokeCheckoutTokens(database.db, "run", mine.id);
    expect(await svc.openArchive(database.db, mine.token, key)).toBe("unauthenticated");
  });
});

describe("the cache", () => {
  it("lists, gets and deletes an account's environments; another account's key is not found", async () => {
    const svc = service();
    const { key, id, token } = await building(svc, b, env({ manifests: [{ path: "requirements.txt", sha256: "9".repeat(64) }] }));
    await expect(svc.delete(database.db, b.accountId, key)).rejects.toMatchObject({ kind: "conflict" });
    await svc.receiveArchive(database.db, id, token, archive(100));
    expect((await svc.list(database.db, b.accountId, { limit: 100 })).items.map((e) => e.key)).toContain(key);
    await expect(svc.get(database.db, a.accountId, key)).rejects.toMatchObject({ kind: "not_found" });
    await expect(svc.delete(database.db, a.accountId, key)).rejects.toMatchObject({ kind: "not_found" });
    await svc.delete(database.db, b.accountId, key);
    await expect(svc.get(database.db, b.accountId, key)).rejects.toMatchObject({ kind: "not_found" });
    // Deleted: the next run of the key reserves a new one.
    const again = await svc.planRun(database.db, run(b), env({ manifests: [{ path: "requirements.txt", sha256: "9".repeat(64) }] }), "runner:dev");
    expect((await findEnvironment(database.db, b.accountId, again.environment!.key))!.status).toBe("building");
  });

  it("drops the least recently used archives beyond CODEPLANE_ENVIRONMENT_CACHE_MAX_BYTES, never the one just stored", async () => {
    const big = service({ maxCacheBytes: 1024 * 1024 * 1024 });
    // Start from a known total: what earlier tests stored stays below the bound they used.
    const made: { key: string }[] = [];
    for (const n of ["a", "b", "c"]) {
      const one = await building(big, a, env({ manifests: [{ path: "requirements.txt", sha256: n.repeat(64) }] }));
      await big.receiveArchive(database.db, one.id, one.token, archive(300 * 1024));
      made.push(one);
      await new Promise((r) => setTimeout(r, 20));
    }
    // Use the first again: the second is now the least recently used.
    await database.db.updateTable("environments").set({ last_used_at: new Date() }).where("key", "=", made[0]!.key).execute();
    const total = Number(
      (
        await database.db
          .selectFrom("environments")
          .select((eb) => eb.fn.sum<string>("size").as("s"))
          .where("status", "=", "ready")
          .where("deleted_at", "is", null)
          .executeTakeFirstOrThrow()
      ).s,
    );
    // Room for all but one of the three: the small archives of earlier tests go first (older), then the second.
    const tight = service({ maxCacheBytes: total - 300 * 1024 + 1 });
    expect(await tight.evict(database.db)).toBeGreaterThan(0);
    expect(await findEnvironment(database.db, a.accountId, made[1]!.key)).toBeUndefined();
    expect(await findEnvironment(database.db, a.accountId, made[0]!.key)).toBeDefined();
    expect(await findEnvironment(database.db, a.accountId, made[2]!.key)).toBeDefined();
    const files = readdirSync(dir, { recursive: true }).map(String);
    expect(files.some((f) => f.includes(made[1]!.key))).toBe(false);
    expect(files.some((f) => f.includes(made[0]!.key))).toBe(true);
  });
});

function recordingCluster() {
  const jobs: V1Job[] = [];
  const secrets: V1Secret[] = [];
  const cluster: ClusterActions = {
    createJob: async (_ns, job) => void jobs.push(job),
    getJob: async (_ns, name) => jobs.find((j) => j.metadata?.name === name) ?? null,
    deleteJob: async () => {},
    createSecret: async (_ns, s) => void secrets.push(s),
    deleteSecret: async () => {},
    newestPod: async () => null,
    readPodLog: async () => null,
    recordEvent: async () => {},
  };
  return { cluster, jobs, secrets };
}

function environmentBuilds(cluster: ClusterActions) {
  return new EnvironmentBuilds({
    db: database.db,
    namespace: "codeplane",
    images: { runner: "runner:dev", codeplane: "codeplane:dev", pullPolicy: "IfNotPresent" },
    buildTimeoutSeconds: 600,
    jobTtlSeconds: 600,
    checkout: {
      internalUrl: "http://10.244.0.1:8081",
      egress: "restricted",
      preprocessEnv: {},
      mint: (g) => mintCheckoutToken(database.db, g),
      revoke: async (kind, id) => void (await revokeCheckoutTokens(database.db, kind, id)),
    },
    cluster,
    imagePolicy: { catalog: CATALOG, allowedRegistries: [] },
    logger,
  });
}

/** A run of this plan as the controller hands it to the builds (its Job not made yet). */
const waitingRun = (runId: string, who: { accountId: string; repositoryId: string }, environment: RunEnvironmentSpec, commitHash = COMMIT) => ({
  runId,
  ...who,
  commitHash,
  computeType: "cpu-general",
  environment,
  compute: DEFAULT_COMPUTE_TYPES["cpu-general"]!,
});

describe("EnvironmentBuilds", () => {
  it("starts one build for ten runs that find a new environment at once", async () => {
    const { cluster, jobs, secrets } = recordingCluster();
    const builds = environmentBuilds(cluster);
    const plan = await service().planRun(database.db, run(a), env({ manifests: [{ path: "requirements.txt", sha256: "d".repeat(64) }] }), "runner:dev");
    const waiting = waitingRun(crypto.randomUUID(), a, plan.environment!);
    const states = await Promise.all(Array.from({ length: 10 }, () => builds.ensure(waiting)));
    expect(states.every((s) => s.state === "waiting")).toBe(true);
    expect(jobs).toHaveLength(1);
    expect(secrets).toHaveLength(1);
    // Asked again while the Job runs: still one.
    await builds.ensure(waiting);
    expect(jobs).toHaveLength(1);
  });
});

describe("a run given a ready environment keeps it until it has restored it", () => {
  const fresh = () => env({ manifests: [{ path: "requirements.txt", sha256: crypto.randomUUID().replaceAll("-", "").padEnd(64, "0") }] });

  /** A stored environment and a run whose Job the controller has just made for it (ensure said ready). */
  async function readyFor(who = a, e = fresh()) {
    const svc = service();
    const { id, token } = await building(svc, who, e);
    await svc.receiveArchive(database.db, id, token, archive(4096));
    const plan = await svc.planRun(database.db, run(who), e, "runner:dev");
    const r = await runWithToken(who, plan.environment!.key);
    const state = await environmentBuilds(recordingCluster().cluster).ensure(waitingRun(r.id, who, plan.environment!));
    expect(state.state).toBe("ready");
    return { svc, key: plan.environment!.key, id, run: r, plan, e };
  }

  async function restore(svc: EnvironmentService, token: string, key: string) {
    const opened = await svc.openArchive(database.db, token, key);
    if (!opened || opened === "unauthenticated") return opened;
    opened.body.resume();
    return opened.size;
  }

  const archived = (id: string) =>
    readdirSync(dir, { recursive: true })
      .map(String)
      .some((f) => f.includes(id));
  const rowExists = async (id: string) => (await database.db.selectFrom("environments").select("id").where("id", "=", id).executeTakeFirst()) !== undefined;
  const started = (runId: string) => database.db.updateTable("runs").set({ status: "running" }).where("id", "=", runId).execute();

  it("restores the archive it was given when its environment is deleted before the restore; the archive goes once the run is past it", async () => {
    const { svc, key, id, run: r } = await readyFor();
    await svc.delete(database.db, a.accountId, key);
    expect(await findEnvironment(database.db, a.accountId, key)).toBeUndefined();
    expect(await restore(svc, r.token, key)).toBe(4096);
    // Still wanted: a purge leaves it.
    await svc.purge(database.db);
    expect(archived(id)).toBe(true);
    await started(r.id);
    await svc.purge(database.db);
    expect(archived(id)).toBe(false);
    expect(await rowExists(id)).toBe(false);
  });

  it("is not evicted from under a run that has still to restore it, and is evicted once the run is past it", async () => {
    const { key, id, run: r } = await readyFor();
    const tight = service({ maxCacheBytes: 1 });
    await tight.evict(database.db);
    expect(await findEnvironment(database.db, a.accountId, key)).toMatchObject({ id, status: "ready" });
    expect(await restore(tight, r.token, key)).toBe(4096);
    await started(r.id);
    expect(await tight.evict(database.db)).toBeGreaterThan(0);
    expect(await findEnvironment(database.db, a.accountId, key)).toBeUndefined();
    expect(archived(id)).toBe(false);
    expect(await rowExists(id)).toBe(false);
  });

  it("is not promised an environment dropped between the look and the promise: the run waits for a new build", async () => {
    const { svc, key, plan } = await readyFor();
    const row = (await findEnvironment(database.db, a.accountId, key))!;
    const late = await runWithToken(a, key);
    // Dropped after the controller read it ready: the pin fails, nothing is promised, and the next look reserves and builds.
    await svc.delete(database.db, a.accountId, key);
    const { cluster, jobs } = recordingCluster();
    expect(await environmentBuilds(cluster).ensure(waitingRun(late.id, a, plan.environment!))).toEqual({ state: "waiting" });
    expect(jobs).toHaveLength(1);
    expect((await findEnvironment(database.db, a.accountId, key))!.id).not.toBe(row.id);
  });

  it("purges deleted rows and their archives at the next eviction pass, never the archive of the key's new row", async () => {
    const { svc, key, id: old, run: r1, plan } = await readyFor();
    await svc.delete(database.db, a.accountId, key);
    // A later run builds the key again while the first has still to restore the old archive.
    const r2 = await runWithToken(a, key);
    expect(await environmentBuilds(recordingCluster().cluster).ensure(waitingRun(r2.id, a, plan.environment!))).toEqual({ state: "waiting" });
    const rebuilt = (await findEnvironment(database.db, a.accountId, key))!;
    const uploadToken = `cpu_${crypto.randomUUID()}`;
    // The build's claim is the controller's (done by ensure); the test takes the upload token over.
    await database.db
      .updateTable("environments")
      .set({ upload_token_hash: hashUploadToken(uploadToken) })
      .where("id", "=", rebuilt.id)
      .execute();
    expect(await svc.receiveArchive(database.db, rebuilt.id, uploadToken, archive(2048))).toEqual({ size: 2048 });
    expect(archived(old)).toBe(true);
    await started(r1.id);
    await svc.evict(database.db);
    expect(await rowExists(old)).toBe(false);
    expect(archived(old)).toBe(false);
    expect(archived(rebuilt.id)).toBe(true);
    expect(await findEnvironment(database.db, a.accountId, key)).toMatchObject({ id: rebuilt.id, status: "ready" });
    expect(await restore(svc, r2.token, key)).toBe(2048);
  });

  it("purges deleted rows on a schedule too, with no build ending to run an eviction pass", async () => {
    const { svc, key, id, run: r } = await readyFor();
    await svc.delete(database.db, a.accountId, key);
    await started(r.id);
    const purging = svc.startPurging(database.db, 20);
    try {
      await expect.poll(() => rowExists(id), { timeout: 30_000 }).toBe(false);
    } finally {
      await purging.stop();
    }
    expect(archived(id)).toBe(false);
  });
});

describe("reserving a deleted environment again", () => {
  it("describes the new row as its analysis did (toolchains, manifests, steps' reasons, packages, notes), not only the run's steps", async () => {
    const commit = "e".repeat(40);
    const e = env({
      manifests: [{ path: "requirements.txt", sha256: "e".repeat(64) }],
      packages: ["click"],
      notes: ["pinned by requirements.txt"],
    });
    const analysisId = crypto.randomUUID();
    await database.db
      .insertInto("analyses")
      .values({
        id: analysisId,
        account_id: a.accountId,
        repository_id: a.repositoryId,
        commit_hash: commit,
        branch: "main",
        language: "en",
        workflow_id: `codeplane/analysis-${analysisId}`,
        status: "completed",
        status_rank: 2,
        result: JSON.stringify({ environment: e }),
        updated_at: new Date(),
      })
      .execute();
    const svc = service();
    const plan = await svc.planRun(database.db, { ...a, commitHash: commit, computeType: "cpu-general" }, e, "runner:dev");
    const first = (await findEnvironment(database.db, a.accountId, plan.environment!.key))!;
    expect(first.definition.toolchains).toHaveLength(1);
    // Dropped before the run's Job was made (an unstarted reservation may be deleted): the controller reserves it again.
    await svc.delete(database.db, a.accountId, plan.environment!.key);
    const r = await runWithToken(a, plan.environment!.key);
    expect(await environmentBuilds(recordingCluster().cluster).ensure(waitingRun(r.id, a, plan.environment!, commit))).toEqual({ state: "waiting" });
    const again = (await findEnvironment(database.db, a.accountId, plan.environment!.key))!;
    expect(again.id).not.toBe(first.id);
    expect(again.image).toBe(first.image);
    expect(again.definition).toEqual(first.definition);
  });
});
