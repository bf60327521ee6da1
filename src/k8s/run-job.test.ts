import { describe, expect, it } from "vitest";
import { DEFAULT_COMPUTE_TYPES } from "./compute-types.ts";
import type { RunSpec } from "./crds/run.ts";
import { buildRunJob, type RunJobInput } from "./run-job.ts";

const spec: RunSpec = {
  runId: "0190b1c2-3d4e-7f00-8a1b-2c3d4e5f6a7b",
  accountId: "0190b1c2-0000-7000-8000-000000000001",
  repositoryId: "0190b1c2-0000-7000-8000-000000000002",
  repositoryUrl: "https://example.com/org/repo.git",
  commitHash: "a".repeat(40),
  command: ["python3", "train.py", "--epochs", "3"],
  computeType: "cpu-general",
  timeoutSeconds: 600,
};

const input = (over: Partial<RunJobInput> = {}): RunJobInput => ({
  resource: { metadata: { name: `run-${spec.runId}`, namespace: "codeplane", uid: "uid-1" }, spec },
  images: { runner: "codeplane-runner:dev", codeplane: "codeplane:dev", pullPolicy: "IfNotPresent" },
  compute: DEFAULT_COMPUTE_TYPES["cpu-general"]!,
  envSecretName: `run-${spec.runId}-env`,
  ttlSecondsAfterFinished: 3600,
  ...over,
});

describe("buildRunJob", () => {
  const job = buildRunJob(input());
  const pod = job.spec!.template.spec!;
  const all = [...pod.initContainers!, ...pod.containers];

  it("names the Job after the run and makes the Run its controlling owner", () => {
    expect(job.metadata!.name).toBe(`run-${spec.runId}`);
    expect(job.metadata!.ownerReferences).toEqual([
      { apiVersion: "codeplane.dev/v1alpha1", kind: "Run", name: `run-${spec.runId}`, uid: "uid-1", controller: true, blockOwnerDeletion: true },
    ]);
  });

  it("carries the contract's labels on the Job and its pods", () => {
    const expected = {
      "app.kubernetes.io/managed-by": "codeplane",
      "codeplane.dev/account": spec.accountId,
      "codeplane.dev/repository": spec.repositoryId,
      "codeplane.dev/run": spec.runId,
    };
    expect(job.metadata!.labels).toMatchObject(expected);
    expect(job.spec!.template.metadata!.labels).toMatchObject(expected);
  });

  it("never retries, stops at the timeout and cleans up after itself", () => {
    expect(job.spec).toMatchObject({ backoffLimit: 0, activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 3600 });
    expect(pod.restartPolicy).toBe("Never");
  });

  it("runs with no service-account token, as non-root, with nothing to escalate", () => {
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.enableServiceLinks).toBe(false);
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: "RuntimeDefault" } });
    for (const c of all) {
      expect(c.securityContext, c.name).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        capabilities: { drop: ["ALL"] },
      });
      expect(c.resources?.limits, c.name).toBeDefined();
    }
  });

  it("checks out the commit before the main container runs the argv through the framing entrypoint", () => {
    expect(pod.initContainers!.map((c) => c.name)).toEqual(["tools", "checkout"]);
    const checkout = pod.initContainers![1]!;
    expect(checkout.env).toEqual(expect.arrayContaining([
      { name: "CODEPLANE_REPOSITORY_URL", value: spec.repositoryUrl },
      { name: "CODEPLANE_COMMIT", value: spec.commitHash },
    ]));
    const main = pod.containers[0]!;
    expect(main.command).toEqual(["node", "/codeplane/bin/entrypoint.ts", "--workdir", "/workspace/src", "--", "python3", "train.py", "--epochs", "3"]);
  });

  it("passes environment variables only through the run's Secret, never as values in the spec", () => {
    const main = pod.containers[0]!;
    expect(main.envFrom).toEqual([{ secretRef: { name: `run-${spec.runId}-env`, optional: false } }]);
    expect(buildRunJob(input({ envSecretName: null })).spec!.template.spec!.containers[0]!.envFrom).toEqual([]);
  });

  it.each(Object.entries(DEFAULT_COMPUTE_TYPES))("applies the %s preset", (_name, preset) => {
    const p = buildRunJob(input({ compute: preset })).spec!.template.spec!;
    expect(p.containers[0]!.resources).toEqual({ requests: preset.requests, limits: preset.limits });
    expect(p.nodeSelector).toEqual(preset.nodeSelector);
    expect(p.tolerations).toEqual(preset.tolerations);
  });
});
