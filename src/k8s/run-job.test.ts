import { createRequire } from "node:module";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_COMPUTE_TYPES } from "../resources/compute-types.ts";
import type { RunSpec } from "../resources/run.ts";
import { buildRunJob, ENTRYPOINT_IN_IMAGE, OUTPUT_TOKEN_KEY, OUTPUTS_IN_IMAGE, type RunJobInput } from "./run-job.ts";

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
  envNames: ["API_TOKEN", "SEED"],
  checkout: {
    gitUrl: `http://10.0.0.5:8081/git/${spec.repositoryId}.git`,
    secretName: `run-${spec.runId}`,
    egress: "restricted",
    preprocessEnv: { PIP_INDEX_URL: "http://mirror.internal/simple" },
  },
  ttlSecondsAfterFinished: 3600,
  internalUrl: "http://10.0.0.5:8081",
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

  it("checks out the commit from codeplane's git endpoint, then runs the argv through the framing entrypoint (no environment: nothing installed)", () => {
    expect(pod.initContainers!.map((c) => c.name)).toEqual(["tools", "checkout"]);
    expect(pod.containers[0]!.image).toBe("codeplane-runner:dev");
    const checkout = pod.initContainers![1]!;
    expect(checkout.env).toEqual(
      expect.arrayContaining([
        { name: "CODEPLANE_GIT_URL", value: `http://10.0.0.5:8081/git/${spec.repositoryId}.git` },
        { name: "CODEPLANE_COMMIT", value: spec.commitHash },
      ]),
    );
    // The code host's URL reaches no container: pods never talk to it.
    expect(JSON.stringify(pod)).not.toContain(spec.repositoryUrl);
    const main = pod.containers[0]!;
    expect(main.command).toEqual(["node", "/codeplane/bin/entrypoint.ts", "--workdir", "/workspace/src", "--", "python3", "train.py", "--epochs", "3"]);
  });

  it("copies the entrypoint from where the codeplane image (the repository at /app) holds @codeplane/runner", () => {
    const entrypoint = createRequire(import.meta.url).resolve("@codeplane/runner");
    expect(ENTRYPOINT_IN_IMAGE).toBe(`/app/${path.relative(path.join(import.meta.dirname, "../.."), entrypoint)}`);
  });

  it("hands the checkout token to the checkout container alone, from the Secret", () => {
    const holders = all.filter((c) => JSON.stringify(c).includes("codeplane-checkout-token")).map((c) => c.name);
    expect(holders).toEqual(["checkout"]);
    expect(pod.initContainers![1]!.env).toContainEqual({
      name: "CODEPLANE_CHECKOUT_TOKEN",
      valueFrom: { secretKeyRef: { name: `run-${spec.runId}`, key: "codeplane-checkout-token", optional: false } },
    });
    for (const c of all) expect(c.envFrom ?? [], c.name).toEqual([]);
  });

  it("passes environment variables only by name from the run's Secret, never as values in the spec", () => {
    const main = pod.containers[0]!;
    expect(main.env).toEqual(
      expect.arrayContaining([
        { name: "API_TOKEN", valueFrom: { secretKeyRef: { name: `run-${spec.runId}`, key: "API_TOKEN", optional: false } } },
        { name: "SEED", valueFrom: { secretKeyRef: { name: `run-${spec.runId}`, key: "SEED", optional: false } } },
      ]),
    );
    const none = buildRunJob(input({ envNames: [] })).spec!.template.spec!.containers[0]!;
    expect(none.env!.filter((e) => e.valueFrom)).toEqual([]);
  });

  describe("with an environment", () => {
    const key = "e".repeat(64);
    const withEnv = buildRunJob(
      input({
        resource: {
          metadata: { name: `run-${spec.runId}`, namespace: "codeplane", uid: "uid-1" },
          spec: {
            ...spec,
            image: "codeplane-go:dev",
            environment: {
              key,
              image: "codeplane-go:dev",
              steps: [{ name: "go mod download", run: "go mod download" }],
              cachePaths: [],
              warnings: ["go 1.30 asked"],
            },
          },
        },
      }),
    ).spec!.template.spec!;

    it("restores it after the checkout, in codeplane's image, from the internal endpoint, with the checkout token", () => {
      expect(withEnv.initContainers!.map((c) => c.name)).toEqual(["tools", "checkout", "environment"]);
      const restore = withEnv.initContainers![2]!;
      expect(restore.image).toBe("codeplane:dev");
      expect(restore.command).toEqual(["/usr/local/bin/node", "/app/packages/runner/src/environment-archive.ts", "restore"]);
      // It holds the token: nothing the checkout put in the workspace (node_modules/.bin/tar) may run in it.
      const path = restore.env!.find((e) => e.name === "PATH")!.value!;
      expect(path.split(":").some((d) => d.startsWith("/workspace"))).toBe(false);
      expect(restore.env).toEqual(
        expect.arrayContaining([
          { name: "CODEPLANE_ARCHIVE_URL", value: `http://10.0.0.5:8081/internal/environments/${key}/archive` },
          { name: "CODEPLANE_ARCHIVE_TOKEN", valueFrom: { secretKeyRef: { name: `run-${spec.runId}`, key: "codeplane-checkout-token", optional: false } } },
          { name: "CODEPLANE_ENVIRONMENT_WARNINGS", value: JSON.stringify(["go 1.30 asked"]) },
        ]),
      );
    });

    it("runs the command in the environment's image, with its toolchains' variables and PATH", () => {
      const main = withEnv.containers[0]!;
      expect(main.image).toBe("codeplane-go:dev");
      const env = Object.fromEntries(main.env!.filter((e) => e.value !== undefined).map((e) => [e.name, e.value]));
      expect(env.PATH!.split(":").slice(0, 3)).toEqual(["/workspace/env/python/bin", "/workspace/src/node_modules/.bin", "/workspace/env/go/bin"]);
      expect(env).toMatchObject({
        CODEPLANE_ENV_DIR: "/workspace/env",
        GOMODCACHE: "/workspace/env/go/pkg/mod",
        GOTOOLCHAIN: "local",
        HOME: "/workspace/home",
      });
      // The token stays with the checkout and restore containers: the command never holds it.
      expect(JSON.stringify(main)).not.toContain("codeplane-checkout-token");
    });
  });

  it("pulls with the operator's image pull secrets, and names none otherwise", () => {
    expect(pod.imagePullSecrets).toBeUndefined();
    expect(buildRunJob(input({ imagePullSecrets: ["regcred", "mirror"] })).spec!.template.spec!.imagePullSecrets).toEqual([
      { name: "regcred" },
      { name: "mirror" },
    ]);
  });

  it("passes a preset's runtimeClassName through, and sets none otherwise", () => {
    expect(pod.runtimeClassName).toBeUndefined();
    const gvisor = { ...DEFAULT_COMPUTE_TYPES["cpu-general"]!, runtimeClassName: "gvisor" };
    expect(buildRunJob(input({ compute: gvisor })).spec!.template.spec!.runtimeClassName).toBe("gvisor");
  });

  it.each(Object.entries(DEFAULT_COMPUTE_TYPES))("applies the %s preset", (_name, preset) => {
    const p = buildRunJob(input({ compute: preset })).spec!.template.spec!;
    expect(p.containers[0]!.resources).toEqual({ requests: preset.requests, limits: preset.limits });
    expect(p.nodeSelector).toEqual(preset.nodeSelector);
    expect(p.tolerations).toEqual(preset.tolerations);
  });
});

describe("buildRunJob with output collection", () => {
  const job = buildRunJob(
    input({
      outputCollectSeconds: 90,
      resource: { metadata: { name: `run-${spec.runId}`, namespace: "codeplane", uid: "uid-1" }, spec: { ...spec, outputPaths: ["results"] } },
    }),
  );
  const pod = job.spec!.template.spec!;
  const main = pod.containers[0]!;
  const env = Object.fromEntries(main.env!.map((e) => [e.name, e.value ?? e.valueFrom]));

  it("leaves the margin past the timeout for the runner to send the outputs, and as the grace period of a stopped pod", () => {
    expect(job.spec!.activeDeadlineSeconds).toBe(600 + 90);
    expect(pod.terminationGracePeriodSeconds).toBe(90);
  });

  it("tells the runner where outputs go, which analysed paths to add, its timeout, and the token from the run's Secret", () => {
    expect(env).toMatchObject({
      CODEPLANE_OUTPUT_DIR: "/workspace/outputs",
      CODEPLANE_OUTPUT_PATHS: '["results"]',
      CODEPLANE_OUTPUT_URL: `http://10.0.0.5:8081/internal/runs/${spec.runId}/outputs`,
      CODEPLANE_OUTPUT_TOKEN: { secretKeyRef: { name: `run-${spec.runId}`, key: OUTPUT_TOKEN_KEY, optional: false } },
      CODEPLANE_RUN_TIMEOUT_SECONDS: "600",
      CODEPLANE_OUTPUT_COLLECT_SECONDS: "90",
      CODEPLANE_POD_STARTED_FILE: "/codeplane/bin/pod-started",
    });
    // After the user's variables, so none of theirs can replace them.
    const names = main.env!.map((e) => e.name);
    expect(names.indexOf("CODEPLANE_OUTPUT_DIR")).toBeGreaterThan(names.indexOf("SEED"));
  });

  it("copies the collector beside the entrypoint and stamps the pod's start", () => {
    const tools = pod.initContainers!.find((c) => c.name === "tools")!;
    expect(tools.command!.join(" ")).toContain(OUTPUTS_IN_IMAGE);
    expect(tools.command!.join(" ")).toContain("pod-started");
  });

  it("is the Job as before without it", () => {
    const plain = buildRunJob(input());
    expect(plain.spec!.activeDeadlineSeconds).toBe(600);
    expect(plain.spec!.template.spec!.containers[0]!.env!.some((e) => e.name.startsWith("CODEPLANE_OUTPUT"))).toBe(false);
    expect(plain.spec!.template.spec!.initContainers![0]!.command!.join(" ")).not.toContain("outputs.ts");
  });
});
