import { execFile as execFileCb } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gitListenerEnv, MIRROR, NODE_ADDRESS, openTestCluster, until, type TestCluster } from "../helpers/cluster.ts";
import { startTestService, type TestService } from "../helpers/service.ts";

// Warm pools on the local cluster (issue 33): a cached environment's pool keeps
// two pods waiting, which hold no token, secret or code; a run of that
// environment claims one, runs once on it and never shares it, and a pod's
// own credential opens only its own assignment.

const execFile = promisify(execFileCb);
const root = path.join(import.meta.dirname, "../..");
const FIXTURE = path.join(root, "test/fixtures/runnable/py-cli-requirements");
const SECRET_VALUE = `warm-secret-${Date.now()}`;

let cluster: TestCluster;
let cold: TestService;
let svc: TestService;
let key: string;
let api: (pathname: string, init?: RequestInit & { json?: unknown }) => Promise<Response>;
let repo: { id: string; commit: string };
let envKey: string;
const cleanup: (() => void)[] = [];
/** The database both services use (the second service's own handle is to a database it does not use). */
const db = () => cold.db;

const kubectl = async (...args: string[]) => (await execFile("kubectl", ["--kubeconfig", cluster.kubeconfig, "-n", cluster.namespace, ...args])).stdout;

async function finished(runId: string) {
  return until(`run ${runId} to finish`, 600_000, async () => {
    const run = await (await api(`/v1/runs/${runId}`)).json();
    return ["completed", "failed", "cancelled"].includes(run.status) ? run : undefined;
  });
}

async function stdoutOf(runId: string): Promise<string> {
  await until(
    "logs to be archived",
    120_000,
    async () => (await db().selectFrom("runs").select("logs_complete").where("id", "=", runId).executeTakeFirst())?.logs_complete,
  );
  return (await (await api(`/v1/runs/${runId}/logs/stdout`)).json()).content;
}

const startRun = async (code: string) => {
  const res = await api(`/v1/repositories/${repo.id}/${repo.commit}/runs`, {
    method: "POST",
    json: { command: ["python3", "-c", code], timeout_seconds: 300 },
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()).run_id as string;
};

/** The pool's waiting pods, once there are `n` whose agents have asked for work. */
async function waitingPods(n: number) {
  return until(`${n} warm pods waiting`, 300_000, async () => {
    const rows = await db()
      .selectFrom("pool_pods")
      .selectAll()
      .where("namespace", "=", cluster.namespace)
      .where("state", "=", "waiting")
      .where("ready_at", "is not", null)
      .execute();
    if (rows.length < n) return undefined;
    const pods = await cluster.core.listNamespacedPod({ namespace: cluster.namespace, labelSelector: "codeplane.dev/pool=py" });
    const running = rows.map((r) =>
      pods.items.find((p) => p.metadata?.labels?.["codeplane.dev/pool-pod"] === r.id && p.status?.containerStatuses?.[0]?.state?.running),
    );
    return running.every(Boolean) ? rows.map((r, i) => ({ row: r, pod: running[i]! })) : undefined;
  });
}

beforeAll(async () => {
  cluster = await openTestCluster("cp-e2e-warm");
  // One data directory for both services: the environment's archive is stored under it.
  const dataDir = mkdtempSync(path.join(tmpdir(), "cp-warm-data-"));
  cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const settings = {
    CODEPLANE_DATA_DIR: dataDir,
    KUBECONFIG: cluster.kubeconfig,
    CODEPLANE_NAMESPACE: cluster.namespace,
    CODEPLANE_IMAGE_PULL_POLICY: "Never",
    ...gitListenerEnv(),
    CODEPLANE_COMPUTE_TYPES: JSON.stringify({ "cpu-general": { requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "2", memory: "1Gi" } } }),
    CODEPLANE_RUN_EGRESS_ALLOW: MIRROR.egressAllow,
    CODEPLANE_RUN_PREPROCESS_ENV: JSON.stringify(MIRROR.preprocessEnv),
  };
  // First without pools: the environment is built (and its key learnt) by an ordinary run.
  cold = await startTestService(settings);
  const tenant = await cold.tenant();
  key = tenant.key;
  const dir = mkdtempSync(path.join(tmpdir(), "cp-warm-"));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(FIXTURE, dir, { recursive: true });
  const git = (...args: string[]) =>
    execFile("git", ["-c", "user.name=F", "-c", "user.email=f@example.com", "-c", "commit.gpgsign=false", ...args], { cwd: dir });
  await git("init", "-q", "-b", "main");
  await git("add", "-A");
  await git("commit", "-q", "-m", "fixture");
  const commit = (await git("rev-parse", "HEAD")).stdout.trim();
  await git("clone", "-q", "--bare", dir, `${dir}.git`);
  cleanup.push(() => rmSync(`${dir}.git`, { recursive: true, force: true }));
  const url = await cluster.publish(`${dir}.git`, `warm-${cluster.namespace}`);
  const reg = await tenant.api("/v1/repositories", { method: "POST", json: { url, name: "warm" } });
  repo = { id: (await reg.json()).id, commit };
  expect((await tenant.api(`/v1/repositories/${repo.id}/analysis/${commit}`, { method: "POST", json: {} })).status).toBeLessThan(300);
  await until("the analysis", 300_000, async () => {
    const a = await (await tenant.api(`/v1/repositories/${repo.id}/analysis/${commit}`)).json();
    return a.status === "completed" ? a : a.status === "failed" ? Promise.reject(new Error(a.error)) : undefined;
  });
  expect((await tenant.api("/v1/environment-variables", { method: "POST", json: { name: "WARM_SECRET", value: SECRET_VALUE, secret: true } })).status).toBe(
    201,
  );
  api = tenant.api;
  svc = cold;
  const first = await finished(await startRun("print('built')"));
  expect(first.status, first.error).toBe("completed");
  envKey = first.environment.key;
  expect(envKey).toMatch(/^[0-9a-f]{64}$/);
  await cold.stop();

  // Then with a pool of two for that environment, on the same database.
  svc = await startTestService({
    ...settings,
    DATABASE_URL: cold.databaseUrl,
    CODEPLANE_ENCRYPTION_KEY: cold.encryptionKey,
    CODEPLANE_WARM_POOLS: JSON.stringify([{ name: "py", environment: envKey, size: 2, idle_seconds: 900 }]),
  });
  api = (pathname, init = {}) => {
    const { json, headers, ...rest } = init;
    return fetch(svc.url + pathname, {
      ...rest,
      headers: {
        authorization: `Bearer ${key}`,
        ...(json !== undefined && { "content-type": "application/json" }),
        ...(headers as Record<string, string> | undefined),
      },
      ...(json !== undefined && { body: JSON.stringify(json) }),
    });
  };
}, 900_000);

afterAll(async () => {
  await svc?.stop();
  await cold?.close();
  await cluster?.cleanup();
  for (const c of cleanup) c();
});

describe("warm pools", () => {
  it("keep pods waiting that hold no token, no secret and no code before a claim", async () => {
    const waiting = await waitingPods(2);
    for (const { pod } of waiting) {
      const name = pod.metadata!.name!;
      // Only empty directories are mounted: no Secret, no projected token, no host path.
      expect(
        pod.spec!.volumes!.every((v) => v.emptyDir && !v.secret && !v.projected && !v.hostPath),
        JSON.stringify(pod.spec!.volumes),
      ).toBe(true);
      expect(pod.spec!.automountServiceAccountToken).toBe(false);
      // Everything the pod's processes see: their environment and every file of every volume.
      const seen = await kubectl(
        "exec",
        name,
        "-c",
        "main",
        "--",
        "sh",
        "-c",
        "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'; find /workspace /tmp -type f -exec cat {} + 2>/dev/null; find /workspace /tmp -mindepth 1 | head",
      );
      // The tools volume holds codeplane's own programs and nothing else.
      const tools = (await kubectl("exec", name, "-c", "main", "--", "ls", "/codeplane/bin")).split("\n").filter(Boolean).sort();
      expect(tools).toEqual(["entrypoint.ts", "environment-archive.ts", "outputs.ts", "warm.ts"]);
      for (const forbidden of [SECRET_VALUE, "cpg_", "cpo_", "CODEPLANE_CHECKOUT_TOKEN", "CODEPLANE_OUTPUT_TOKEN", "csvstat", "WARM_SECRET"]) {
        expect(seen, `${name} holds ${forbidden}`).not.toContain(forbidden);
      }
      // It holds its pool credential, which opens nothing but its own (empty) assignment.
      expect(seen).toContain("CODEPLANE_POOL_CREDENTIAL=cpw_");
    }
  }, 600_000);

  it("start a run of the pooled environment on a waiting pod, which runs it once, with its variables, and shows warm: true", async () => {
    await waitingPods(2);
    const runId = await startRun(`import os; print('warm hello', os.environ.get('WARM_SECRET') == '${SECRET_VALUE}')`);
    const run = await finished(runId);
    expect(run.status, run.error).toBe("completed");
    const stdout = await stdoutOf(runId);
    expect(stdout).toContain("warm hello True");
    // What the agent measured is kept beside the claim, never in the run's output.
    expect(stdout).not.toContain("restored the environment");
    const measured = await db().selectFrom("pool_pods").select("diagnostics").where("run_id", "=", runId).executeTakeFirstOrThrow();
    expect(measured.diagnostics?.notes).toEqual(expect.arrayContaining([expect.stringMatching(/^restored the environment: /)]));
    expect(Object.keys(measured.diagnostics?.steps_ms ?? {})).toEqual(expect.arrayContaining(["git_fetch", "environment_restored", "checked_out"]));
    const admitted = run.timeline.find((e: { event: string }) => e.event === "admitted");
    expect(admitted).toMatchObject({ warm: true, pool: "py" });
    expect(run.timeline.map((e: { event: string }) => e.event)).toEqual([
      "created",
      "admitted",
      "checked_out",
      "environment_ready",
      "started",
      "first_output",
      "ended",
    ]);
    // The Run owns the pool's Job, as it owns a cold run's.
    const claim = await db().selectFrom("pool_pods").selectAll().where("run_id", "=", runId).executeTakeFirstOrThrow();
    expect(claim.state).toBe("assigned");
    const job = await cluster.batch.readNamespacedJob({ namespace: cluster.namespace, name: claim.job_name });
    expect(job.metadata!.ownerReferences).toEqual([expect.objectContaining({ kind: "Run", name: `run-${runId}`, controller: true })]);
    expect(job.metadata!.labels).toMatchObject({ "codeplane.dev/run": runId });
  }, 600_000);

  it("never give a pod a second run, and refill the pool", async () => {
    await waitingPods(2);
    const runs = await Promise.all([1, 2, 3].map((i) => startRun(`print('run ${i}')`)));
    const done = await Promise.all(runs.map(finished));
    for (const r of done) expect(r.status, r.error).toBe("completed");
    const claims = await db().selectFrom("pool_pods").selectAll().where("run_id", "in", runs).execute();
    // Two waited; the third found the pool empty (or a refilled pod), never one already used.
    expect(claims.length).toBeGreaterThanOrEqual(2);
    expect(new Set(claims.map((c) => c.job_name)).size).toBe(claims.length);
    for (const c of claims) {
      // One pod, which succeeded once (the Job's own count follows the pod's end a little later).
      const job = await until(`${c.job_name} to count its pod`, 120_000, async () => {
        const j = await cluster.batch.readNamespacedJob({ namespace: cluster.namespace, name: c.job_name });
        return (j.status?.succeeded ?? 0) + (j.status?.failed ?? 0) > 0 ? j : undefined;
      });
      expect(job.status?.succeeded).toBe(1);
      expect(job.status?.failed ?? 0).toBe(0);
      const pods = await cluster.core.listNamespacedPod({ namespace: cluster.namespace, labelSelector: `codeplane.dev/pool-pod=${c.id}` });
      expect(pods.items).toHaveLength(1);
      expect(pods.items[0]!.metadata!.labels!["codeplane.dev/run"]).toBe(c.run_id);
    }
    // A run without a pod started the ordinary way, with no error.
    for (const r of done.filter((d) => !claims.some((c) => c.run_id === d.run_id))) {
      expect(r.timeline.find((e: { event: string }) => e.event === "admitted")?.warm).toBeUndefined();
    }
    await waitingPods(2);
  }, 900_000);

  it("answer a pod's own credential with its own assignment only: nothing while waiting, nothing after its run", async () => {
    const waiting = await waitingPods(2);
    const credentialOf = async (jobName: string) => {
      const secret = await cluster.core.readNamespacedSecret({ namespace: cluster.namespace, name: jobName });
      return Buffer.from(secret.data!["codeplane-pool-credential"]!, "base64").toString("utf8");
    };
    const internal = `http://${NODE_ADDRESS}:${svc.service.gitPort}`;
    const ask = async (credential: string) =>
      (await fetch(`${internal}/internal/pool/assignment?wait=0`, { headers: { authorization: `Bearer ${credential}` } })).status;
    // A used pod's credential: its run is over, nothing more (not another run's).
    const used = await db()
      .selectFrom("pool_pods")
      .select("job_name")
      .where("namespace", "=", cluster.namespace)
      .where("state", "=", "assigned")
      .executeTakeFirstOrThrow();
    expect(await ask(await credentialOf(used.job_name))).toBe(410);
    // A waiting pod's credential while another pod is claimed: still nothing for it.
    const runId = await startRun("print('claimed by someone else')");
    const claim = await until("the claim", 60_000, async () => db().selectFrom("pool_pods").selectAll().where("run_id", "=", runId).executeTakeFirst());
    const other = waiting.find((w) => w.row.id !== claim.id)!;
    expect(await ask(await credentialOf(other.row.job_name))).toBe(204);
    expect((await finished(runId)).status).toBe("completed");
  }, 600_000);

  it("run a run once, or fail it saying why, when its pod is deleted just after the claim", async () => {
    await waitingPods(2);
    const runId = await startRun("print('chaos marker')");
    const claim = await until("the claim", 60_000, async () => db().selectFrom("pool_pods").selectAll().where("run_id", "=", runId).executeTakeFirst());
    await cluster.batch.deleteNamespacedJob({ namespace: cluster.namespace, name: claim.job_name, propagationPolicy: "Background", gracePeriodSeconds: 0 });
    const run = await finished(runId);
    if (run.status === "failed") expect(run.error).toMatch(/warm pod|pod was deleted|lost/i);
    else expect(run.status).toBe("completed");
    const out = await stdoutOf(runId);
    expect(out.split("chaos marker").length - 1).toBeLessThanOrEqual(1);
    if (run.status === "completed") expect(out).toContain("chaos marker");
  }, 600_000);
});
