import { execFile as execFileCb } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { parseAllDocuments } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { helmBinary } from "./helm-binary.ts";

// The `helm test` pod (charts/codeplane/templates/tests/), rendered: a hook
// that only `helm test` creates, outside the API pods' selector, under the
// restricted Pod Security Standard, calling the Service. test/helm/ runs it on
// the local cluster.

const execFile = promisify(execFileCb);
const root = new URL("../..", import.meta.url).pathname;
const CHART = path.join(root, "charts/codeplane");
const REQUIRED = ["--set", "database.existingSecret=db", "--set", "encryption.existingSecret=keys"];

interface Obj {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: any;
}

let helm: string;
let dir: string;

beforeAll(async () => {
  helm = await helmBinary();
  dir = mkdtempSync(path.join(tmpdir(), "codeplane-hook-"));
});
afterAll(() => dir && rmSync(dir, { recursive: true, force: true }));

async function render(args: string[] = []): Promise<Obj[]> {
  const { stdout } = await execFile(helm, ["template", "cp", CHART, "-n", "platform", ...REQUIRED, ...args], { maxBuffer: 16 * 1024 * 1024 });
  return parseAllDocuments(stdout)
    .map((d) => d.toJS() as Obj | null)
    .filter((d): d is Obj => d !== null);
}

const testPod = (docs: Obj[]) => docs.find((d) => d.metadata.annotations?.["helm.sh/hook"] === "test");
const env = (pod: Obj) =>
  Object.fromEntries((pod.spec.containers[0].env as { name: string; value?: string; valueFrom?: unknown }[]).map((e) => [e.name, e.value ?? e.valueFrom]));

describe("the helm test hook", () => {
  it("is a test hook pod, deleted once it passed, whose log helm test prints either way", async () => {
    const pod = testPod(await render())!;
    expect(pod).toBeDefined();
    expect(pod.kind).toBe("Pod");
    expect(pod.metadata.annotations).toEqual({
      "helm.sh/hook": "test",
      "helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded",
      "helm.sh/hook-output-log-policy": "hook-succeeded,hook-failed",
    });
    expect(pod.spec.restartPolicy).toBe("Never");
    // Not in what helm install applies.
    const installed = await execFile(helm, ["template", "cp", CHART, "-n", "platform", ...REQUIRED, "--skip-tests"]);
    expect(installed.stdout).not.toContain("helm.sh/hook: test");
  });

  it("is not picked by the Service, the budget or the policies of the API pods", async () => {
    const docs = await render();
    const labels = testPod(docs)!.metadata.labels!;
    const selects = (sel: Record<string, string>) => Object.entries(sel).every(([k, v]) => labels[k] === v);
    const service = docs.find((d) => d.kind === "Service")!;
    const budget = docs.find((d) => d.kind === "PodDisruptionBudget")!;
    const policy = docs.find((d) => d.kind === "NetworkPolicy" && d.metadata.namespace === "platform")!;
    const deployment = docs.find((d) => d.kind === "Deployment")!;
    for (const sel of [service.spec.selector, budget.spec.selector.matchLabels, policy.spec.podSelector.matchLabels, deployment.spec.selector.matchLabels]) {
      expect(selects(sel), JSON.stringify(sel)).toBe(false);
    }
    expect(labels).toMatchObject({
      "app.kubernetes.io/instance": "cp",
      "app.kubernetes.io/component": "test",
      "app.kubernetes.io/managed-by": "Helm",
      "app.kubernetes.io/part-of": "codeplane",
    });
  });

  it("meets the restricted Pod Security Standard and mounts no service-account token", async () => {
    const pod = testPod(await render())!;
    expect(pod.spec.automountServiceAccountToken).toBe(false);
    expect(pod.spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
    expect(pod.spec.hostNetwork ?? false).toBe(false);
    expect(pod.spec.volumes ?? []).toEqual([]);
    for (const c of pod.spec.containers) {
      expect(c.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } });
      expect(c.ports ?? []).toEqual([]);
    }
  });

  it("calls the Service's http port with the API's image; with a repository, runs with the bootstrap key", async () => {
    let pod = testPod(await render(["--set", "service.port=8088", "--set", "image.tag=1.2.3", "--set", "image.pullPolicy=Never"]))!;
    expect(env(pod)).toEqual({ CODEPLANE_URL: "http://cp-codeplane.platform.svc:8088", TEST_REPOSITORY_URL: "", TEST_REF: "", TEST_TIMEOUT_SECONDS: "300" });
    expect(pod.spec.containers[0]).toMatchObject({ image: "docker.io/library/codeplane:1.2.3", imagePullPolicy: "Never" });
    pod = testPod(
      await render([
        "--set",
        "bootstrap.existingSecret=boot",
        "--set",
        "tests.repositoryUrl=https://git.example.com/hello.git",
        "--set",
        "tests.ref=v1",
        "--set",
        "tests.timeoutSeconds=120",
      ]),
    )!;
    expect(env(pod)).toEqual({
      CODEPLANE_URL: "http://cp-codeplane.platform.svc:80",
      TEST_REPOSITORY_URL: "https://git.example.com/hello.git",
      TEST_REF: "v1",
      TEST_TIMEOUT_SECONDS: "120",
      CODEPLANE_API_KEY: { secretKeyRef: { name: "boot", key: "CODEPLANE_BOOTSTRAP_API_KEY" } },
    });
  });

  it("refuses a repository without a bootstrap key, and is left out with tests.enabled=false", async () => {
    const failure = await render(["--set", "tests.repositoryUrl=https://git.example.com/hello.git"]).then(
      () => "rendered",
      (err: { stderr?: string }) => err.stderr ?? String(err),
    );
    expect(failure).toMatch(/tests.repositoryUrl needs bootstrap.existingSecret/);
    expect(testPod(await render(["--set", "tests.enabled=false"]))).toBeUndefined();
  });

  it("runs a script node accepts", async () => {
    const pod = testPod(await render())!;
    const [node, ...args] = pod.spec.containers[0].command as string[];
    expect([node, ...args.slice(0, 2)]).toEqual(["node", "--input-type=module", "--eval"]);
    const file = path.join(dir, "script.mjs");
    writeFileSync(file, args[2]!);
    await execFile(process.execPath, ["--check", file]);
  });
});
