import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SecretBox } from "../../src/domain/crypto/secret-box.ts";
import { claimOf, claimPoolPod, loseClaim, registerPoolPod, retireWaiting, takeAssignment, type PoolAssignment } from "../../src/domain/pools/pool-pods.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";
import type { V1Job } from "@kubernetes/client-node";
import { pino } from "pino";
import { WarmPools } from "../../src/controller/warm-pools.ts";
import type { PoolCluster } from "../../src/k8s/pool-actions.ts";
import { DEFAULT_COMPUTE_TYPES } from "../../src/resources/compute-types.ts";

// The warm-pool claim protocol (issue 33) against a real Postgres, and its
// internal door over HTTP on the git listener as pool pods reach it: a pod
// gets one assignment, its own, once; a run gets one pod; another pod's
// credential opens nothing of it; a lost claim is never handed out.

const COMMIT = "c".repeat(40);
let svc: TestService;
let alice: Tenant;
let base: string;
let box: SecretBox;
let repo: string;

async function runRow(status = "pending"): Promise<string> {
  const id = crypto.randomUUID();
  await svc.db
    .insertInto("runs")
    .values({
      id,
      account_id: alice.accountId,
      repository_id: repo,
      commit_hash: COMMIT,
      workflow_id: `ns/run-${id}`,
      status,
      compute_type: "cpu-general",
      run_config: JSON.stringify({ command: ["true"], parameters: {}, timeout_seconds: 60 }),
      updated_at: new Date(),
    } as never)
    .execute();
  return id;
}

const assignmentFor = (runId: string): PoolAssignment => ({
  run_id: runId,
  commit: COMMIT,
  git_url: `http://codeplane.invalid/git/${repo}.git`,
  checkout_token: `cpg_secret-of-${runId}`,
  command: ["echo", "hi"],
  env: { API_TOKEN: `value-of-${runId}` },
  environment: null,
  outputs: null,
  timeout_seconds: 60,
});

let pools = 0;
/** A fresh pool of n waiting pods (each test its own, so they do not claim each other's). */
async function pool(n: number) {
  const name = `p${++pools}-${Date.now() % 100000}`;
  const pods = [];
  for (let i = 0; i < n; i++) pods.push({ ...(await registerPoolPod(svc.db, { pool: name, namespace: "ns", jobName: `warm-${name}-${i}` })) });
  return { name, pods };
}

const poll = (credential: string | null, wait = 0) =>
  fetch(`${base}/internal/pool/assignment?wait=${wait}`, { headers: credential ? { authorization: `Bearer ${credential}` } : {} });

beforeAll(async () => {
  svc = await startTestService({ CODEPLANE_GIT_PORT: "0" });
  base = `http://127.0.0.1:${svc.service.gitPort}`;
  box = new SecretBox({ currentId: "k1", keys: { k1: Buffer.from(svc.encryptionKey, "base64") } });
  alice = await svc.tenant();
  repo = crypto.randomUUID();
  await svc.db
    .insertInto("repositories")
    .values({
      id: repo,
      account_id: alice.accountId,
      name: "r",
      url: "https://example.invalid/r",
      provider: "git",
      created_at: new Date(),
      updated_at: new Date(),
    })
    .execute();
});
afterAll(() => svc?.close());

describe("warm pool claims", () => {
  it("give each of many concurrent runs a different pod, and the runs beyond the pool none", async () => {
    const p = await pool(3);
    const runs = await Promise.all(Array.from({ length: 6 }, () => runRow()));
    const claims = await Promise.all(runs.map((r) => claimPoolPod(svc.db, box, p.name, assignmentFor(r))));
    const got = claims.filter((c) => c !== null);
    expect(got).toHaveLength(3);
    expect(new Set(got.map((c) => c.id)).size).toBe(3);
    expect(new Set(got.map((c) => c.run_id)).size).toBe(3);
  });

  it("give a run that claims again (a restarted controller) its own pod back, never a second", async () => {
    const p = await pool(2);
    const run = await runRow();
    const first = await claimPoolPod(svc.db, box, p.name, assignmentFor(run));
    const again = await Promise.all([1, 2, 3].map(() => claimPoolPod(svc.db, box, p.name, assignmentFor(run))));
    for (const c of again) expect(c!.id).toBe(first!.id);
    const waiting = await svc.db.selectFrom("pool_pods").select("id").where("pool", "=", p.name).where("state", "=", "waiting").execute();
    expect(waiting).toHaveLength(1);
  });

  it("hand a pod its own run's assignment once, over the internal door, and nothing after", async () => {
    const p = await pool(2);
    const run = await runRow();
    const claimed = await claimPoolPod(svc.db, box, p.name, assignmentFor(run));
    const mine = p.pods.find((x) => x.id === claimed!.id)!;
    const other = p.pods.find((x) => x.id !== claimed!.id)!;

    // The other pod of the pool, with its own credential: still waiting, and never this run's.
    expect((await poll(other.credential)).status).toBe(204);
    const res = await poll(mine.credential);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.json()).toEqual(assignmentFor(run));
    // Asked again (a replayed request, a restarted agent): gone, and the sealed assignment is erased.
    expect((await poll(mine.credential)).status).toBe(410);
    const row = await claimOf(svc.db, run);
    expect(row).toMatchObject({ state: "assigned", assignment_ciphertext: null, assignment_key_id: null });
    expect((await poll(other.credential)).status).toBe(204);
  });

  it("wake a long poll as soon as its pod is claimed", async () => {
    const p = await pool(1);
    const run = await runRow();
    const started = Date.now();
    const waiting = poll(p.pods[0]!.credential, 20);
    await new Promise((r) => setTimeout(r, 300));
    await claimPoolPod(svc.db, box, p.name, assignmentFor(run));
    const res = await waiting;
    expect(res.status).toBe(200);
    expect((await res.json()).run_id).toBe(run);
    // Well inside the 20 s the poll may be held (the claim's signal, or the next look at the row).
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it("never hand out a claim that was lost (its pod went away first), nor one of a run that ended", async () => {
    const p = await pool(2);
    const lostRun = await runRow();
    const c1 = await claimPoolPod(svc.db, box, p.name, assignmentFor(lostRun));
    expect(await loseClaim(svc.db, lostRun)).toBe(true);
    expect((await poll(p.pods.find((x) => x.id === c1!.id)!.credential)).status).toBe(410);
    // A second loss changes nothing: the claim had ended.
    expect(await loseClaim(svc.db, lostRun)).toBe(false);

    const ended = await runRow();
    const c2 = await claimPoolPod(svc.db, box, p.name, assignmentFor(ended));
    await svc.db.updateTable("runs").set({ status: "cancelled" }).where("id", "=", ended).execute();
    expect((await poll(p.pods.find((x) => x.id === c2!.id)!.credential)).status).toBe(410);
    expect(await claimOf(svc.db, ended)).toMatchObject({ state: "lost", assignment_ciphertext: null });
  });

  it("refuse to lose a claim whose pod has taken it: the run may have run", async () => {
    const p = await pool(1);
    const run = await runRow();
    await claimPoolPod(svc.db, box, p.name, assignmentFor(run));
    expect(await takeAssignment(svc.db, box, p.pods[0]!.credential)).toMatchObject({ state: "assigned" });
    expect(await loseClaim(svc.db, run)).toBe(false);
  });

  it("never let a retired pod be claimed, nor a claimed one be retired", async () => {
    const p = await pool(2);
    expect(await retireWaiting(svc.db, p.pods[0]!.id)).toBe(true);
    const run = await runRow();
    const c = await claimPoolPod(svc.db, box, p.name, assignmentFor(run));
    expect(c!.id).toBe(p.pods[1]!.id);
    expect(await retireWaiting(svc.db, c!.id)).toBe(false);
    expect(await claimPoolPod(svc.db, box, p.name, assignmentFor(await runRow()))).toBeNull();
    expect((await poll(p.pods[0]!.credential)).status).toBe(410);
  });

  it.each([
    ["no credential", null, 401],
    ["a malformed one", "nope", 401],
    ["an unknown one", "cpw_" + "x".repeat(43), 401],
    ["a checkout token", "cpg_" + "x".repeat(43), 401],
  ] as const)("answer %s with %i and the usual error body", async (_name, credential, status) => {
    const res = await poll(credential);
    expect(res.status).toBe(status);
    expect(await res.json()).toEqual({ detail: "A valid pool credential is required" });
  });

  it("record an assigned pod's steps, and nothing for a pod that has no run", async () => {
    const p = await pool(2);
    const run = await runRow();
    await claimPoolPod(svc.db, box, p.name, assignmentFor(run));
    const row = await claimOf(svc.db, run);
    const mine = p.pods.find((x) => x.id === row!.id)!;
    const other = p.pods.find((x) => x.id !== row!.id)!;
    const step = (credential: string, s: string) =>
      fetch(`${base}/internal/pool/progress/${s}`, { method: "POST", headers: { authorization: `Bearer ${credential}` } });
    // Claimed but not yet taken: no steps yet.
    expect((await step(mine.credential, "started")).status).toBe(401);
    expect((await poll(mine.credential)).status).toBe(200);
    expect((await step(mine.credential, "checked_out")).status).toBe(204);
    expect((await step(mine.credential, "started")).status).toBe(204);
    expect((await step(mine.credential, "nonsense")).status).toBe(404);
    expect((await step(other.credential, "started")).status).toBe(401);
    const after = await claimOf(svc.db, run);
    expect(after!.checked_out_at).toBeInstanceOf(Date);
    expect(after!.started_at).toBeInstanceOf(Date);
  });

  it("keep the diagnostics a step's report carries (the first well-formed one), and ignore a body that is not one", async () => {
    const p = await pool(1);
    const run = await runRow();
    await claimPoolPod(svc.db, box, p.name, assignmentFor(run));
    const credential = p.pods[0]!.credential;
    expect((await poll(credential)).status).toBe(200);
    const step = (s: string, body: string) =>
      fetch(`${base}/internal/pool/progress/${s}`, {
        method: "POST",
        headers: { authorization: `Bearer ${credential}`, "content-type": "application/json" },
        body,
      });
    // Not a record: the step still counts, no diagnostics are kept.
    expect((await step("checked_out", '{"steps_ms":{"Bad Name":1}}')).status).toBe(204);
    expect((await claimOf(svc.db, run))!.diagnostics).toBeNull();
    expect((await step("environment_ready", JSON.stringify({ steps_ms: { git_fetch: 120, environment_restored: 480 }, notes: ["restored"] }))).status).toBe(
      204,
    );
    expect((await step("started", JSON.stringify({ steps_ms: { later: 1 }, notes: [] }))).status).toBe(204);
    const row = (await claimOf(svc.db, run))!;
    expect(row.diagnostics).toEqual({ steps_ms: { git_fetch: 120, environment_restored: 480 }, notes: ["restored"] });
    expect(row.environment_ready_at).toBeInstanceOf(Date);
    expect(row.started_at).toBeInstanceOf(Date);
  });
});

describe("the pool manager's claims across a controller restart and a lost pod (chaos, with a stand-in cluster)", () => {
  const KEY = "e".repeat(64);
  /** A stand-in cluster: the Jobs that exist, and what was adopted; `failAdopt` makes the next adoption die as a killed controller would. */
  function standIn() {
    const jobs = new Map<string, V1Job>();
    const adopted: string[] = [];
    let failAdopt = false;
    const cluster: PoolCluster = {
      async listPoolJobs() {
        return [...jobs.values()];
      },
      async createPoolJob(_ns, job) {
        jobs.set(job.metadata!.name!, { ...job, status: { startTime: new Date() } });
      },
      async adopt(_ns, name) {
        if (failAdopt) {
          failAdopt = false;
          throw new Error("the controller was killed");
        }
        if (!jobs.has(name)) return false;
        adopted.push(name);
        return true;
      },
      async deleteJob(_ns, name) {
        jobs.delete(name);
      },
    };
    return { cluster, jobs, adopted, killNextAdoption: () => (failAdopt = true) };
  }
  const manager = (cluster: PoolCluster, name: string) =>
    new WarmPools({
      db: svc.db,
      box,
      cluster,
      namespace: `chaos-${name}`,
      pools: [{ name, environment: KEY, compute_type: "cpu-general", size: 2, idle_seconds: 900 }],
      computeTypes: DEFAULT_COMPUTE_TYPES,
      images: { codeplane: "codeplane:dev", pullPolicy: "Never" },
      internalUrl: "http://10.0.0.1:8081",
      jobTtlSeconds: 60,
      environmentImage: async () => "codeplane-runner:dev",
      logger: pino({ level: "silent" }),
    });
  const request = (runId: string) => ({
    runId,
    environmentKey: KEY,
    computeType: "cpu-general",
    timeoutSeconds: 60,
    owner: { apiVersion: "codeplane.dev/v1alpha1", kind: "Run", name: `run-${runId}`, uid: "u" },
    labels: { "codeplane.dev/run": runId },
    assignment: async () => assignmentFor(runId),
  });

  it("a controller killed between the claim and the adoption: the next one adopts the same pod, and the run has one", async () => {
    const c = standIn();
    const first = manager(c.cluster, "chaos-a");
    await first.tick();
    expect(c.jobs.size).toBe(2);
    const run = await runRow();
    c.killNextAdoption();
    await expect(first.claim(request(run))).rejects.toThrow("killed");
    // A new controller (a new manager on the same database and cluster).
    const second = manager(c.cluster, "chaos-a");
    const claim = await second.claim(request(run));
    expect(claim).not.toBeNull();
    const rows = await svc.db.selectFrom("pool_pods").selectAll().where("run_id", "=", run).execute();
    expect(rows).toHaveLength(1);
    expect(claim!.jobName).toBe(rows[0]!.job_name);
    expect(c.adopted).toEqual([rows[0]!.job_name]);
    // Claimed again and again: still that pod.
    expect((await second.claim(request(run)))!.jobName).toBe(rows[0]!.job_name);
    expect(await svc.db.selectFrom("pool_pods").select("id").where("pool", "=", "chaos-a").where("state", "=", "claimed").execute()).toHaveLength(1);
  });

  it("a pod deleted after its claim, before it took the run: the claim is lost and the run starts the ordinary way; the pod can never take it", async () => {
    const c = standIn();
    const m = manager(c.cluster, "chaos-b");
    await m.tick();
    const run = await runRow();
    const claim = await m.claim(request(run));
    c.jobs.delete(claim!.jobName);
    expect(await m.claim(request(run))).toBeNull();
    expect(await claimOf(svc.db, run)).toMatchObject({ state: "lost", assignment_ciphertext: null });
  });

  it("a pod deleted after it took the run: the run is failed, saying so, and never started again", async () => {
    const c = standIn();
    const m = manager(c.cluster, "chaos-c");
    await m.tick();
    const run = await runRow();
    const claim = await m.claim(request(run));
    const row = await claimOf(svc.db, run);
    await svc.db.updateTable("pool_pods").set({ state: "assigned", assignment_ciphertext: null, assignment_key_id: null }).where("id", "=", row!.id).execute();
    c.jobs.delete(claim!.jobName);
    await expect(m.claim(request(run))).rejects.toThrow(/went away after it had received the run/);
    await expect(m.claim(request(run))).rejects.toThrow(/not started again/);
  });

  it("refills at once after a claim, up to the pool's size and no further", async () => {
    const c = standIn();
    const m = manager(c.cluster, "chaos-d");
    await m.tick();
    await m.tick();
    expect(c.jobs.size).toBe(2);
    await m.claim(request(await runRow()));
    await m.tick();
    // Two waiting again, beside the claimed one.
    expect(c.jobs.size).toBe(3);
    expect(await svc.db.selectFrom("pool_pods").select("id").where("pool", "=", "chaos-d").where("state", "=", "waiting").execute()).toHaveLength(2);
  });
});
