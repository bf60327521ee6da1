import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NO_LIMITS, setAccountLimits } from "../../src/domain/limits/limits.ts";
import type { Tenant, TestService } from "../helpers/service.ts";
import { twoTenantsWithRepository, type TwoTenants } from "../helpers/two-tenants.ts";

// The CPU and memory caps at run creation, through the real API over real
// Postgres (issue 32): a run whose compute type requests more than a cap by
// itself could never be admitted, so it is refused with 422 on compute_type
// and nothing is created; one within the caps passes (and meets the missing
// cluster: 503). An account's override moves its caps, not another's. The
// default presets: cpu-general 250m/256Mi, cpu-memory 250m/1Gi, gpu-a10g 1 CPU.

let setup: TwoTenants;
let svc: TestService;
let alice: Tenant;
let bob: Tenant;
let repoId: string;
const DEFAULTS = { ...NO_LIMITS, cpuPerAccount: 500 };

beforeAll(async () => {
  setup = await twoTenantsWithRepository({ CODEPLANE_LIMIT_CPU_PER_ACCOUNT: "500m" });
  ({ svc, alice, bob, repoId } = setup);
  const res = await bob.api("/v1/repositories", { method: "POST", json: { url: setup.fixture.url, name: "r" } });
  bobRepo = ((await res.json()) as { id: string }).id;
});
afterAll(() => setup?.close());

let bobRepo: string;
const create = (t: Tenant, compute_type: string) =>
  t.api(`/v1/repositories/${t === bob ? bobRepo : repoId}/main/runs`, { method: "POST", json: { command: ["true"], compute_type } });
const accountName = async (t: Tenant) => (await svc.db.selectFrom("accounts").select("name").where("id", "=", t.accountId).executeTakeFirstOrThrow()).name;
const runs = async (t: Tenant) => (await svc.db.selectFrom("runs").select("id").where("account_id", "=", t.accountId).execute()).length;

describe("CPU and memory caps at run creation", () => {
  it("refuses a run bigger than the account's CPU cap by itself with 422 on compute_type, creating nothing", async () => {
    const res = await create(alice, "gpu-a10g");
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      detail: [
        {
          loc: ["body", "compute_type"],
          msg: "compute type 'gpu-a10g' requests 1 CPU, more than this account's cap of 500m (limit 'cpu' per account): a run of it could never start",
          type: "value_error",
        },
      ],
    });
    expect(await runs(alice)).toBe(0);
    // Within the cap: past the check, to the missing cluster.
    expect((await create(alice, "cpu-general")).status).toBe(503);
  });

  it("follows an account's overrides, CPU and memory, and only that account's", async () => {
    await setAccountLimits(svc.db, await accountName(alice), { cpu: 2000, memory: 512 * 2 ** 20 }, DEFAULTS);
    expect((await create(alice, "gpu-a10g")).status).toBe(422); // 4Gi of memory now
    const res = await create(alice, "cpu-memory");
    expect(res.status).toBe(422);
    expect(((await res.json()) as { detail: { msg: string }[] }).detail[0]!.msg).toContain("requests 1Gi memory, more than this account's cap of 512Mi");
    expect((await create(alice, "cpu-general")).status).toBe(503);
    await setAccountLimits(svc.db, await accountName(alice), { memory: 0 }, DEFAULTS);
    expect((await create(alice, "gpu-a10g")).status).toBe(503);
    // Bob still has the operator's 500m.
    expect((await create(bob, "gpu-a10g")).status).toBe(422);
  });
});
