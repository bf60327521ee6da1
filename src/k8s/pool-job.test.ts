import { describe, expect, it } from "vitest";
import { DEFAULT_COMPUTE_TYPES } from "../resources/compute-types.ts";
import type { RunSpec } from "../resources/run.ts";
import { WORKLOAD_POD_SELECTOR } from "./network-policy.ts";
import { buildPoolJob, buildPoolSecret, POOL_CREDENTIAL_KEY, poolJobName, type PoolJobInput } from "./pool-job.ts";
import { buildRunJob } from "./run-job.ts";

// A warm pool's pod is a run's pod in everything that isolates it, and holds
// nothing of any run before it is claimed: no checkout token, no variable, no
// Secret but its own pool credential's.

const input = (over: Partial<PoolJobInput> = {}): PoolJobInput => ({
  pool: "py",
  poolPodId: "0190b1c2-3d4e-7f00-8a1b-2c3d4e5f6a7b",
  jobName: poolJobName("py", "0190b1c2-3d4e-7f00-8a1b-2c3d4e5f6a7b"),
  namespace: "codeplane",
  image: "codeplane-runner:dev",
  images: { codeplane: "codeplane:dev", pullPolicy: "IfNotPresent" },
  compute: { ...DEFAULT_COMPUTE_TYPES["cpu-general"]!, runtimeClassName: "gvisor" },
  internalUrl: "http://10.0.0.5:8081",
  idleSeconds: 900,
  ttlSecondsAfterFinished: 3600,
  outputCollectSeconds: 120,
  ...over,
});

const spec: RunSpec = {
  runId: "0190b1c2-3d4e-7f00-8a1b-2c3d4e5f6a7c",
  accountId: "0190b1c2-0000-7000-8000-000000000001",
  repositoryId: "0190b1c2-0000-7000-8000-000000000002",
  repositoryUrl: "https://example.com/org/repo.git",
  commitHash: "a".repeat(40),
  command: ["python3", "x.py"],
  computeType: "cpu-general",
  timeoutSeconds: 600,
};

describe("buildPoolJob", () => {
  const job = buildPoolJob(input());
  const pod = job.spec!.template.spec!;
  const containers = [...pod.initContainers!, ...pod.containers];
  const cold = buildRunJob({
    resource: { metadata: { name: `run-${spec.runId}`, namespace: "codeplane", uid: "u" }, spec },
    images: { runner: "codeplane-runner:dev", codeplane: "codeplane:dev", pullPolicy: "IfNotPresent" },
    compute: input().compute,
    envNames: [],
    checkout: { gitUrl: "http://10.0.0.5:8081/git/r.git", secretName: "s", egress: "restricted", preprocessEnv: {} },
    ttlSecondsAfterFinished: 3600,
    internalUrl: "http://10.0.0.5:8081",
    outputCollectSeconds: 120,
  });
  const coldPod = cold.spec!.template.spec!;

  it("isolates its pod exactly as a run's: security contexts, no service-account token, runtime class, scheduling", () => {
    for (const key of [
      "securityContext",
      "automountServiceAccountToken",
      "enableServiceLinks",
      "restartPolicy",
      "runtimeClassName",
      "nodeSelector",
      "tolerations",
      "terminationGracePeriodSeconds",
    ] as const) {
      expect(pod[key], key).toEqual(coldPod[key]);
    }
    expect(pod.runtimeClassName).toBe("gvisor");
    for (const c of containers) expect(c.securityContext, c.name).toEqual(coldPod.containers[0]!.securityContext);
    expect(pod.containers[0]!.resources).toEqual(coldPod.containers[0]!.resources);
  });

  it("is selected by the workload NetworkPolicy from its first moment", () => {
    const labels = job.spec!.template.metadata!.labels!;
    for (const [k, v] of Object.entries(WORKLOAD_POD_SELECTOR.matchLabels ?? {})) expect(labels[k]).toBe(v);
    for (const e of WORKLOAD_POD_SELECTOR.matchExpressions ?? []) expect(e.values).toContain(labels[e.key]);
  });

  it("holds no run's token, variable or Secret: its only secret reference is its own pool credential", () => {
    const refs = containers.flatMap((c) => (c.env ?? []).filter((e) => e.valueFrom).map((e) => ({ container: c.name, name: e.name, ref: e.valueFrom })));
    expect(refs).toEqual([
      { container: "main", name: "CODEPLANE_POOL_CREDENTIAL", ref: { secretKeyRef: { name: job.metadata!.name, key: POOL_CREDENTIAL_KEY, optional: false } } },
    ]);
    expect(containers.every((c) => !c.envFrom)).toBe(true);
    expect(pod.volumes!.every((v) => v.emptyDir && !v.secret && !v.projected)).toBe(true);
    const text = JSON.stringify(job);
    for (const forbidden of [
      "codeplane-checkout-token",
      "codeplane-output-token",
      "CODEPLANE_CHECKOUT_TOKEN",
      "CODEPLANE_OUTPUT_TOKEN",
      "cpg_",
      "cpw_",
      "/git/",
    ]) {
      expect(text, forbidden).not.toContain(forbidden);
    }
  });

  it("has no owner until a run claims it, and ends by itself past its idle lifetime", () => {
    expect(job.metadata!.ownerReferences).toBeUndefined();
    expect(job.spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 900 + 300, ttlSecondsAfterFinished: 3600 });
    expect(job.metadata!.labels).toMatchObject({ "codeplane.dev/pool": "py", "codeplane.dev/pool-pod": input().poolPodId });
    expect(job.metadata!.labels!["codeplane.dev/run"]).toBeUndefined();
  });

  it("runs the warm agent in the environment's image, with the run's tools beside it", () => {
    expect(pod.containers[0]).toMatchObject({ name: "main", image: "codeplane-runner:dev", command: ["node", "/codeplane/bin/warm.ts"] });
    const copied = pod.initContainers![0]!.command!.join(" ");
    for (const f of ["entrypoint.ts", "outputs.ts", "environment-archive.ts", "warm.ts"]) expect(copied).toContain(`/codeplane/bin/${f}`);
  });

  it("keeps the credential in a Secret owned by the Job, so it goes with it", () => {
    const secret = buildPoolSecret(input(), "job-uid", "cpw_x");
    expect(secret).toMatchObject({
      metadata: { name: job.metadata!.name, ownerReferences: [{ kind: "Job", name: job.metadata!.name, uid: "job-uid", controller: true }] },
      immutable: true,
      stringData: { [POOL_CREDENTIAL_KEY]: "cpw_x" },
    });
  });

  it("names Jobs within Kubernetes' limits", () => {
    expect(poolJobName("a".repeat(30), input().poolPodId).length).toBeLessThanOrEqual(63);
  });
});
