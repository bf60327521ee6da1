import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTestCluster, until, type TestCluster } from "../helpers/cluster.ts";

// Failover between replicas, as the chart runs them: each candidate is its own
// process on a real Lease. A holder killed outright (SIGKILL: no release) is
// succeeded within the lease (10 s) and a second; one stopped cleanly
// (SIGTERM) releases the Lease, so its successor starts at once.

const SCRIPT = new URL("./processes/elector.ts", import.meta.url).pathname;
let cluster: TestCluster;
const procs: ChildProcess[] = [];

interface Candidate {
  proc: ChildProcess;
  output: string[];
  leadingAt(): number | null;
}

function candidate(name: string, identity: string): Candidate {
  const proc = spawn(process.execPath, [SCRIPT], {
    env: { PATH: process.env.PATH ?? "", KUBECONFIG: cluster.kubeconfig, LEASE_NAMESPACE: cluster.namespace, LEASE_NAME: name, IDENTITY: identity },
    stdio: ["ignore", "pipe", "inherit"],
  });
  procs.push(proc);
  const output: string[] = [];
  let leading: number | null = null;
  proc.stdout.on("data", (b: Buffer) => {
    for (const line of b.toString().split("\n").filter(Boolean)) {
      output.push(line);
      if (line === "leading") leading ??= Date.now();
    }
  });
  return { proc, output, leadingAt: () => leading };
}

beforeAll(async () => {
  cluster = await openTestCluster("cp-e2e-lease");
});
afterAll(async () => {
  for (const p of procs) p.kill("SIGKILL");
  await cluster?.cleanup();
});

describe("leader failover", () => {
  it("a holder killed with SIGKILL is succeeded within the lease and a second, and only one leads at a time", async () => {
    const a = candidate("failover-kill", "a");
    await until("a to lead", 20_000, async () => a.leadingAt());
    const b = candidate("failover-kill", "b");
    await new Promise((r) => setTimeout(r, 3_000));
    expect(b.leadingAt()).toBeNull(); // a renews: b waits
    const killedAt = Date.now();
    a.proc.kill("SIGKILL");
    const bLeads = await until("b to lead", 20_000, async () => b.leadingAt());
    const handover = bLeads - killedAt;
    expect(handover).toBeLessThan(11_500);
    expect(handover).toBeGreaterThan(1_000); // not before a's lease could have run out
  });

  it("a holder stopped with SIGTERM releases the Lease: its successor leads within two seconds", async () => {
    const a = candidate("failover-term", "a");
    await until("a to lead", 20_000, async () => a.leadingAt());
    const b = candidate("failover-term", "b");
    await new Promise((r) => setTimeout(r, 1_500));
    const stoppedAt = Date.now();
    a.proc.kill("SIGTERM");
    const bLeads = await until("b to lead", 20_000, async () => b.leadingAt());
    expect(a.output).toContain("stopped");
    expect(bLeads - stoppedAt).toBeLessThan(2_000);
  });
});
