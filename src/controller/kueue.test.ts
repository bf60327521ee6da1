import type { V1Job } from "@kubernetes/client-node";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { Unreconcilable } from "../domain/workloads/unreconcilable.ts";
import type { WorkloadSpec, WorkloadStatus } from "../resources/common.ts";
import { INSTALLATION_LABEL } from "../resources/labels.ts";
import { KueueAdmission, kueueWaitReason, localQueueName, QUEUE_NAME_LABEL, type KueueApi, type KueueLocalQueue, type KueueWorkload } from "./kueue.ts";
import type { WorkloadResource } from "./workload.ts";

// Kueue as the admission engine, against a fake of the four Kueue calls: the
// account's LocalQueue made once and pointed at the configured ClusterQueue,
// the Job made suspended in it, and Kueue's answer read back from the Job and
// its Workload. The real thing is test/e2e/kueue.test.ts.

const INSTALLATION = "0190aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee";
const NOW = Date.parse("2026-11-26T12:00:00Z");

function fakeApi(queues = new Map<string, KueueLocalQueue>(), workloads: KueueWorkload[] = []) {
  const calls: string[] = [];
  const api: KueueApi = {
    async getLocalQueue(ns, name) {
      calls.push(`get ${name}`);
      return queues.get(`${ns}/${name}`) ?? null;
    },
    async createLocalQueue(ns, q) {
      calls.push(`create ${q.metadata.name} -> ${q.spec.clusterQueue}`);
      queues.set(`${ns}/${q.metadata.name}`, q);
    },
    async deleteLocalQueue(ns, name) {
      calls.push(`delete ${name}`);
      queues.delete(`${ns}/${name}`);
    },
    async workloadsOfJob(_ns, uid) {
      calls.push(`workloads ${uid}`);
      return workloads;
    },
  };
  return { api, calls, queues };
}

type Resource = WorkloadResource<WorkloadSpec, WorkloadStatus>;

/** The informer caches the admission reads whose turn it is: runs and Jobs, changed by the tests as the cluster would. */
function admission(api: KueueApi, maxWaitSeconds = 3600, caches: { runs: Resource[]; jobs: V1Job[] } = { runs: [], jobs: [] }) {
  return new KueueAdmission({
    api,
    clusterQueue: "team",
    maxWaitSeconds,
    installation: INSTALLATION,
    runs: () => caches.runs,
    jobs: () => caches.jobs,
    jobName: (r) => r.metadata.name,
    logger: pino({ level: "silent" }),
    now: () => NOW,
  });
}

let seq = 0;
function run(account: string, createdAgoSeconds = 5): WorkloadResource<WorkloadSpec, WorkloadStatus> {
  const id = `0190b1c2-3d4e-7f00-8a1b-${String(++seq).padStart(12, "0")}`;
  return {
    apiVersion: "codeplane.dev/v1alpha1",
    kind: "Run",
    metadata: { name: `run-${id}`, namespace: "ns", uid: `uid-${id}`, creationTimestamp: new Date(NOW - createdAgoSeconds * 1000) },
    spec: { accountId: account, repositoryId: "r", repositoryUrl: "u", commitHash: "c", timeoutSeconds: 60 },
  };
}
const job = (suspend: boolean): V1Job => ({ metadata: { name: "run-x", uid: "job-uid", labels: { a: "b" } }, spec: { suspend, template: {} } });
const workload = (...conditions: { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }[]): KueueWorkload => ({
  metadata: { name: "job-run-x-1" },
  status: { conditions },
});

describe("KueueAdmission", () => {
  it("makes the Job suspended in the account's LocalQueue, creating the queue once, labelled as codeplane's", async () => {
    const { api, calls, queues } = fakeApi();
    const k = admission(api);
    const r = run("acct-1");
    const made = await k.prepare(r, job(false));
    const queue = localQueueName(INSTALLATION, "acct-1");
    expect(made.spec?.suspend).toBe(true);
    expect(made.metadata?.labels).toEqual({ a: "b", [QUEUE_NAME_LABEL]: queue });
    expect(queues.get(`ns/${queue}`)?.metadata.labels).toMatchObject({
      "app.kubernetes.io/managed-by": "codeplane",
      [INSTALLATION_LABEL]: INSTALLATION,
      "codeplane.dev/account": "acct-1",
    });
    await k.prepare(run("acct-1"), job(false));
    await k.prepare(run("acct-2"), job(false));
    expect(calls).toEqual([
      `get ${queue}`,
      `create ${queue} -> team`,
      `get ${localQueueName(INSTALLATION, "acct-2")}`,
      `create ${localQueueName(INSTALLATION, "acct-2")} -> team`,
    ]);
  });

  it("makes a LocalQueue that points at another ClusterQueue again (its ClusterQueue cannot change in place)", async () => {
    const queue = localQueueName(INSTALLATION, "acct-1");
    const { api, calls } = fakeApi(new Map([[`ns/${queue}`, { metadata: { name: queue }, spec: { clusterQueue: "old" } }]]));
    await admission(api).prepare(run("acct-1"), job(false));
    expect(calls).toEqual([`get ${queue}`, `delete ${queue}`, `create ${queue} -> team`]);
  });

  it("a Job Kueue unsuspended is admitted, at its Workload's Admitted time", async () => {
    const { api } = fakeApi(undefined, [
      workload({ type: "QuotaReserved", status: "True" }, { type: "Admitted", status: "True", lastTransitionTime: "2026-11-26T11:59:58Z" }),
    ]);
    expect(await admission(api).observe(run("a"), job(false))).toEqual({ admitted: true, at: new Date("2026-11-26T11:59:58Z") });
  });

  it("a suspended Job waits with Kueue's reason, looked at again soon", async () => {
    const held = workload({
      type: "QuotaReserved",
      status: "False",
      reason: "Pending",
      message: "couldn't assign flavors to pod set main: insufficient unused quota for cpu",
    });
    const { api } = fakeApi(undefined, [held]);
    const d = await admission(api).observe(run("a"), job(true));
    expect(d).toMatchObject({ admitted: false, reason: "ClusterQuota", recheckMs: 10_000 });
    expect(d.admitted === false && d.message).toMatch(/Kueue: couldn't assign flavors .* insufficient unused quota for cpu/);
    // No Workload yet: Kueue has not seen the Job.
    expect(await admission(fakeApi().api).observe(run("a"), job(true))).toMatchObject({ admitted: false, reason: "KueuePending", recheckMs: 3000 });
  });

  it("fails a run that waited longer than its tokens were made for", async () => {
    const { api } = fakeApi(undefined, [workload({ type: "QuotaReserved", status: "False", reason: "Pending", message: "insufficient quota" })]);
    const err = await admission(api, 600)
      .observe(run("a", 601), job(true))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Unreconcilable);
    expect(err).toMatchObject({ reason: "QueueTimeout", expected: true });
  });

  it("counts the wait from its Job's creation: a run may wait for its turn before its Job (and tokens) are made", async () => {
    const { api } = fakeApi(undefined, [workload({ type: "QuotaReserved", status: "False", reason: "Pending", message: "insufficient quota" })]);
    const recent: V1Job = { ...job(true), metadata: { ...job(true).metadata, creationTimestamp: new Date(NOW - 30_000) } };
    expect(await admission(api, 600).observe(run("a", 3600), recent)).toMatchObject({ admitted: false, reason: "ClusterQuota" });
  });
});

describe("KueueAdmission: one run per account in Kueue's hands, in submission order", () => {
  const held = (r: Resource): V1Job => ({ metadata: { name: r.metadata.name }, spec: { suspend: true, template: {} } });
  const running = (r: Resource): V1Job => ({ metadata: { name: r.metadata.name }, spec: { suspend: false, template: {} } });

  it("hands over the account's oldest waiting run only, and the next once Kueue let the first run", () => {
    const [a1, a2, a3] = [run("A"), run("A"), run("A")];
    const caches = { runs: [a1, a2, a3], jobs: [] as V1Job[] };
    const k = admission(fakeApi().api, 3600, caches);
    expect(k.admissible()).toEqual([a1.metadata.name]);
    // Asked out of order (reconciles run at once): the later runs wait, the oldest goes.
    expect(k.handOver(a3)).toMatchObject({ admitted: false, reason: "ClusterQuota", position: 3 });
    expect(k.handOver(a1)).toBeNull();
    // Handed over, its Job not in the cache yet: nobody else goes, and it may ask again (its Job's creation failed).
    expect(k.handOver(a2)).toMatchObject({ admitted: false, reason: "ClusterQuota", position: 2 });
    expect(k.admissible()).toEqual([]);
    expect(k.handOver(a1)).toBeNull();
    // Its Job in the cache, suspended: Kueue holds it; the others wait behind it.
    caches.jobs = [held(a1)];
    const behind = k.handOver(a3);
    expect(behind).toMatchObject({ admitted: false, position: 3 });
    expect(behind?.message).toMatch(new RegExp(`behind the account's run ${a1.metadata.name.slice(4)}, which Kueue holds`));
    // Kueue unsuspended it: the next in order goes.
    caches.jobs = [running(a1)];
    expect(k.admissible()).toEqual([a2.metadata.name]);
    expect(k.handOver(a3)).not.toBeNull();
    expect(k.handOver(a2)).toBeNull();
  });

  it("accounts are handed over independently: Kueue decides between their heads", () => {
    const [a1, a2, b1] = [run("A"), run("A"), run("B")];
    const caches = { runs: [a1, a2, b1], jobs: [held(a1)] };
    const k = admission(fakeApi().api, 3600, caches);
    expect(k.admissible()).toEqual([b1.metadata.name]);
    expect(k.handOver(b1)).toBeNull();
    expect(k.handOver(a2)).not.toBeNull();
  });

  it("a cancelled, finished or deleted head frees its account's turn; a run handed over and then cancelled too", () => {
    const [a1, a2] = [run("A"), run("A")];
    const caches = { runs: [a1, a2], jobs: [held(a1)] };
    const k = admission(fakeApi().api, 3600, caches);
    expect(k.admissible()).toEqual([]);
    caches.runs = [{ ...a1, spec: { ...a1.spec, cancelRequested: true } }, a2];
    expect(k.admissible()).toEqual([a2.metadata.name]);
    expect(k.handOver(a2)).toBeNull();
    // a2 handed over, then gone before its Job was seen: a3 goes.
    const a3 = run("A");
    caches.runs = [a3];
    expect(k.handOver(a3)).toBeNull();
  });

  it("judges the reconciled run as its reconcile read it, not as the cache still shows it", () => {
    const a1 = run("A");
    const stale = { ...a1, status: { phase: "running", conditions: [] } as unknown as WorkloadStatus };
    const requeued = {
      ...a1,
      status: {
        phase: "running",
        conditions: [{ type: "Admitted", status: "False", reason: "KueuePending", message: "x", lastTransitionTime: new Date(NOW).toISOString() }],
      } as unknown as WorkloadStatus,
    };
    const k = admission(fakeApi().api, 3600, { runs: [stale], jobs: [] });
    expect(k.handOver(requeued)).toBeNull();
  });

  it("the runs behind a head Kueue cannot admit say so", () => {
    const [a1, a2] = [run("A"), run("A")];
    a1.status = { phase: "pending", queue: { reason: "KueueInadmissible" } } as WorkloadStatus;
    const k = admission(fakeApi().api, 3600, { runs: [a1, a2], jobs: [held(a1)] });
    expect(k.handOver(a2)).toMatchObject({ admitted: false, reason: "KueueInadmissible", position: 2 });
  });

  it("a retried run whose next attempt waits goes before the account's later runs (it was submitted first)", () => {
    const [a1, a2] = [run("A"), run("A")];
    // a1's first attempt ran; its second waits for its Job (not admitted again yet); a2 is new.
    a1.status = {
      phase: "running",
      startTime: new Date(NOW).toISOString(),
      conditions: [{ type: "Admitted", status: "False", reason: "KueuePending", message: "attempt 2 queued", lastTransitionTime: new Date(NOW).toISOString() }],
    } as unknown as WorkloadStatus;
    const k = admission(fakeApi().api, 3600, { runs: [a1, a2], jobs: [] });
    expect(k.admissible()).toEqual([a1.metadata.name]);
  });
});

describe("kueueWaitReason", () => {
  it.each([
    ["no Workload yet", undefined, "KueuePending"],
    ["queued behind the head, no verdict (StrictFIFO)", workload(), "ClusterQuota"],
    ["quota in use", workload({ type: "QuotaReserved", status: "False", reason: "Pending", message: "insufficient unused quota" }), "ClusterQuota"],
    ["inadmissible", workload({ type: "QuotaReserved", status: "False", reason: "Inadmissible", message: "LocalQueue x doesn't exist" }), "KueueInadmissible"],
    [
      "quota reserved, checks left",
      workload({ type: "QuotaReserved", status: "True" }, { type: "Admitted", status: "False", message: "waiting for checks" }),
      "KueueAdmitting",
    ],
  ])("%s: %s", (_what, w, reason) => {
    expect(kueueWaitReason(w, "q").reason).toBe(reason);
  });
});
