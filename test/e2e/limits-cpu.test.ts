import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setAccountLimits } from "../../src/domain/limits/limits.ts";
import { NO_LIMITS } from "../../src/domain/limits/limits.ts";
import { until } from "../helpers/cluster.ts";
import { startE2E, type E2E } from "../helpers/e2e.ts";

// The built-in limiter's CPU cap on a real cluster (issue 32): runs of the
// default compute type request 250m; the operator's default cap is 250m per
// account and this account's override (codeplane accounts limits --cpu) is
// 500m, so at most two of its runs may execute at once. Five runs are
// submitted together: the later ones wait as AccountQuota, every one runs,
// and the concurrency the cluster actually saw (run pods whose command has
// not ended, from a watch of every pod in the namespace) reaches two and
// never passes it: one would mean the override was not read, more the cap
// was not applied. A run stops counting when its command ends (its status
// says so), so the next may be admitted while the Job controller is still
// marking the last one's Job complete: Jobs would overlap, commands do not.
//
// And a queued run over a cap by itself (the account's memory cap lowered
// under it) fails at once, without a Job, with an error naming the limit and
// its value, and the account's later run is not held behind it.

let e: E2E;
let stopWatch: (() => void) | undefined;
const active = new Set<string>();
let peak = 0;
/** Every Job the namespace ever had. */
const jobsEverCreated = new Set<string>();
const TERMINAL = ["completed", "failed", "cancelled"];

beforeAll(async () => {
  e = await startE2E("cp-e2e-cpu", { env: { CODEPLANE_LIMIT_CPU_PER_ACCOUNT: "250m" } });
  const req = await new k8s.Watch(e.cluster.kc).watch(
    `/api/v1/namespaces/${e.cluster.namespace}/pods`,
    { labelSelector: "app.kubernetes.io/component=run" },
    (type, pod: k8s.V1Pod) => {
      const name = pod.metadata!.name!;
      const main = pod.status?.containerStatuses?.find((c) => c.name === "main")?.state;
      const over = type === "DELETED" || Boolean(main?.terminated) || pod.status?.phase === "Succeeded" || pod.status?.phase === "Failed";
      if (over) active.delete(name);
      else active.add(name);
      peak = Math.max(peak, active.size);
    },
    () => undefined,
  );
  const jobsReq = await new k8s.Watch(e.cluster.kc).watch(
    `/apis/batch/v1/namespaces/${e.cluster.namespace}/jobs`,
    {},
    (type, job: k8s.V1Job) => {
      if (type === "ADDED" && job.metadata?.name) jobsEverCreated.add(job.metadata.name);
    },
    () => undefined,
  );
  stopWatch = () => {
    req.abort();
    jobsReq.abort();
  };
});
afterAll(async () => {
  stopWatch?.();
  await e?.close();
});

describe("CPU requested at once, per account, on a real cluster", () => {
  it("holds runs over the account's CPU cap as AccountQuota and runs them as CPU frees, never past the cap", async () => {
    const { alice, repoId, svc } = e;
    const { name } = await svc.db.selectFrom("accounts").select("name").where("id", "=", alice.accountId).executeTakeFirstOrThrow();
    const set = await setAccountLimits(svc.db, name, { cpu: 500 }, { ...NO_LIMITS, cpuPerAccount: 250 });
    expect(set).toMatchObject({ cpu: 500, overrides: { cpu: 500 } });
    // The controller reads overrides again within 5 seconds.
    await new Promise((r) => setTimeout(r, 6000));

    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await alice.api(`/v1/repositories/${repoId}/main/runs`, {
        method: "POST",
        json: { command: ["sh", "-c", "sleep 4; echo done"], environment: "none" },
      });
      expect(res.status, await res.clone().text()).toBe(201);
      ids.push((await res.json()).run_id as string);
    }
    const queued = await until("the last run to wait for CPU", 180_000, async () => {
      const run = await (await alice.api(`/v1/runs/${ids[4]}`)).json();
      return run.queue ? run : undefined;
    });
    expect(queued).toMatchObject({ status: "pending", queue: { reason: "AccountQuota" } });

    const final = new Map<string, { status: string; error: string | null }>();
    await until(
      "every run to finish",
      600_000,
      async () => {
        for (const id of ids) {
          if (final.has(id)) continue;
          const run = await (await alice.api(`/v1/runs/${id}`)).json();
          if (TERMINAL.includes(run.status)) final.set(id, run);
        }
        return final.size === ids.length;
      },
      { intervalMs: 2000 },
    );
    for (const [id, run] of final) expect(run.status, `run ${id}: ${run.error}`).toBe("completed");
    console.info(`CPU cap 500m, runs of 250m: at most ${peak} runs executing at once (pods whose command had not ended)`);
    expect(peak).toBe(2);
  });

  it("fails a queued run once it is over the account's memory cap by itself, without a Job, and does not hold the account's later runs", async () => {
    const { alice, repoId, svc } = e;
    const { name } = await svc.db.selectFrom("accounts").select("name").where("id", "=", alice.accountId).executeTakeFirstOrThrow();
    const Mi = 2 ** 20;
    await setAccountLimits(svc.db, name, { cpu: 2000, memory: 1024 * Mi }, { ...NO_LIMITS, cpuPerAccount: 250 });
    await new Promise((r) => setTimeout(r, 6000));
    const submit = async (command: string[], computeType = "cpu-general") => {
      const res = await alice.api(`/v1/repositories/${repoId}/main/runs`, {
        method: "POST",
        json: { command, environment: "none", compute_type: computeType },
      });
      expect(res.status, await res.clone().text()).toBe(201);
      return (await res.json()).run_id as string;
    };
    const get = async (id: string) => (await alice.api(`/v1/runs/${id}`)).json();
    // R1 (256Mi) executes; R2 (cpu-memory, 1Gi: exactly the cap, so the API takes it) waits for memory, R3 (256Mi) behind it.
    const r1 = await submit(["sh", "-c", "sleep 45; echo done"]);
    await until("the first run to be admitted", 180_000, async () => {
      const run = await get(r1);
      return run.timeline.some((x: { event: string }) => x.event === "admitted") ? true : undefined;
    });
    // The gauge of what the account's executing runs request, on /metrics, while R1 executes.
    const metrics = async () => (await fetch(`${svc.url}/metrics`)).text();
    /** A series' value in the exposition text; NaN: no such series. */
    const sample = (text: string, series: string) =>
      Number(
        text
          .split("\n")
          .find((l) => l.startsWith(`${series} `))
          ?.slice(series.length + 1) ?? NaN,
      );
    const memorySeries = `codeplane_account_requested_memory_bytes{account="${alice.accountId}"}`;
    expect(sample(await metrics(), memorySeries)).toBe(256 * Mi);
    expect(sample(await metrics(), `codeplane_account_requested_cpu_cores{account="${alice.accountId}"}`)).toBe(0.25);
    const r2 = await submit(["sh", "-c", "echo never"], "cpu-memory");
    const r3 = await submit(["sh", "-c", "sleep 2; echo done"]);
    const behind = await until("the later runs to wait for memory", 120_000, async () => {
      const [a, b] = [await get(r2), await get(r3)];
      return a.queue?.reason === "AccountQuota" && b.queue?.reason === "AccountQuota" ? b : undefined;
    });
    expect(behind.queue.position).toBe(2);

    // The cap is lowered under R2: 1Gi alone is over 512Mi, so it could never start.
    const lowered = Date.now();
    await setAccountLimits(svc.db, name, { memory: 512 * Mi }, { ...NO_LIMITS, cpuPerAccount: 250 });
    const failed = await until("the over-cap run to fail", 180_000, async () => {
      const run = await get(r2);
      return run.status === "failed" ? run : undefined;
    });
    console.info(`over-cap run failed ${((Date.now() - lowered) / 1000).toFixed(1)} s after the cap was lowered`);
    expect(failed.error).toBe(
      "compute type 'cpu-memory' requests 1Gi memory, more than this account's cap of 512Mi (limit 'memory' per account): a run of it could never start, so it failed without starting; raise the account's cap (codeplane accounts limits) or use a smaller compute type",
    );
    expect(failed.queue).toBeNull();
    expect(failed.started_at ?? null).toBeNull();

    // R3 fits beside R1 (256Mi + 256Mi = 512Mi) and starts while R1 still runs: not held behind R2.
    const done = await until("the later run to complete", 300_000, async () => {
      const run = await get(r3);
      return TERMINAL.includes(run.status) ? run : undefined;
    });
    expect(done.status, done.error).toBe("completed");
    const first = await get(r1);
    const started = (run: { timeline: { event: string; at: string }[] }) => Date.parse(run.timeline.find((x) => x.event === "started")?.at ?? "");
    if (TERMINAL.includes(first.status)) expect(started(done)).toBeLessThan(Date.parse(first.timeline.find((x: { event: string }) => x.event === "ended").at));
    expect(jobsEverCreated.has(`run-${r2}`), "the over-cap run never had a Job").toBe(false);
    expect(jobsEverCreated.has(`run-${r3}`)).toBe(true);
    await until("the first run to finish", 300_000, async () => (TERMINAL.includes((await get(r1)).status) ? true : undefined));

    // Nothing executing: no series for the account. The finished runs' timeline is in the histograms (R1, R3
    // and the first test's five completed; the over-cap run never started: no duration, no queue wait).
    const text = await until("the account's requests to leave the gauge", 60_000, async () => {
      const t = await metrics();
      return Number.isNaN(sample(t, memorySeries)) ? t : undefined;
    });
    expect(sample(text, 'codeplane_run_duration_seconds_count{status="completed",compute_type="cpu-general"}')).toBeGreaterThanOrEqual(7);
    expect(sample(text, 'codeplane_run_duration_seconds_count{status="failed",compute_type="cpu-memory"}')).toBeNaN();
    expect(sample(text, 'codeplane_run_queue_wait_seconds_count{compute_type="cpu-general"}')).toBeGreaterThanOrEqual(7);
    expect(sample(text, 'codeplane_run_pod_start_seconds_count{compute_type="cpu-general"}')).toBeGreaterThanOrEqual(7);
    for (const phase of ["scheduling", "image", "checkout", "command_start"]) {
      expect(sample(text, `codeplane_run_startup_phase_seconds_count{phase="${phase}",compute_type="cpu-general"}`), phase).toBeGreaterThanOrEqual(7);
    }
  }, 900_000);
});
