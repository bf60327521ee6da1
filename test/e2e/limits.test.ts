import { execFileSync } from "node:child_process";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until, type TestCluster } from "../helpers/cluster.ts";
import { startE2E, type E2E } from "../helpers/e2e.ts";
import type { Tenant, TestService } from "../helpers/service.ts";
import { applyCrds } from "../../src/k8s/install.ts";

// Limits and fair queueing on a real cluster (issue 32), with the built-in
// limiter: an executing limit of 2 per account and 2 for the installation
// (the machine has two cores), so accounts must take turns. Account A submits
// 12 short runs, then B submits 3: B's first run is admitted within one
// turnover of A's (at most one more of A's is admitted after B submitted and
// before B's first), every run finishes, none is lost or stuck, and A's are
// admitted in submission order. A queued run shows its queue in the API and
// in `kubectl get runs`; cancelling or deleting one never creates its Job (a
// watch records every Job the namespace ever had).

let cluster: TestCluster;
let svc: TestService;
let alice: Tenant;
let bob: Tenant;
let repoId: string;
let e: E2E;
const jobsEverCreated = new Set<string>();
let stopWatch: (() => void) | undefined;

const SHORT = ["sh", "-c", "sleep 2; echo done"];
const TERMINAL = ["completed", "failed", "cancelled"];

beforeAll(async () => {
  e = await startE2E("cp-e2e-limits", {
    env: { CODEPLANE_LIMIT_EXECUTING_PER_ACCOUNT: "2", CODEPLANE_LIMIT_EXECUTING_TOTAL: "2", CODEPLANE_LIMIT_WAITING_PER_ACCOUNT: "20" },
  });
  ({ cluster, svc, alice, repoId } = e);
  bob = await svc.tenant();
  // Bob runs the same fixture, registered under his account.
  const fixtureUrl = (await (await alice.api(`/v1/repositories/${repoId}`)).json()).url as string;
  const res = await bob.api("/v1/repositories", { method: "POST", json: { url: fixtureUrl, name: "fixture" } });
  expect(res.status, await res.clone().text()).toBe(201);
  bobRepo = (await res.json()).id;
  const req = await new k8s.Watch(cluster.kc).watch(
    `/apis/batch/v1/namespaces/${cluster.namespace}/jobs`,
    {},
    (type, job: k8s.V1Job) => {
      if (type === "ADDED" && job.metadata?.name) jobsEverCreated.add(job.metadata.name);
    },
    () => undefined,
  );
  stopWatch = () => req.abort();
});
afterAll(async () => {
  stopWatch?.();
  await e?.close();
});

let bobRepo: string;

async function submit(t: Tenant, repo: string): Promise<string> {
  const res = await t.api(`/v1/repositories/${repo}/main/runs`, { method: "POST", json: { command: SHORT, environment: "none" } });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()).run_id as string;
}

interface RunCr {
  metadata: { name: string };
  status?: { phase?: string; queue?: { reason: string }; conditions?: { type: string; status: string; reason: string; lastTransitionTime: string }[] };
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

describe("limits and fair queueing on a real cluster", () => {
  it("admits accounts in turn, A's runs in order, and finishes every run", async () => {
    // The cluster is shared: another checkout's tests may have applied older CRDs meanwhile.
    await applyCrds(cluster.kc);
    const aRuns: string[] = [];
    for (let i = 0; i < 12; i++) aRuns.push(await submit(alice, repoId));
    // A has its two slots; the rest of A's wait, each with its place.
    const queued = await until("A's later runs to be queued", 120_000, async () => {
      const run = await (await alice.api(`/v1/runs/${aRuns[11]}`)).json();
      return run.queue ? run : undefined;
    });
    expect(queued).toMatchObject({ status: "pending", queue: { reason: expect.stringMatching(/Concurrency$/) } });
    expect(queued.queue.position).toBeGreaterThanOrEqual(1);
    expect(queued.queue.position).toBeLessThanOrEqual(10);

    // kubectl shows a queued run as such (the Queued column).
    const table = execFileSync("kubectl", ["--kubeconfig", cluster.kubeconfig, "-n", cluster.namespace, "get", "runs", `run-${aRuns[11]}`], {
      encoding: "utf8",
    });
    expect(table).toMatch(/QUEUED/);
    expect(table).toMatch(/Concurrency/);

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
    // None lost or stuck; each ran its command (the local cluster's known checkout drop aside, which the e2e suite retries elsewhere).
    for (const [id, run] of final) {
      if (run.status !== "completed") expect(run.error, `run ${id}: ${run.status}`).toMatch(/10\.244\.0\.1/);
    }
    expect([...final.values()].filter((r) => r.status === "completed").length).toBeGreaterThanOrEqual(all.length - 2);

    const crs = new Map<string, RunCr>();
    for (const id of all) crs.set(id, await runResource(id));
    const at = (id: string) => admittedAt(crs.get(id)!);
    for (const id of all) expect(at(id), `run ${id} has an Admitted=True condition`).not.toBeNull();

    // A's runs were admitted in submission order: the Admitted condition's time is the
    // admission decision's (runs one decision admits together share it).
    const aTimes = aRuns.map((id) => at(id)!);
    for (let i = 1; i < aTimes.length; i++) expect(aTimes[i]!, `A's run ${i + 1} against its predecessor`).toBeGreaterThanOrEqual(aTimes[i - 1]!);

    // B's first run waited at most one turnover: at most one of A's was admitted after B
    // submitted and before it (a generous bound: two, the clock having whole seconds).
    const b1 = at(bRuns[0]!)!;
    const aBetween = aRuns.filter((id) => at(id)! > Math.floor(bSubmitted / 1000) * 1000 && at(id)! < b1);
    console.info(
      `fair share: B's first run admitted ${((b1 - bSubmitted) / 1000).toFixed(1)} s after B submitted, after ${aBetween.length} more of A's; all ${all.length} runs finished`,
    );
    expect(aBetween.length, `A's runs admitted after B submitted and before B's first: ${aBetween.length}`).toBeLessThanOrEqual(2);
    // And B's runs were not left until A's backlog was done.
    const lastA = Math.max(...aTimes);
    expect(b1).toBeLessThan(lastA);
    // Every admitted run had a Job; none other did.
    for (const id of all) expect(jobsEverCreated.has(`run-${id}`)).toBe(true);
  });

  it("a queued run can be cancelled and deleted, and never gets a Job", async () => {
    await applyCrds(cluster.kc);
    // Fill A's slots with runs that last, then queue two more.
    const long = async () => {
      const res = await alice.api(`/v1/repositories/${repoId}/main/runs`, { method: "POST", json: { command: ["sh", "-c", "sleep 60"], environment: "none" } });
      expect(res.status).toBe(201);
      return (await res.json()).run_id as string;
    };
    const busy = [await long(), await long()];
    const toCancel = await long();
    const toDelete = await long();
    const queued = await until("the extra runs to be queued", 120_000, async () => {
      const a = await (await alice.api(`/v1/runs/${toCancel}`)).json();
      const b = await (await alice.api(`/v1/runs/${toDelete}`)).json();
      return a.queue && b.queue ? [a, b] : undefined;
    });
    expect(queued[0].queue).toEqual({ position: 1, reason: "AccountConcurrency" });
    expect(queued[1].queue).toEqual({ position: 2, reason: "AccountConcurrency" });
    const cr = await runResource(toCancel);
    expect(cr.status?.queue).toEqual({ reason: "AccountConcurrency" });
    expect(cr.status?.conditions?.find((c) => c.type === "Admitted")).toMatchObject({ status: "False", reason: "AccountConcurrency" });

    expect((await alice.api(`/v1/runs/${toCancel}/cancel`, { method: "POST" })).status).toBe(202);
    const cancelled = await until("the queued run to be cancelled", 120_000, async () => {
      const run = await (await alice.api(`/v1/runs/${toCancel}`)).json();
      return run.status === "cancelled" ? run : undefined;
    });
    expect(cancelled.queue).toBeNull();
    expect((await alice.api(`/v1/runs/${toDelete}`, { method: "DELETE" })).status).toBe(204);
    await until("the deleted run to be gone", 120_000, async () => (await alice.api(`/v1/runs/${toDelete}`)).status === 404);

    // Free the slots: the cancelled and deleted runs must still never start.
    for (const id of busy) await alice.api(`/v1/runs/${id}/cancel`, { method: "POST" });
    await until("the busy runs to end", 180_000, async () => {
      for (const id of busy) if (!TERMINAL.includes((await (await alice.api(`/v1/runs/${id}`)).json()).status)) return false;
      return true;
    });
    await new Promise((r) => setTimeout(r, 5000));
    expect(jobsEverCreated.has(`run-${toCancel}`)).toBe(false);
    expect(jobsEverCreated.has(`run-${toDelete}`)).toBe(false);
    for (const id of busy) expect(jobsEverCreated.has(`run-${id}`)).toBe(true);
  });
});
