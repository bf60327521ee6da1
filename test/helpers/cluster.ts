import { execFile as execFileCb } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { promisify } from "node:util";
import * as k8s from "@kubernetes/client-node";
import { applyCrds } from "../../src/k8s/install.ts";
import { mirrorSettings } from "./mirror.ts";

// Access to the test cluster for end-to-end tests: a fresh namespace per test
// file, the CRDs applied, and fixture repositories published to the
// cluster's git daemon so pods can clone them.

const execFile = promisify(execFileCb);
const root = new URL("../..", import.meta.url).pathname;
export const KUBECONFIG = process.env.KUBECONFIG || `${root}.cluster/kubeconfig`;
/** The local cluster's node address (hack/cluster/lib.sh POD_GATEWAY): where pods reach processes on this machine. */
export const NODE_ADDRESS = process.env.CODEPLANE_TEST_NODE_ADDRESS || "10.244.0.1";

/**
 * A service on this machine serving pods' checkouts: its git listener on the
 * node address (the internal URL is derived from it). A fixed `port` keeps
 * the URL valid across restarts of the service.
 */
export const gitListenerEnv = (port = 0): Record<string, string> => ({ CODEPLANE_GIT_HOST: NODE_ADDRESS, CODEPLANE_GIT_PORT: String(port) });
/**
 * The package mirror on the node (hack/cluster/mirror.sh, started by cluster-up): `MIRROR.pypi`,
 * `MIRROR.npm`, `MIRROR.go` (a GOPROXY), and what a run needs to install through it, the same values `make dev` passes:
 * `MIRROR.egressAllow` (CODEPLANE_RUN_EGRESS_ALLOW) and `MIRROR.preprocessEnv` (CODEPLANE_RUN_PREPROCESS_ENV, as an object).
 */
export const MIRROR = mirrorSettings(NODE_ADDRESS);
const NO_CLUSTER = "Run `make cluster-up` (or `make kind-up`) first, or point KUBECONFIG at a cluster.";

export interface TestCluster {
  kubeconfig: string;
  namespace: string;
  kc: k8s.KubeConfig;
  core: k8s.CoreV1Api;
  batch: k8s.BatchV1Api;
  custom: k8s.CustomObjectsApi;
  /** Publishes a bare repository to the git daemon; returns the git:// URL pods clone. */
  publish(repoPath: string, name: string): Promise<string>;
  cleanup(): Promise<void>;
}

export async function openTestCluster(prefix: string): Promise<TestCluster> {
  if (!existsSync(KUBECONFIG)) throw new Error(`No cluster: ${KUBECONFIG} does not exist. ${NO_CLUSTER}`);
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(KUBECONFIG);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  try {
    await core.listNamespace({ limit: 1 });
  } catch (err) {
    throw new Error(`No cluster reachable at ${kc.getCurrentCluster()?.server}: ${String(err)}. ${NO_CLUSTER}`, { cause: err });
  }
  await applyCrds(kc);
  const namespace = `${prefix}-${randomBytes(4).toString("hex")}`;
  await core.createNamespace({ body: { metadata: { name: namespace, labels: { "app.kubernetes.io/managed-by": "codeplane-tests" } } } });
  return {
    kubeconfig: KUBECONFIG,
    namespace,
    kc,
    core,
    batch: kc.makeApiClient(k8s.BatchV1Api),
    custom: kc.makeApiClient(k8s.CustomObjectsApi),
    async publish(repoPath, name) {
      const { stdout } = await execFile(`${root}hack/cluster/git-publish.sh`, [repoPath, name]);
      return stdout.trim().split("\n").pop()!;
    },
    async cleanup() {
      await core.deleteNamespace({ name: namespace, propagationPolicy: "Background" }).catch(() => undefined);
    },
  };
}

// Shared polling and error descriptions, here too for the suites that import them with the cluster.
export { until } from "./until.ts";
export { describeError } from "./describe-error.ts";
