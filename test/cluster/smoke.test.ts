// Smoke test of the local cluster (docs/local-cluster.md): a Job running the
// runner image is scheduled by the real scheduler, its pod is created by the
// Job controller and started by kubelet/containerd, its logs are followed
// through the pod log API while it runs, its failure is reported in the Job's
// conditions, and deleting the Job garbage-collects the pod.
import { execFile as execFileCb } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { promisify } from "node:util";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/until.ts";

const repoRoot = new URL("../..", import.meta.url).pathname;
const kubeconfigPath = process.env.KUBECONFIG || `${repoRoot}.cluster/kubeconfig`;
const RUNNER_IMAGE = process.env.CODEPLANE_RUNNER_IMAGE ?? "codeplane-runner:dev";
const NO_CLUSTER = "Run `make cluster-up` (or `make kind-up`) first, or point KUBECONFIG at a cluster.";

const GIT_HOST = process.env.CODEPLANE_CLUSTER_GIT_HOST ?? "10.244.0.1";
const execFile = promisify(execFileCb);

const kc = new k8s.KubeConfig();
let core: k8s.CoreV1Api;
let batch: k8s.BatchV1Api;
const namespace = `cp-smoke-${Date.now().toString(36)}`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function jobPods(name: string): Promise<k8s.V1Pod[]> {
  const list = await core.listNamespacedPod({ namespace, labelSelector: `job-name=${name}` });
  return list.items;
}

beforeAll(async () => {
  if (!existsSync(kubeconfigPath)) {
    throw new Error(`No cluster: kubeconfig ${kubeconfigPath} does not exist. ${NO_CLUSTER}`);
  }
  kc.loadFromFile(kubeconfigPath);
  core = kc.makeApiClient(k8s.CoreV1Api);
  batch = kc.makeApiClient(k8s.BatchV1Api);
  let nodes: k8s.V1NodeList;
  try {
    nodes = await Promise.race([core.listNode(), sleep(10_000).then(() => Promise.reject(new Error("no answer in 10 s")))]);
  } catch (err) {
    throw new Error(`No cluster reachable at ${kc.getCurrentCluster()?.server} (kubeconfig ${kubeconfigPath}): ${String(err)}. ${NO_CLUSTER}`, { cause: err });
  }
  const ready = nodes.items.filter((n) => n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"));
  if (ready.length === 0) throw new Error(`The cluster has no Ready node. ${NO_CLUSTER}`);
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  // pods need the namespace's default service account, created asynchronously
  await until("the default service account", 30_000, async () => (await core.readNamespacedServiceAccount({ name: "default", namespace })) ?? undefined);
});

afterAll(async () => {
  if (core) await core.deleteNamespace({ name: namespace }).catch(() => undefined);
});

describe("local cluster", () => {
  it("runs a Job, follows its logs while it runs, reports its failure and garbage-collects its pod", async () => {
    const name = "smoke";
    const script = [
      "echo out-1",
      "echo err-1 >&2",
      "python3 -c 'import sys; print(\"python\", sys.version_info[0])'",
      'node -e \'console.log("node " + process.versions.node.split(".")[0])\'',
      "git --version >/dev/null && echo git-ok",
      "echo uid=$(id -u)",
      "sleep 4",
      "echo out-2",
      "echo err-2 >&2",
      "exit 3",
    ].join("; ");
    await batch.createNamespacedJob({
      namespace,
      body: {
        metadata: { name },
        spec: {
          backoffLimit: 0,
          template: {
            spec: {
              restartPolicy: "Never",
              terminationGracePeriodSeconds: 1,
              automountServiceAccountToken: false,
              containers: [{ name: "main", image: RUNNER_IMAGE, imagePullPolicy: "Never", command: ["sh", "-c", script] }],
            },
          },
        },
      },
    });

    // the Job controller creates the pod; wait until its container has started
    const pod = await until("the Job's pod to start", 90_000, async () => {
      const pods = await jobPods(name);
      const p = pods[0];
      const cs = p?.status?.containerStatuses?.[0];
      const waiting = cs?.state?.waiting;
      if (waiting && ["ErrImageNeverPull", "CreateContainerError", "CreateContainerConfigError"].includes(waiting.reason ?? "")) {
        throw new Error(`container cannot start: ${waiting.reason}: ${waiting.message}`);
      }
      return cs?.state?.running || cs?.state?.terminated ? p : undefined;
    });
    const podName = pod.metadata!.name!;
    const wasRunning = Boolean(pod.status?.containerStatuses?.[0]?.state?.running);

    // follow the logs through the API while the container runs
    const chunks: string[] = [];
    const done = new Promise<void>((resolve, reject) => {
      const sink = new Writable({
        write(chunk, _enc, cb) {
          chunks.push(chunk.toString());
          cb();
        },
      });
      sink.on("finish", () => resolve());
      sink.on("error", reject);
      new k8s.Log(kc).log(namespace, podName, "main", sink, { follow: true }).catch(reject);
    });
    await until("the first log line while following", 30_000, async () => (chunks.join("").includes("out-1") ? true : undefined));
    const now = await core.readNamespacedPod({ name: podName, namespace });
    const followedWhileRunning = Boolean(now.status?.containerStatuses?.[0]?.state?.running);
    await Promise.race([done, sleep(60_000).then(() => Promise.reject(new Error("log follow did not end")))]);
    const logs = chunks.join("");
    expect(logs).toContain("out-1");
    expect(logs).toContain("err-1");
    expect(logs).toContain("python 3");
    expect(logs).toContain("node 24");
    expect(logs).toContain("git-ok");
    expect(logs).toContain("uid=10001");
    expect(logs).toContain("out-2");
    expect(logs).toContain("err-2");
    expect(wasRunning || followedWhileRunning).toBe(true);

    // the Job fails (backoffLimit 0) and the container's exit code is 3
    const failed = await until("the Job's Failed condition", 60_000, async () => {
      const job = await batch.readNamespacedJob({ name, namespace });
      return job.status?.conditions?.find((c) => c.type === "Failed" && c.status === "True");
    });
    expect(failed.reason).toBe("BackoffLimitExceeded");
    const finished = await core.readNamespacedPod({ name: podName, namespace });
    expect(finished.status?.phase).toBe("Failed");
    expect(finished.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(3);

    // PodLogsQuerySplitStreams: stdout and stderr can be read separately
    const stderr = await core.readNamespacedPodLog({ name: podName, namespace, container: "main", stream: "Stderr" });
    expect(stderr).toContain("err-1");
    expect(stderr).not.toContain("out-1");
    const stdout = await core.readNamespacedPodLog({ name: podName, namespace, container: "main", stream: "Stdout" });
    expect(stdout).toContain("out-2");
    expect(stdout).not.toContain("err-2");

    // deleting the Job garbage-collects its pod
    await batch.deleteNamespacedJob({ name, namespace, propagationPolicy: "Background" });
    await until("the Job's pod to be garbage-collected", 60_000, async () => ((await jobPods(name)).length === 0 ? true : undefined));
    await expect(batch.readNamespacedJob({ name, namespace })).rejects.toThrow();
  });

  it("serves fixture repositories to pods from the node's git daemon", async (ctx) => {
    const reachable = await new Promise<boolean>((resolve) => {
      const sock = connect({ host: GIT_HOST, port: 9418, timeout: 2000 }, () => {
        sock.destroy();
        resolve(true);
      });
      sock.on("error", () => resolve(false));
      sock.on("timeout", () => {
        sock.destroy();
        resolve(false);
      });
    });
    // only the Docker-free cluster (make cluster-up) runs a git daemon; kind does not
    if (!reachable) ctx.skip(`no git daemon at ${GIT_HOST}:9418 (only \`make cluster-up\` starts one)`);

    const dir = mkdtempSync(join(tmpdir(), "cp-smoke-fixture-"));
    try {
      writeFileSync(join(dir, "main.py"), 'print("fixture says hi")\n');
      const name = `smoke-${Date.now().toString(36)}`;
      const { stdout } = await execFile(`${repoRoot}hack/cluster/git-publish.sh`, [dir, name]);
      const url = stdout.trim().split("\n").pop()!;
      expect(url).toBe(`git://${GIT_HOST}/${name}`);

      await batch.createNamespacedJob({
        namespace,
        body: {
          metadata: { name: "clone" },
          spec: {
            backoffLimit: 0,
            template: {
              spec: {
                restartPolicy: "Never",
                automountServiceAccountToken: false,
                securityContext: { runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: "RuntimeDefault" } },
                volumes: [{ name: "work", emptyDir: {} }],
                containers: [
                  {
                    name: "main",
                    image: RUNNER_IMAGE,
                    imagePullPolicy: "Never",
                    command: ["sh", "-c", `git clone -q ${url} /work/src && python3 /work/src/main.py`],
                    securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } },
                    volumeMounts: [{ name: "work", mountPath: "/work" }],
                  },
                ],
              },
            },
          },
        },
      });
      const done = await until("the clone Job to finish", 90_000, async () => {
        const job = await batch.readNamespacedJob({ name: "clone", namespace });
        return job.status?.conditions?.find((c) => (c.type === "Complete" || c.type === "Failed") && c.status === "True");
      });
      const pod = (await jobPods("clone"))[0]!;
      const logs = await core.readNamespacedPodLog({ name: pod.metadata!.name!, namespace, container: "main" });
      expect(done.type, logs).toBe("Complete");
      expect(logs).toContain("fixture says hi");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
