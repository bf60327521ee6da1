import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startTestService, type TestService } from "../helpers/service.ts";
import { until } from "../helpers/until.ts";

// CODEPLANE_COMPONENTS decides what a process runs. The cluster here is a
// kubeconfig pointing at a closed loopback port: enough to tell whether the
// controller tried to take the leader Lease, without a cluster.

function unreachableCluster(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "codeplane-kubeconfig-"));
  const file = path.join(dir, "kubeconfig");
  writeFileSync(
    file,
    `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`,
  );
  return file;
}

const triedLeaderElection = (s: TestService) => s.logs.some((l) => l.includes('"component":"leader-election"'));

describe("CODEPLANE_COMPONENTS", () => {
  let svc: TestService | null = null;
  afterEach(async () => {
    await svc?.close();
    svc = null;
  });

  it("controller alone serves health, readiness and metrics, and no API", async () => {
    svc = await startTestService({ CODEPLANE_COMPONENTS: "controller", KUBECONFIG: unreachableCluster() });
    const tenant = await svc.tenant();
    expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${svc.url}/metrics`)).status).toBe(200);
    const ready = await fetch(`${svc.url}/readyz`);
    expect((await ready.json()).checks.database).toBe("ok");
    for (const p of ["/v1/repositories", "/v1/runs", "/openapi.json", "/docs"]) {
      const res = await tenant.api(p);
      expect(res.status, p).toBe(404);
      expect(await res.json(), p).toEqual({ detail: "Not Found" });
    }
    expect(
      await until("the controller to try to take the Lease", 5000, () => triedLeaderElection(svc!), { intervalMs: 50 }),
      "the controller should try to take the Lease",
    ).toBe(true);
  });

  it("api alone serves the API and never runs the controller", async () => {
    svc = await startTestService({ CODEPLANE_COMPONENTS: "api", KUBECONFIG: unreachableCluster() });
    const tenant = await svc.tenant();
    expect((await tenant.api("/v1/repositories")).status).toBe(200);
    expect((await fetch(`${svc.url}/openapi.json`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    expect(triedLeaderElection(svc)).toBe(false);
  });

  it("both, by default", async () => {
    svc = await startTestService({ KUBECONFIG: unreachableCluster() });
    const tenant = await svc.tenant();
    expect((await tenant.api("/v1/repositories")).status).toBe(200);
    expect(await until("the controller to try to take the Lease", 5000, () => triedLeaderElection(svc!), { intervalMs: 50 })).toBe(true);
  });
});
