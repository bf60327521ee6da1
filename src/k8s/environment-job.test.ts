import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_COMPUTE_TYPES } from "../resources/compute-types.ts";
import {
  BUILD_POD_ATTEMPTS,
  buildEnvironmentJob,
  environmentSecret,
  INSTALL_WRAPPER,
  installScript,
  shellQuote,
  UPLOAD_TOKEN_KEY,
  type EnvironmentBuildInput,
} from "./environment-job.ts";

const ID = "0190b1c2-3d4e-7f00-8a1b-2c3d4e5f6a7b";
const input: EnvironmentBuildInput = {
  environmentId: ID,
  accountId: "0190b1c2-0000-7000-8000-000000000001",
  repositoryId: "0190b1c2-0000-7000-8000-000000000002",
  commitHash: "a".repeat(40),
  key: "f".repeat(64),
  image: "codeplane-python-next:dev",
  steps: [
    { name: "python venv", run: 'python3 -m venv --system-site-packages "$CODEPLANE_ENV_DIR/python"' },
    { name: "pip install -r requirements.txt", run: "pip install --no-input -r requirements.txt" },
  ],
  cachePaths: ["node_modules"],
  namespace: "codeplane",
  compute: DEFAULT_COMPUTE_TYPES["cpu-general"]!,
  timeoutSeconds: 1800,
  ttlSecondsAfterFinished: 3600,
  checkout: {
    gitUrl: "http://10.0.0.5:8081/git/r.git",
    secretName: `environment-${ID}`,
    egress: "restricted",
    preprocessEnv: { PIP_INDEX_URL: "http://mirror/simple/" },
  },
  internalUrl: "http://10.0.0.5:8081",
  images: { runner: "codeplane-runner:dev", codeplane: "codeplane:dev", pullPolicy: "IfNotPresent" },
};

describe("buildEnvironmentJob", () => {
  const job = buildEnvironmentJob(input);
  const pod = job.spec!.template.spec!;
  const byName = Object.fromEntries([...pod.initContainers!, ...pod.containers].map((c) => [c.name, c]));

  it("checks out, installs in the environment's image, then saves in codeplane's", () => {
    expect(job.metadata!.name).toBe(`environment-${ID}`);
    expect(pod.initContainers!.map((c) => [c.name, c.image])).toEqual([
      ["checkout", "codeplane-runner:dev"],
      ["install", "codeplane-python-next:dev"],
    ]);
    expect(pod.containers.map((c) => [c.name, c.image, c.command])).toEqual([
      ["main", "codeplane:dev", ["/usr/local/bin/node", "/app/packages/runner/src/environment-archive.ts", "save"]],
    ]);
    expect(job.spec!.activeDeadlineSeconds).toBe(1800);
  });

  it("tries a failed checkout again in a new pod, twice, and never a failed install or save (the key's own failures)", () => {
    expect(job.spec!.backoffLimit).toBe(BUILD_POD_ATTEMPTS - 1);
    const rules = job.spec!.podFailurePolicy!.rules;
    const failJob = rules.filter((r) => r.action === "FailJob").map((r) => r.onExitCodes);
    expect(failJob).toEqual([
      { containerName: "install", operator: "NotIn", values: [0] },
      { containerName: "main", operator: "NotIn", values: [0] },
    ]);
    // The API server refuses a rule naming a container the pod does not have: every name is one of its.
    for (const code of failJob) expect(Object.keys(byName)).toContain(code!.containerName);
    expect(rules.find((r) => r.action === "Ignore")?.onPodConditions).toEqual([{ type: "DisruptionTarget", status: "True" }]);
    expect(pod.restartPolicy).toBe("Never");
  });

  it("is a workload pod the egress policy selects, non-root with no service-account token", () => {
    expect(job.spec!.template.metadata!.labels).toMatchObject({ "app.kubernetes.io/component": "environment", "codeplane.dev/environment": ID });
    expect(pod.automountServiceAccountToken).toBe(false);
    for (const c of Object.values(byName))
      expect(c.securityContext).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
  });

  it("runs the save, which holds the upload token, with no workspace directory on its PATH (the install wrote there)", () => {
    const path = byName.main!.env!.find((e) => e.name === "PATH")!.value!;
    expect(path.split(":").some((d) => d.startsWith("/workspace"))).toBe(false);
    expect(byName.install!.env!.find((e) => e.name === "PATH")!.value).toMatch(/^\/workspace\/env\/python\/bin:/);
  });

  it("gives each token to one container: the checkout token to checkout, the upload token to save, none to the install", () => {
    const holders = (key: string) =>
      Object.values(byName)
        .filter((c) => JSON.stringify(c.env).includes(key))
        .map((c) => c.name);
    expect(holders("codeplane-checkout-token")).toEqual(["checkout"]);
    expect(holders(UPLOAD_TOKEN_KEY)).toEqual(["main"]);
    expect(byName.install!.env!.some((e) => e.valueFrom)).toBe(false);
  });

  it("gives the install the mirror's variables and the egress mode, and the save where to store and what to keep", () => {
    expect(byName.install!.env).toEqual(
      expect.arrayContaining([
        { name: "PIP_INDEX_URL", value: "http://mirror/simple/" },
        { name: "CODEPLANE_RUN_EGRESS", value: "restricted" },
      ]),
    );
    expect(byName.main!.env).toEqual(
      expect.arrayContaining([
        { name: "CODEPLANE_ARCHIVE_URL", value: `http://10.0.0.5:8081/internal/environments/${ID}/archive` },
        { name: "CODEPLANE_CACHE_PATHS", value: '["node_modules"]' },
      ]),
    );
  });

  it("runs the install script through the wrapper that keeps its output for the save container", () => {
    expect(byName.install!.command).toEqual(["sh", "-c", INSTALL_WRAPPER]);
    expect(byName.install!.env).toEqual(
      expect.arrayContaining([
        { name: "CODEPLANE_INSTALL_SCRIPT", value: installScript(input.steps) },
        { name: "CODEPLANE_SETUP_LOG", value: "/workspace/setup.log" },
      ]),
    );
    expect(byName.main!.env).toContainEqual({ name: "CODEPLANE_SETUP_LOG", value: "/workspace/setup.log" });
  });

  it("keeps both tokens in a Secret named like the Job", () => {
    const secret = environmentSecret({ name: `environment-${ID}`, namespace: "codeplane", labels: {} }, { checkout: "cpg_x", upload: "cpu_y" });
    expect(secret.stringData).toEqual({ "codeplane-checkout-token": "cpg_x", [UPLOAD_TOKEN_KEY]: "cpu_y" });
  });
});

describe("the install wrapper", () => {
  const wrap = (script: string) => {
    const dir = mkdtempSync(path.join(tmpdir(), "wrapper-"));
    const log = path.join(dir, "setup.log");
    try {
      const out = execFileSync("sh", ["-c", INSTALL_WRAPPER], {
        env: { PATH: process.env.PATH, CODEPLANE_INSTALL_SCRIPT: script, CODEPLANE_SETUP_LOG: log },
        stdio: "pipe",
      });
      return { code: 0, out: out.toString(), log: readFileSync(log, "utf8") };
    } catch (e) {
      const err = e as { status: number; stdout: Buffer };
      return { code: err.status, out: err.stdout.toString(), log: readFileSync(log, "utf8") };
    }
  };
  it("passes the script's exit status through the pipe, and keeps stdout and stderr in the log and the pod log", () => {
    expect(wrap("echo out; echo err >&2; exit 7")).toEqual({ code: 7, out: "out\nerr\n", log: "out\nerr\n" });
    expect(wrap("echo fine")).toEqual({ code: 0, out: "fine\n", log: "fine\n" });
  });
});

describe("installScript", () => {
  const run = (steps: { name: string; run: string }[]) => {
    const dir = mkdtempSync(path.join(tmpdir(), "install-"));
    const script = path.join(dir, "install.sh");
    writeFileSync(script, installScript(steps));
    try {
      const out = execFileSync("sh", [script], {
        env: { ...process.env, CODEPLANE_SOURCE_DIR: dir, CODEPLANE_ENV_DIR: `${dir}/env`, CODEPLANE_RUN_EGRESS: "restricted" },
        stdio: "pipe",
      });
      return { code: 0, out: out.toString() };
    } catch (e) {
      const err = e as { status: number; stdout: Buffer; stderr: Buffer };
      return { code: err.status, out: err.stdout.toString() + err.stderr.toString() };
    }
  };

  it("runs each step in order in the checkout, announcing it", () => {
    const r = run([
      { name: "one", run: "echo first > order.txt" },
      { name: "two's", run: "echo 'second' >> order.txt; cat order.txt" },
    ]);
    expect(r.code).toBe(0);
    expect(r.out).toBe("==> [1/2] one\n==> [2/2] two's\nfirst\nsecond\n==> environment installed\n");
  });

  it("stops at the first failing step, naming it and its exit code, with the mirror hint under restricted egress", () => {
    const r = run([
      { name: "fails", run: "echo 'ERROR: No matching distribution found for nonexistent-pkg==9' >&2; exit 3" },
      { name: "never", run: "echo never" },
    ]);
    expect(r.code).toBe(1);
    expect(r.out).toContain("environment build failed in step: [1/2] fails (exit code 3)");
    expect(r.out).toContain("CODEPLANE_RUN_EGRESS_ALLOW");
    expect(r.out).not.toContain("never\n");
  });

  it("keeps a step's text one word whatever quotes it holds", () => {
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    const r = run([{ name: "quotes", run: `printf '%s\\n' "a 'b' \\"c\\""` }]);
    expect(r.out).toContain(`a 'b' "c"`);
  });

  it("fails a step on an unset variable (sh -eu)", () => {
    expect(run([{ name: "unset", run: "echo $NOT_SET_ANYWHERE" }]).code).toBe(1);
  });

  it("is the same text for the same steps", () => {
    expect(installScript(input.steps)).toBe(installScript(input.steps));
  });
});
