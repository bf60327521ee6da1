import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestCluster, until, type TestCluster } from "../helpers/cluster.ts";
import { createFixtureRepo, type FixtureRepo } from "../helpers/git-fixture.ts";
import { startTestService, type Tenant, type TestService } from "../helpers/service.ts";

// Stored output is capped per stream: the start is kept, the rest dropped,
// and the run says so; live streaming is not affected by the cap.

let cluster: TestCluster;
let svc: TestService;
let fixture: FixtureRepo;
let alice: Tenant;
let repoId: string;

beforeAll(async () => {
  cluster = await openTestCluster("cp-e2e-cap");
  fixture = await createFixtureRepo();
  const url = await cluster.publish(fixture.path, `e2e-cap-${cluster.namespace}`);
  svc = await startTestService({
    KUBECONFIG: cluster.kubeconfig,
    CODEPLANE_NAMESPACE: cluster.namespace,
    CODEPLANE_IMAGE_PULL_POLICY: "Never",
    CODEPLANE_LOG_MAX_BYTES: "1024",
  });
  alice = await svc.tenant();
  repoId = (await (await alice.api("/v1/repositories", { method: "POST", json: { url, name: "fixture" } })).json()).id;
});
afterAll(async () => {
  await svc?.close();
  await cluster?.cleanup();
  await fixture?.cleanup();
});

describe("stored output cap", () => {
  it("keeps the first CODEPLANE_LOG_MAX_BYTES of a stream and marks it truncated", async () => {
    const res = await alice.api(`/v1/repositories/${repoId}/main/runs`, {
      method: "POST",
      json: { command: ["sh", "-c", 'i=0; while [ $i -lt 500 ]; do i=$((i+1)); echo "line $i"; done; echo small >&2'] },
    });
    const run = await res.json();
    await until("the logs to be complete", 120_000, async () => {
      const row = await svc.db.selectFrom("runs").select(["status", "logs_complete"]).where("id", "=", run.run_id).executeTakeFirst();
      return row?.logs_complete && row.status === "completed";
    });
    const stdout = await (await alice.api(`/v1/runs/${run.run_id}/logs/stdout`)).json();
    expect(stdout.truncated).toBe(true);
    expect(stdout.size).toBeLessThanOrEqual(1024);
    expect(stdout.size).toBeGreaterThan(900);
    expect(stdout.content.startsWith("line 1\nline 2\n")).toBe(true);
    expect(stdout.content.endsWith("\n")).toBe(true);
    const stderr = await (await alice.api(`/v1/runs/${run.run_id}/logs/stderr`)).json();
    expect(stderr).toMatchObject({ content: "small\n", truncated: false });
  });
});
