import { createFixtureRepo, type FixtureRepo } from "./git-fixture.ts";
import { startTestService, type Tenant, type TestService } from "./service.ts";

/** A service, a fixture repository registered by alice as "r", and bob, who must not see it. */
export interface TwoTenants {
  svc: TestService;
  fixture: FixtureRepo;
  alice: Tenant;
  bob: Tenant;
  repoId: string;
  close(): Promise<void>;
}

export async function twoTenantsWithRepository(env: Record<string, string> = {}): Promise<TwoTenants> {
  const svc = await startTestService(env);
  const fixture = await createFixtureRepo();
  const alice = await svc.tenant();
  const bob = await svc.tenant();
  const res = await alice.api("/v1/repositories", { method: "POST", json: { url: fixture.url, name: "r" } });
  if (res.status !== 201) throw new Error(`registering the fixture answered ${res.status}: ${await res.text()}`);
  const repoId = ((await res.json()) as { id: string }).id;
  return {
    svc,
    fixture,
    alice,
    bob,
    repoId,
    async close() {
      await svc.close();
      await fixture.cleanup();
    },
  };
}
