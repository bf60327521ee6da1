import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setAccountLimits } from "../../src/domain/limits/limits.ts";
import { RUN_ROWS } from "../../src/domain/runs/run-rows.ts";
import { mirrorWorkload } from "../../src/domain/workloads/workload-rows.ts";
import { newId } from "../../src/domain/shared/ids.ts";
import type { RunSpec, RunStatus } from "../../src/resources/run.ts";
import type { Tenant, TestService } from "../helpers/service.ts";
import { twoTenantsWithRepository, type TwoTenants } from "../helpers/two-tenants.ts";

// Limits and the queue through the real API over real Postgres (issue 32):
// the waiting limit answers 429 with Retry-After and a detail naming it,
// before anything is created, per account and with an account's override;
// a queued run shows `queue: {position, reason}` mirrored from its Run's
// status by the real mirror, positions derived in submission order. No
// cluster here: a request under the limit reaches "Kubernetes is not
// reachable" (503), which is how it is told apart from one refused first.

let setup: TwoTenants;
let svc: TestService;
let alice: Tenant;
let bob: Tenant;
let repoId: string;
const LIMITS = { executingPerAccount: 2, waitingPerAccount: 2, executingTotal: 0, cpuPerAccount: 0, memoryPerAccount: 0, retryAfterSeconds: 17 };

beforeAll(async () => {
  setup = await twoTenantsWithRepository({ CODEPLANE_LIMIT_WAITING_PER_ACCOUNT: "2", CODEPLANE_LIMIT_RETRY_AFTER_SECONDS: "17" });
  ({ svc, alice, bob, repoId } = setup);
});
afterAll(() => setup?.close());

/** A run of the tenant as the controller mirrors it from its resource (status undefined: just created). */
async function mirrored(t: Tenant, status?: RunStatus, runId = newId()): Promise<string> {
  const spec: RunSpec = {
    runId,
    accountId: t.accountId,
    repositoryId: t === alice ? repoId : await bobsRepository(),
    repositoryUrl: "https://example.invalid/r.git",
    commitHash: "a".repeat(40),
    command: ["true"],
    computeType: "cpu-general",
    timeoutSeconds: 60,
  };
  await mirrorWorkload(svc.db, RUN_ROWS, { namespace: "ns", name: `run-${runId}`, createdAt: new Date(), spec, status });
  return runId;
}

let bobRepo: string | undefined;
async function bobsRepository(): Promise<string> {
  if (bobRepo) return bobRepo;
  bobRepo = randomUUID();
  await svc.db
    .insertInto("repositories")
    .values({
      id: bobRepo,
      account_id: bob.accountId,
      name: "b",
      url: "https://example.invalid/b.git",
      provider: "git",
      created_at: new Date(),
      updated_at: new Date(),
    })
    .execute();
  return bobRepo;
}

const create = (t: Tenant) => t.api(`/v1/repositories/${repoId}/main/runs`, { method: "POST", json: { command: ["true"] } });
const count = async (accountId: string) =>
  Number(
    (
      await svc.db
        .selectFrom("runs")
        .select((eb) => eb.fn.countAll().as("n"))
        .where("account_id", "=", accountId)
        .executeTakeFirstOrThrow()
    ).n,
  );
const queued = (reason = "AccountConcurrency"): RunStatus => ({ phase: "pending", queue: { reason } });

describe("the waiting limit", () => {
  it("refuses a run over the account's pending runs with 429, Retry-After and a detail naming the limit, creating nothing", async () => {
    // Under the limit: the request passes the check (and meets the missing cluster).
    expect((await create(alice)).status).toBe(503);
    await mirrored(alice);
    await mirrored(alice, queued());
    const before = await count(alice.accountId);

    const res = await create(alice);
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("17");
    const body = (await res.json()) as { detail: string };
    expect(body.detail).toMatch(/waiting limit/);
    expect(body.detail).toContain("has 2 pending runs and may have 2");
    expect(await count(alice.accountId)).toBe(before);
  });

  it("counts only pending runs: a run that started or finished frees its place", async () => {
    const [first] = (await svc.db.selectFrom("runs").select("id").where("account_id", "=", alice.accountId).orderBy("id").execute()).map((r) => r.id);
    await mirrored(alice, { phase: "running", startTime: new Date().toISOString() }, first);
    expect((await create(alice)).status).toBe(503);
    await mirrored(alice);
    expect((await create(alice)).status).toBe(429);
  });

  it("an account's override replaces the default (and 0 means none)", async () => {
    await setAccountLimits(svc.db, await accountName(alice), { executing: undefined, waiting: 3 }, LIMITS);
    expect((await create(alice)).status).toBe(503);
    await mirrored(alice);
    expect((await create(alice)).status).toBe(429);
    await setAccountLimits(svc.db, await accountName(alice), { executing: undefined, waiting: 0 }, LIMITS);
    expect((await create(alice)).status).toBe(503);
    await setAccountLimits(svc.db, await accountName(alice), { executing: undefined, waiting: null }, LIMITS);
    expect((await create(alice)).status).toBe(429);
  });

  it("is documented on the operation, with Retry-After", async () => {
    const doc = (await (await fetch(`${svc.url}/openapi.json`)).json()) as {
      components: unknown;
      paths: Record<string, Record<string, { responses: Record<string, { description: string; headers?: Record<string, unknown> }> }>>;
    };
    const r429 = doc.paths["/v1/repositories/{repository_id}/{commit_hash}/runs"]!.post!.responses["429"]!;
    expect(r429.description).toContain("waiting limit");
    expect(r429.headers).toHaveProperty("Retry-After");
    expect(JSON.stringify(doc.components)).toContain("Its place among the account's queued runs");
  });
});

async function accountName(t: Tenant): Promise<string> {
  return (await svc.db.selectFrom("accounts").select("name").where("id", "=", t.accountId).executeTakeFirstOrThrow()).name;
}

describe("the queue fields", () => {
  it("shows a queued run's position among its account's queued runs and the reason; none once admitted or cancelled", async () => {
    const ids = [await mirrored(bob, queued()), await mirrored(bob, queued()), await mirrored(bob, queued("ClusterConcurrency"))];
    const get = async (id: string) =>
      (await (await bob.api(`/v1/runs/${id}`)).json()) as { status: string; queue: { position: number; reason: string } | null };
    expect((await get(ids[0]!)).queue).toEqual({ position: 1, reason: "AccountConcurrency" });
    expect((await get(ids[1]!)).queue).toEqual({ position: 2, reason: "AccountConcurrency" });
    expect((await get(ids[2]!)).queue).toEqual({ position: 3, reason: "ClusterConcurrency" });

    // The list shows the same positions.
    const page = (await (await bob.api("/v1/runs?status=pending")).json()) as { items: { run_id: string; queue: unknown }[] };
    expect(Object.fromEntries(page.items.map((r) => [r.run_id, r.queue]))).toMatchObject({
      [ids[0]!]: { position: 1 },
      [ids[1]!]: { position: 2 },
      [ids[2]!]: { position: 3 },
    });

    // The first is admitted (its status has no queue any more): the others move up.
    await mirrored(bob, { phase: "pending", conditions: [] }, ids[0]);
    expect((await get(ids[0]!)).queue).toBeNull();
    expect((await get(ids[1]!)).queue).toEqual({ position: 1, reason: "AccountConcurrency" });
    // A mirror without a status (the API's own, at creation) leaves the queue as it is.
    await mirrored(bob, undefined, ids[1]);
    expect((await get(ids[1]!)).queue).toEqual({ position: 1, reason: "AccountConcurrency" });
    // Cancelled while queued: no longer queued.
    await mirrored(bob, { phase: "cancelled", queue: { reason: "AccountConcurrency" }, completionTime: new Date().toISOString() }, ids[1]);
    expect(await get(ids[1]!)).toMatchObject({ status: "cancelled", queue: null });
    expect((await get(ids[2]!)).queue).toEqual({ position: 1, reason: "ClusterConcurrency" });
    // Alice's queued runs are hers: bob's positions never count them.
    expect((await alice.api(`/v1/runs/${ids[2]}`)).status).toBe(404);
  });

  it("with Kueue, a run may wait past pending (a retry's next attempt while running): queued, in its submission order, until admitted", async () => {
    const started = new Date().toISOString();
    const retried = await mirrored(alice, { phase: "running", startTime: started });
    const later = await mirrored(alice, queued("ClusterQuota"));
    await mirrored(alice, { phase: "running", startTime: started, queue: { reason: "KueuePending" } }, retried);
    const get = async (id: string) => (await (await alice.api(`/v1/runs/${id}`)).json()) as { status: string; queue: { position: number } | null };
    // (Alice has a queued run from an earlier test: positions are compared, not fixed.)
    const first = await get(retried);
    expect(first).toMatchObject({ status: "running", queue: { reason: "KueuePending" } });
    expect((await get(later)).queue).toMatchObject({ position: first.queue!.position + 1, reason: "ClusterQuota" });
    // The retry's attempt admitted: still running, no longer queued; the later run moves up.
    await mirrored(alice, { phase: "running", startTime: started }, retried);
    expect(await get(retried)).toMatchObject({ status: "running", queue: null });
    expect((await get(later)).queue).toMatchObject({ position: first.queue!.position });
  });
});
