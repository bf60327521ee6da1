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

let e: E2E;
let stopWatch: (() => void) | undefined;
const active = new Set<string>();
let peak = 0;
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
  stopWatch = () => req.abort();
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
});
