// The local cluster's pod network (hack/cluster/up.sh): the gateway every pod
// reaches the node through (10.244.0.1 on the bridge) keeps one MAC address
// while pods come and go. A Linux bridge whose address was never set takes the
// lowest address of its ports, so it changed whenever a pod's veth joined or
// left; a pod that had resolved the gateway before such a change sent its
// packets to an address no port had any more, and its connections to the node
// (checkouts, the package mirror) hung for 30-134 s until its ARP entry was
// probed again. Only for the project's own cluster: kind brings its own network.
import { existsSync, readFileSync } from "node:fs";
import { Writable } from "node:stream";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/until.ts";

const repoRoot = new URL("../..", import.meta.url).pathname;
const kubeconfigPath = process.env.KUBECONFIG || `${repoRoot}.cluster/kubeconfig`;
const RUNNER_IMAGE = process.env.CODEPLANE_RUNNER_IMAGE ?? "codeplane-runner:dev";
const BRIDGE = process.env.BRIDGE_NAME ?? "cp-br0";
const GATEWAY = process.env.CODEPLANE_CLUSTER_GIT_HOST ?? "10.244.0.1";
const GIT_PORT = Number(process.env.GIT_PORT ?? 9418);
const sysfs = (file: string) => readFileSync(`/sys/class/net/${BRIDGE}/${file}`, "utf8").trim();
const ownCluster = existsSync(`/sys/class/net/${BRIDGE}`);

const kc = new k8s.KubeConfig();
let core: k8s.CoreV1Api;
const namespace = `cp-bridge-${Date.now().toString(36)}`;

function pod(name: string, script: string): k8s.V1Pod {
  return {
    metadata: { name },
    spec: {
      restartPolicy: "Never",
      automountServiceAccountToken: false,
      securityContext: { runAsNonRoot: true, runAsUser: 10001, seccompProfile: { type: "RuntimeDefault" } },
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: "main",
          image: RUNNER_IMAGE,
          imagePullPolicy: "Never",
          command: ["sh", "-c", script],
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
        },
      ],
    },
  };
}

const phase = async (name: string) => (await core.readNamespacedPod({ name, namespace })).status?.phase;
const running = (name: string) => until(`pod ${name} running`, 120_000, async () => ((await phase(name)) === "Running" ? true : undefined));

/** The gateway's MAC address in the pod's ARP table, read after it connected to the node's git daemon. */
async function gatewayMacSeenBy(name: string): Promise<string> {
  return until(`${name} to resolve the gateway`, 120_000, async () => {
    const exec = new k8s.Exec(kc);
    let out = "";
    const sink = new Writable({
      write(chunk, _enc, done) {
        out += String(chunk);
        done();
      },
    });
    await new Promise<void>((resolve, reject) => {
      exec
        .exec(namespace, name, "main", ["sh", "-c", `awk '$1 == "${GATEWAY}" { print $4 }' /proc/net/arp`], sink, null, null, false, () => resolve())
        .catch(reject);
    });
    const mac = out.trim();
    return /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/.test(mac) && mac !== "00:00:00:00:00:00" ? mac : undefined;
  });
}

beforeAll(async () => {
  if (!ownCluster) return;
  kc.loadFromFile(kubeconfigPath);
  core = kc.makeApiClient(k8s.CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  await until("the default service account", 30_000, async () => (await core.readNamespacedServiceAccount({ name: "default", namespace })) ?? undefined);
});

afterAll(async () => {
  if (core) await core.deleteNamespace({ name: namespace }).catch(() => undefined);
});

describe.skipIf(!ownCluster)("the pod network's gateway", () => {
  it("is a bridge whose address was set, so the kernel never replaces it with a port's", () => {
    // 3 = NET_ADDR_SET (include/uapi/linux/netdevice.h); 1 (random) and 2 (stolen) follow the ports
    expect(sysfs("addr_assign_type")).toBe("3");
  });

  it("keeps the MAC address pods resolved while other pods' veths join and leave", async () => {
    const before = sysfs("address");
    // A long-lived pod resolves the gateway by connecting to the node's git daemon.
    const probe = `until (exec 3<>/dev/tcp/${GATEWAY}/${GIT_PORT}) 2>/dev/null; do sleep 1; done; exec sleep 600`;
    await core.createNamespacedPod({ namespace, body: pod("watcher", `exec bash -c '${probe}'`) });
    await running("watcher");
    expect(await gatewayMacSeenBy("watcher")).toBe(before);

    const seen = new Set([before]);
    for (let i = 0; i < 4; i++) {
      const name = `churn-${i}`;
      await core.createNamespacedPod({ namespace, body: pod(name, "exec sleep 600") });
      await running(name);
      seen.add(sysfs("address"));
      await core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 });
      await until(`pod ${name} gone`, 120_000, async () => {
        try {
          await core.readNamespacedPod({ name, namespace });
          return undefined;
        } catch {
          return true;
        }
      });
      seen.add(sysfs("address"));
    }
    expect([...seen]).toEqual([before]);
    expect(await gatewayMacSeenBy("watcher")).toBe(before);
  });
});
