import * as k8s from "@kubernetes/client-node";
import { mintCheckoutToken } from "../src/domain/checkout/checkout-tokens.ts";
import { newId } from "../src/domain/shared/ids.ts";
import { buildRunJob, CHECKOUT_TOKEN_KEY } from "../src/k8s/run-job.ts";
import type { ClusterBench } from "./lib.ts";

// The cluster benchmarks' baseline: the Job codeplane would make for a run,
// created straight through the Kubernetes API (no Run resource, no owner, no
// admission), so what codeplane adds over a raw Job is what is measured.
// Shared by bench/run-latency.ts and bench/burst.ts.

/** Small requests, so a burst is limited by the node's pod capacity and CPU, not by CPU accounting. */
export const BENCH_COMPUTE = { requests: { cpu: "10m", memory: "32Mi" }, limits: { cpu: "1", memory: "256Mi" }, nodeSelector: {}, tolerations: [] };

/** The same Job a run gets, with its checkout Secret, created directly (no codeplane resource, no owner). */
export async function createJobDirectly(bench: ClusterBench, command: string[]): Promise<string> {
  const { db, namespace, kc, gitUrl, gitEndpoint, fixture } = bench;
  const runId = newId();
  const commit = fixture.commits.main;
  const token = await mintCheckoutToken(db, {
    workloadKind: "run",
    workloadId: runId,
    accountId: bench.accountId,
    repositoryId: bench.repositoryId,
    commitHash: commit,
    expiresAt: new Date(Date.now() + 600_000),
  });
  await kc
    .makeApiClient(k8s.CoreV1Api)
    .createNamespacedSecret({ namespace, body: { metadata: { name: `run-${runId}` }, stringData: { [CHECKOUT_TOKEN_KEY]: token } } });
  const job = buildRunJob({
    resource: {
      metadata: { name: `run-${runId}`, namespace, uid: "" },
      spec: {
        runId,
        accountId: bench.accountId,
        repositoryId: bench.repositoryId,
        repositoryUrl: gitUrl,
        commitHash: commit,
        command,
        computeType: "cpu-general",
        timeoutSeconds: 600,
      },
    },
    images: { runner: "codeplane-runner:dev", codeplane: "codeplane:dev", pullPolicy: "Never" },
    compute: BENCH_COMPUTE,
    envNames: [],
    internalUrl: gitEndpoint,
    checkout: { gitUrl: `${gitEndpoint}/git/${bench.repositoryId}.git`, secretName: `run-${runId}`, egress: "restricted", preprocessEnv: {} },
    ttlSecondsAfterFinished: 30,
  });
  job.metadata!.ownerReferences = [];
  await kc.makeApiClient(k8s.BatchV1Api).createNamespacedJob({ namespace, body: job });
  return job.metadata!.name!;
}

export async function deleteJobDirectly(bench: ClusterBench, name: string): Promise<void> {
  await bench.kc
    .makeApiClient(k8s.BatchV1Api)
    .deleteNamespacedJob({ name, namespace: bench.namespace, propagationPolicy: "Background" })
    .catch(() => undefined);
  await bench.kc
    .makeApiClient(k8s.CoreV1Api)
    .deleteNamespacedSecret({ name, namespace: bench.namespace })
    .catch(() => undefined);
}
