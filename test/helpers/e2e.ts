import { gitListenerEnv, openTestCluster, type TestCluster } from "./cluster.ts";
import { createFixtureRepo, type FixtureRepo } from "./git-fixture.ts";
import { startTestService, type Tenant, type TestService } from "./service.ts";

// What most end-to-end files start from: their own namespace, a fixture
// repository published to the cluster's git daemon, the service (API and
// controller) on that namespace, and a tenant with the repository registered.

export interface E2E {
  cluster: TestCluster;
  svc: TestService;
  fixture: FixtureRepo;
  alice: Tenant;
  repoId: string;
  close(): Promise<void>;
}

export async function startE2E(prefix: string, opts: { env?: Record<string, string>; prepare?: (fixture: FixtureRepo) => Promise<void> } = {}): Promise<E2E> {
  const cluster = await openTestCluster(prefix);
  const fixture = await createFixtureRepo();
  await opts.prepare?.(fixture);
  const url = await cluster.publish(fixture.path, `${prefix}-${cluster.namespace}`);
  const svc = await startTestService({
    KUBECONFIG: cluster.kubeconfig,
    CODEPLANE_NAMESPACE: cluster.namespace,
    CODEPLANE_IMAGE_PULL_POLICY: "Never",
    ...gitListenerEnv(),
    ...opts.env,
  });
  const alice = await svc.tenant();
  const res = await alice.api("/v1/repositories", { method: "POST", json: { url, name: "fixture" } });
  if (res.status !== 201) throw new Error(`could not register the fixture: ${res.status} ${await res.text()}`);
  const repoId = (await res.json()).id as string;
  return {
    cluster,
    svc,
    fixture,
    alice,
    repoId,
    async close() {
      await svc.close();
      await cluster.cleanup();
      await fixture.cleanup();
    },
  };
}
