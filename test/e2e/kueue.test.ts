import { execFileSync } from "node:child_process";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until, type TestCluster } from "../helpers/cluster.ts";
import { startE2E, type E2E } from "../helpers/e2e.ts";
import type { Tenant } from "../helpers/service.ts";
import { applyCrds } from "../../src/k8s/install.ts";
import { KUEUE_API_VERSION, KUEUE_GROUP, kueueInstalled, QUEUE_NAME_LABEL } from "../../src/controller/kueue.ts";

// Fair queueing with Kueue as the admission engine (issue 32), on the local
// cluster with Kueue installed (make kueue). A ClusterQueue of this test's own
// with room for two runs at a time (600m CPU; a run's pod asks for 260m) and
// admission fair sharing between LocalQueues; codeplane points each account's
// LocalQueue at it. Account A submits 12 short runs, then B submits 3: B's
// first run is admitted within one turnover of A's, every run finishes, none
// is lost or stuck, A's are admitted in submission order (codeplane hands
// Kueue one run per account at a time: src/controller/kueue-order.ts). A
// queued run shows Kueue's reason in the API and `kubectl get runs`; a queued
// run cancelled or deleted never has its (suspended) Job started.
//
// Without Kueue on the cluster the tests are skipped, unless CODEPLANE_E2E_KUEUE=1
// (CI sets it after `make kueue`), which makes a missing Kueue a failure.

const REQUIRED = process.env.CODEPLANE_E2E_KUEUE === "1";
let installed = false;
let cluster: TestCluster;
let alice: Tenant;
let bob: Tenant;
let repoId: string;
let bobRepo: string;
let e: E2E | undefined;
let cq = "";
/** Every Job the namespace had: when it was made, whether it was made suspended in a queue, and whether it was ever let run. */
const jobs = new Map<string, { created: number; suspended: boolean; queue: string | undefined; started: boolean }>();
/** When the watch first saw each Job unsuspended (Kueue admitted it), in this process's milliseconds. */
const jobStarted = new Map<string, number>();
/** Every Workload Kueue made in the namespace: its Job's name and when it was made (Kueue orders a LocalQueue by it). */
const workloads = new Map<string, number>();
let stopWatch: (() => void) | undefined;

const SHORT = ["sh", "-c", "sleep 2; echo done"];
const TERMINAL = ["completed", "failed", "cancelled"];

function clusterScoped(kc: k8s.KubeConfig) {
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const base = { group: KUEUE_GROUP, version: KUEUE_API_VERSION };
  return {
    create: (plural: string, body: object) => custom.createClusterCustomObject({ ...base, plural, body }),
    remove: (plural: string, name: string) => custom.deleteClusterCustomObject({ ...base, plural, name }).catch(() => undefined),
  };
}

beforeAll(async () => {
  const kc = new k8s.KubeConfig();
  kc.loadFromDefault();
  installed = await kueueInstalled({ custom: kc.makeApiClient(k8s.CustomObjectsApi) });
  if (!installed) {
    if (REQUIRED) throw new Error("CODEPLANE_E2E_KUEUE=1 but the cluster serves no Kueue: run make kueue");
    console.info("Kueue is not installed on this cluster (make kueue): skipping the Kueue tests");
    return;
  }
  const suffix = Math.random().toString(36).slice(2, 8);
  cq = `cp-e2e-${suffix}`;
  const api = clusterScoped(kc);
  await api.create("resourceflavors", { apiVersion: `${KUEUE_GROUP}/${KUEUE_API_VERSION}`, kind: "ResourceFlavor", metadata: { name: cq } });
  e = await startE2E("cp-e2e-kueue", {
    env: { CODEPLANE_KUEUE_CLUSTER_QUEUE: cq, CODEPLANE_LIMIT_WAITING_PER_ACCOUNT: "20" },
  });
  ({ cluster, alice, repoId } = e);
  await api.create("clusterqueues", {
    apiVersion: `${KUEUE_GROUP}/${KUEUE_API_VERSION}`,
    kind: "ClusterQueue",
    metadata: { name: cq },
    spec: {
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": cluster.namespace } },
      // Strict: a LocalQueue's head is admitted before anything behind it (runs are alike in size).
      queueingStrategy: "StrictFIFO",
      admissionScope: { admissionMode: "UsageBasedAdmissionFairSharing" },
      resourceGroups: [
        {
          coveredResources: ["cpu", "memory"],
          flavors: [
            {
              name: cq,
              resources: [
                { name: "cpu", nominalQuota: "600m" },
                { name: "memory", nominalQuota: "4Gi" },
              ],
            },
          ],
        },
      ],
    },
  });
  bob = await e.svc.tenant();
  const fixtureUrl = (await (await alice.api(`/v1/repositories/${repoId}`)).json()).url as string;
  const res = await bob.api("/v1/repositories", { method: "POST", json: { url: fixtureUrl, name: "fixture" } });
  expect(res.status, await res.clone().text()).toBe(201);
  bobRepo = (await res.json()).id;
  const req = await new k8s.Watch(cluster.kc).watch(
    `/apis/batch/v1/namespaces/${cluster.namespace}/jobs`,
    {},
    (type, job: k8s.V1Job) => {
      const name = job.metadata?.name;
      if (!name) return;
      if (type === "ADDED" && !jobs.has(name)) {
        jobs.set(name, {
          created: Date.parse(String(job.metadata?.creationTimestamp ?? "")),
          suspended: job.spec?.suspend === true,
          queue: job.metadata?.labels?.[QUEUE_NAME_LABEL],
          started: false,
        });
      }
      const seen = jobs.get(name);
      if (seen && (type === "ADDED" || type === "MODIFIED") && job.spec?.suspend === false) {
        seen.started = true;
        if (!jobStarted.has(name)) jobStarted.set(name, Date.now());
      }
    },
    () => undefined,
  );
  const wreq = await new k8s.Watch(cluster.kc).watch(
    `/apis/${KUEUE_GROUP}/${KUEUE_API_VERSION}/namespaces/${cluster.namespace}/workloads`,
    {},
    (type, wl: { metadata?: { creationTimestamp?: string; ownerReferences?: { kind: string; name: string }[] } }) => {
      const job = wl.metadata?.ownerReferences?.find((o) => o.kind === "Job")?.name;
      if (type === "ADDED" && job && !workloads.has(job)) workloads.set(job, Date.parse(wl.metadata!.creationTimestamp!));
    },
    () => undefined,
  );
  stopWatch = () => {
    req.abort();
    wreq.abort();
  };
});
afterAll(async () => {
  stopWatch?.();
  await e?.close();
  if (cq) {
    const kc = new k8s.KubeConfig();
    kc.loadFromDefault();
    const api = clusterScoped(kc);
    await api.remove("clusterqueues", cq);
    await api.remove("resourceflavors", cq);
  }
});

async function submit(t: Tenant, repo: string, command = SHORT, retries = 0): Promise<string> {
  const res = await t.api(`/v1/repositories/${repo}/main/runs`, { method: "POST", json: { command, environment: "none", retries } });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()).run_id as string;
}

interface RunCr {
  status?: {
    phase?: string;
    queue?: { reason: string };
    conditions?: { type: string; status: string; reason: string; message: string; lastTransitionTime: string }[];
  };
}
async function runResource(id: string): Promise<RunCr> {
  return (await cluster.custom.getNamespacedCustomObject({
    group: "codeplane.dev",
    version: "v1alpha1",
    namespace: cluster.namespace,
    plural: "runs",
    name: `run-${id}`,
  })) as RunCr;
}
const admittedAt = (cr: RunCr) => {
  const c = cr.status?.conditions?.find((x) => x.type === "Admitted" && x.status === "True");
  return c ? Date.parse(c.lastTransitionTime) : null;
};

describe("fair queueing with Kueue on a real cluster", () => {
  it("admits accounts in turn through their LocalQueues, A's runs in order, and finishes every run", async (ctx) => {
    if (!installed) return ctx.skip();
    await applyCrds(cluster.kc);
    const aRuns: string[] = [];
    for (let i = 0; i < 12; i++) aRuns.push(await submit(alice, repoId));
    // The ClusterQueue has room for two: the rest of A's wait, with Kueue's reason.
    // The last run says ClusterQuota from the start (it waits behind A's
    // earlier runs), so wait until two of A's are admitted before reading its
    // position: 12 of 12 until then, at most 10 after.
    const queued = await until("A's later runs to be held back by Kueue, two of A's admitted", 180_000, async () => {
      const run = await (await alice.api(`/v1/runs/${aRuns[11]}`)).json();
      return run.queue?.reason === "ClusterQuota" && run.queue.position <= 10 ? run : undefined;
    });
    expect(queued).toMatchObject({ status: "pending", queue: { reason: "ClusterQuota" } });
    expect(queued.queue.position).toBeGreaterThanOrEqual(1);
    expect(queued.queue.position).toBeLessThanOrEqual(10);
    const cr = await runResource(aRuns[11]!);
    expect(cr.status?.conditions?.find((c) => c.type === "Admitted")).toMatchObject({ status: "False", reason: "ClusterQuota" });
    expect(cr.status?.conditions?.find((c) => c.type === "Admitted")?.message).toMatch(/Kueue/);
    const table = execFileSync("kubectl", ["--kubeconfig", cluster.kubeconfig, "-n", cluster.namespace, "get", "runs", `run-${aRuns[11]}`], {
      encoding: "utf8",
    });
    expect(table).toMatch(/QUEUED/);
    expect(table).toMatch(/ClusterQuota/);

    // With Kueue the queue gauges come from the controller's caches too (queue-snapshot.ts).
    const metrics = await (await fetch(`${e!.svc.url}/metrics`)).text();
    const sample = (series: string) =>
      Number(
        metrics
          .split("\n")
          .find((l) => l.startsWith(`${series} `))
          ?.slice(series.length + 1) ?? NaN,
      );
    expect(sample(`codeplane_run_queue_length{account="${alice.accountId}"}`)).toBeGreaterThanOrEqual(1);
    expect(sample('codeplane_runs{status="pending"}')).toBeGreaterThanOrEqual(1);

    const bSubmitted = Date.now();
    const bRuns: string[] = [];
    for (let i = 0; i < 3; i++) bRuns.push(await submit(bob, bobRepo));

    const all = [...aRuns, ...bRuns];
    const owner = (id: string) => (aRuns.includes(id) ? alice : bob);
    const final = new Map<string, { status: string; error: string | null }>();
    await until(
      "every run to finish",
      900_000,
      async () => {
        for (const id of all) {
          if (final.has(id)) continue;
          const run = await (await owner(id).api(`/v1/runs/${id}`)).json();
          if (TERMINAL.includes(run.status)) final.set(id, run);
        }
        return final.size === all.length;
      },
      { intervalMs: 2000 },
    );
    for (const [id, run] of final) {
      if (run.status !== "completed") expect(run.error, `run ${id}: ${run.status}`).toMatch(/10\.244\.0\.1/);
    }
    // Every run's timeline in the histograms, on the Kueue path as on the built-in one.
    const after = await (await fetch(`${e!.svc.url}/metrics`)).text();
    const count = (series: string) =>
      Number(
        after
          .split("\n")
          .find((l) => l.startsWith(`${series} `))
          ?.slice(series.length + 1) ?? NaN,
      );
    expect(count('codeplane_run_queue_wait_seconds_count{compute_type="cpu-general"}')).toBeGreaterThanOrEqual(all.length);
    expect(count('codeplane_run_pod_start_seconds_count{compute_type="cpu-general"}')).toBeGreaterThanOrEqual(all.length - 2);
    expect([...final.values()].filter((r) => r.status === "completed").length).toBeGreaterThanOrEqual(all.length - 2);

    // Every run's Job was made suspended in its account's LocalQueue, and Kueue let each run.
    const queues = new Set<string>();
    for (const id of all) {
      const job = jobs.get(`run-${id}`);
      expect(job, `run ${id} had a Job`).toBeDefined();
      expect(job!.suspended).toBe(true);
      expect(job!.started).toBe(true);
      queues.add(job!.queue!);
    }
    expect(queues.size).toBe(2);

    const crs = new Map<string, RunCr>();
    for (const id of all) crs.set(id, await runResource(id));
    const at = (id: string) => admittedAt(crs.get(id)!);
    for (const id of all) expect(at(id), `run ${id} has an Admitted=True condition`).not.toBeNull();

    // B's first run waited at most one turnover: at most two of A's (the queue's two
    // slots; the clock has whole seconds) were admitted after B submitted and before it.
    const second = (ms: number) => Math.floor(ms / 1000);
    const b1 = at(bRuns[0]!)!;
    const aBetween = aRuns.filter((id) => at(id)! > second(bSubmitted) * 1000 && at(id)! < b1);
    const aTimes = aRuns.map((id) => at(id)!);
    // A's runs in submission order. Kueue orders a LocalQueue by its Workloads' creation in whole
    // seconds, ties broken by uid; codeplane hands it one of an account's runs at a time, so each
    // of A's Workloads is made after the one before was admitted. The Admitted conditions have
    // whole seconds too, so the order is read from the Workloads' creation and the Jobs' start.
    const made = (id: string) => workloads.get(`run-${id}`)!;
    for (const id of all) expect(workloads.get(`run-${id}`), `run ${id} had a Workload`).toBeDefined();
    let againstSubmission = 0;
    for (const [i, x] of aRuns.entries()) {
      for (const y of aRuns.slice(i + 1)) {
        if (at(x)! > at(y)! || made(x) > made(y) || (jobStarted.get(`run-${x}`) ?? 0) > (jobStarted.get(`run-${y}`) ?? Infinity)) againstSubmission++;
      }
    }
    // One in Kueue's hands at a time: each Workload of A's after the first was made once the one before was admitted
    // (its Job seen unsuspended; the Workload's time has whole seconds, and this watch may see events a little late).
    const overlapping = aRuns.slice(1).filter((id, i) => made(id) < (jobStarted.get(`run-${aRuns[i]}`) ?? Infinity) - 3000).length;
    console.info(
      `Kueue fair share: B's first run admitted ${((b1 - bSubmitted) / 1000).toFixed(1)} s after B submitted, after ${aBetween.length} more of A's; ` +
        `all ${all.length} runs finished; pairs of A's runs admitted against submission order: ${againstSubmission} of ${(aRuns.length * (aRuns.length - 1)) / 2}`,
    );
    expect(againstSubmission, "pairs of A's runs admitted against their submission order").toBe(0);
    expect(overlapping, "A's Workloads made before the previous one was admitted").toBe(0);
    expect(aBetween.length, `A's runs admitted after B submitted and before B's first: ${aBetween.length}`).toBeLessThanOrEqual(2);
    // And B's runs were not left until A's backlog was done (where A still had one when B submitted).
    if (aRuns.filter((id) => at(id)! > second(bSubmitted) * 1000).length > 2) expect(b1).toBeLessThan(Math.max(...aTimes));
  }, 900_000);

  it("a queued run can be cancelled and deleted, and its suspended Job never starts", async (ctx) => {
    if (!installed) return ctx.skip();
    await applyCrds(cluster.kc);
    const busy = [await submit(alice, repoId, ["sh", "-c", "sleep 60"]), await submit(alice, repoId, ["sh", "-c", "sleep 60"])];
    const toCancel = await submit(alice, repoId, ["sh", "-c", "sleep 60"]);
    const toDelete = await submit(alice, repoId, ["sh", "-c", "sleep 60"]);
    // Once the two busy runs were admitted (the queue's room), the next waits in Kueue and the last behind it.
    const queued = await until("the extra runs to be held back by Kueue", 180_000, async () => {
      for (const id of busy) if ((await (await alice.api(`/v1/runs/${id}`)).json()).queue !== null) return undefined;
      const a = await (await alice.api(`/v1/runs/${toCancel}`)).json();
      const b = await (await alice.api(`/v1/runs/${toDelete}`)).json();
      if (!jobs.has(`run-${toCancel}`)) return undefined;
      return a.queue?.reason === "ClusterQuota" && b.queue?.reason === "ClusterQuota" ? [a, b] : undefined;
    });
    expect(queued[0].queue).toEqual({ position: 1, reason: "ClusterQuota" });
    expect(queued[1].queue).toEqual({ position: 2, reason: "ClusterQuota" });
    expect(jobs.get(`run-${toCancel}`)).toMatchObject({ suspended: true, started: false });

    expect((await alice.api(`/v1/runs/${toCancel}/cancel`, { method: "POST" })).status).toBe(202);
    const cancelled = await until("the queued run to be cancelled", 120_000, async () => {
      const run = await (await alice.api(`/v1/runs/${toCancel}`)).json();
      return run.status === "cancelled" ? run : undefined;
    });
    expect(cancelled.queue).toBeNull();
    expect(cancelled.started_at ?? null).toBeNull();
    expect((await alice.api(`/v1/runs/${toDelete}`, { method: "DELETE" })).status).toBe(204);
    await until("the deleted run to be gone", 120_000, async () => (await alice.api(`/v1/runs/${toDelete}`)).status === 404);

    // Free the quota: the cancelled and deleted runs' Jobs must still never start.
    for (const id of busy) await alice.api(`/v1/runs/${id}/cancel`, { method: "POST" });
    await until("the busy runs to end", 180_000, async () => {
      for (const id of busy) if (!TERMINAL.includes((await (await alice.api(`/v1/runs/${id}`)).json()).status)) return false;
      return true;
    });
    await new Promise((r) => setTimeout(r, 5000));
    expect(jobs.get(`run-${toCancel}`)?.started).toBe(false);
    expect(jobs.get(`run-${toDelete}`)?.started ?? false).toBe(false);
    for (const id of busy) expect(jobs.get(`run-${id}`)?.started).toBe(true);
  }, 600_000);

  it("a retried run's next attempt goes through Kueue again: queued while running, its Job suspended in the account's queue", async (ctx) => {
    if (!installed) return ctx.skip();
    await applyCrds(cluster.kc);
    const retried = await submit(alice, repoId, ["sh", "-c", 'echo "begin"; sleep 25; echo "end"'], 1);
    await until("the run to print its first line", 180_000, async () => {
      const page = await (await alice.api(`/v1/runs/${retried}/logs?after=0&limit=100`)).json();
      return (page.lines as { line: string }[]).some((l) => l.line === "begin") || undefined;
    });
    // The queue's room taken: one busy run beside the retried one, the next in Kueue's hands.
    const busy = [await submit(alice, repoId, ["sh", "-c", "sleep 90"]), await submit(alice, repoId, ["sh", "-c", "sleep 90"])];
    await until("one busy run admitted and the other held by Kueue", 180_000, async () => {
      const [a, b] = await Promise.all(busy.map(async (id) => (await alice.api(`/v1/runs/${id}`)).json()));
      return a.queue === null && a.status !== "pending" && b.queue?.reason === "ClusterQuota" && jobs.has(`run-${busy[1]}`) ? true : undefined;
    });
    const pods = await cluster.core.listNamespacedPod({ namespace: cluster.namespace, labelSelector: `codeplane.dev/run=${retried}` });
    const pod = pods.items.find((p) => p.status?.phase === "Running");
    expect(pod, "the retried run's running pod").toBeDefined();
    await cluster.core.deleteNamespacedPod({ name: pod!.metadata!.name!, namespace: cluster.namespace, gracePeriodSeconds: 0 });

    // Its next attempt waits in the queue: the run stays running (its status never goes back) and says why.
    const waiting = await until("the next attempt to wait for Kueue", 180_000, async () => {
      const run = await (await alice.api(`/v1/runs/${retried}`)).json();
      return run.attempts?.length === 2 && run.queue ? run : undefined;
    });
    expect(waiting.status).toBe("running");
    expect(["ClusterQuota", "KueuePending"]).toContain(waiting.queue.reason);
    const cr = await runResource(retried);
    expect(cr.status?.conditions?.find((c) => c.type === "Admitted")).toMatchObject({ status: "False" });

    for (const id of busy) await alice.api(`/v1/runs/${id}/cancel`, { method: "POST" });
    const done = await until("the retried run to finish", 300_000, async () => {
      const run = await (await alice.api(`/v1/runs/${retried}`)).json();
      return TERMINAL.includes(run.status) ? run : undefined;
    });
    expect(done.status, done.error).toBe("completed");
    expect(done.queue).toBeNull();
    expect(done.attempts.map((a: { reason: string }) => a.reason)).toEqual(["PodLost", "Completed"]);
    // The second attempt's Job was made suspended in the account's LocalQueue and Kueue let it run.
    const second = jobs.get(`run-${retried}-attempt-2`);
    expect(second).toMatchObject({ suspended: true, started: true, queue: jobs.get(`run-${retried}`)?.queue });
    expect(second?.queue).toBeDefined();
  }, 900_000);
});
