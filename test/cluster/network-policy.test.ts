// NetworkPolicy enforcement on the local cluster (docs/local-cluster.md, "NetworkPolicy").
// Run and analysis pods are codeplane's security boundary: their egress is limited by a
// NetworkPolicy. On this cluster the API server, kubelet, git daemon, test databases and
// codeplane itself are processes of the node, reached by pods at the node address: that
// traffic goes through the node's INPUT path, not FORWARD, and must obey the policy too.
//
// Pods in a throw-away namespace probe TCP ports from their first instant (policies exist
// before the pods start, so a pod's first packets are covered too), each target in parallel,
// retrying with short timeouts for a few seconds, and print what connected:
//   restricted  default-deny egress but TCP to <node>/32 on one port served by this test
//   open        no policy: reaches the node's ports and other pods
//   client      no policy, allowed by the ingress policy of `guarded`
// Targets: the allowed port and another port served by this test on the node address, the
// kubelet, the API server port, the git daemon, a pod without policy, a pod whose ingress only
// admits `client` pods.
// NETWORK RULE: traffic goes only to the node address and the pod network, never elsewhere.
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { connect, createServer, type Server } from "node:net";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const repoRoot = new URL("../..", import.meta.url).pathname;
const kubeconfigPath = process.env.KUBECONFIG || `${repoRoot}.cluster/kubeconfig`;
const RUNNER_IMAGE = process.env.CODEPLANE_RUNNER_IMAGE ?? "codeplane-runner:dev";
const NODE_IP = process.env.CODEPLANE_CLUSTER_NODE_IP ?? "10.244.0.1";
const BRIDGE = process.env.BRIDGE_NAME ?? "cp-br0";
const KUBELET_PORT = Number(process.env.KUBELET_PORT ?? 10250);
const APISERVER_PORT = Number(process.env.APISERVER_PORT ?? 6443);
const GIT_PORT = Number(process.env.GIT_PORT ?? 9418);
const POD_PORT = 8080;
const PROBE_SECONDS = 6; // each target is tried for this long from the pod's start
const ATTEMPT_TIMEOUT = 1.5; // seconds per connection attempt (denied packets may be dropped)
const NO_CLUSTER = "Run `make cluster-up` first, or point KUBECONFIG at a cluster.";

const kc = new k8s.KubeConfig();
let core: k8s.CoreV1Api;
let net: k8s.NetworkingV1Api;
const namespace = `cp-netpol-${Date.now().toString(36)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await sleep(500);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ""}`);
}

// TCP servers of this test on the node address; each remembers who connected.
interface HostServer {
  server: Server;
  port: number;
  peers: string[];
}
async function serveOnNode(): Promise<HostServer> {
  const peers: string[] = [];
  const server = createServer((sock) => {
    peers.push(sock.remoteAddress ?? "?");
    sock.on("error", () => undefined); // probes close at once
    sock.end("hello\n");
  });
  server.listen(0, NODE_IP);
  await once(server, "listening");
  const addr = server.address();
  if (!addr || typeof addr === "string") throw new Error("no address");
  return { server, port: addr.port, peers };
}

async function hostCanConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ host: NODE_IP, port, timeout: 2000 }, () => {
      sock.destroy();
      resolve(true);
    });
    sock.on("error", () => resolve(false));
    sock.on("timeout", () => {
      sock.destroy();
      resolve(false);
    });
  });
}

// Tries every target in parallel from the pod's start for PROBE_SECONDS; a target is done
// once it connected. Prints one JSON line: {target: {connected, outcomes}}.
const PROBE_SCRIPT = `
import json, socket, sys, threading, time
targets = sys.argv[1:]
result = {}
def probe(t):
    host, port = t.rsplit(":", 1)
    outcomes = []
    deadline = time.time() + ${PROBE_SECONDS}
    connected = False
    while time.time() < deadline and not connected:
        s = socket.socket()
        s.settimeout(${ATTEMPT_TIMEOUT})
        try:
            s.connect((host, int(port)))
            connected = True
            outcomes.append("connected")
        except socket.timeout:
            outcomes.append("timeout")
        except OSError as e:
            outcomes.append(e.strerror or str(e))
            time.sleep(0.2)
        finally:
            s.close()
    result[t] = {"connected": connected, "outcomes": outcomes}
threads = [threading.Thread(target=probe, args=(t,)) for t in targets]
for th in threads: th.start()
for th in threads: th.join()
print("RESULT " + json.dumps(result), flush=True)
`;

const podSecurity = {
  runAsNonRoot: true,
  runAsUser: 10001,
  seccompProfile: { type: "RuntimeDefault" },
};
const containerSecurity = { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } };

function podBody(name: string, labels: Record<string, string>, command: string[], readinessPort?: number): k8s.V1Pod {
  return {
    metadata: { name, labels },
    spec: {
      restartPolicy: "Never",
      terminationGracePeriodSeconds: 0,
      automountServiceAccountToken: false,
      securityContext: podSecurity,
      containers: [
        {
          name: "main",
          image: RUNNER_IMAGE,
          imagePullPolicy: "Never",
          command,
          securityContext: containerSecurity,
          ...(readinessPort
            ? { readinessProbe: { tcpSocket: { port: readinessPort }, periodSeconds: 1 } as k8s.V1Probe }
            : {}),
        },
      ],
    },
  };
}

type Results = Record<string, { connected: boolean; outcomes: string[] }>;

async function runProbe(name: string, labels: Record<string, string>, targets: string[]): Promise<{ results: Results; ip: string }> {
  await core.createNamespacedPod({ namespace, body: podBody(name, labels, ["python3", "-c", PROBE_SCRIPT, ...targets]) });
  const pod = await until(`probe pod ${name} to finish`, 120_000, async () => {
    const p = await core.readNamespacedPod({ name, namespace });
    const waiting = p.status?.containerStatuses?.[0]?.state?.waiting;
    if (waiting && ["ErrImageNeverPull", "CreateContainerError", "CreateContainerConfigError"].includes(waiting.reason ?? "")) {
      throw new Error(`container cannot start: ${waiting.reason}: ${waiting.message}`);
    }
    return p.status?.phase === "Succeeded" || p.status?.phase === "Failed" ? p : undefined;
  });
  const logs = await core.readNamespacedPodLog({ name, namespace, container: "main" });
  const line = logs.split("\n").find((l) => l.startsWith("RESULT "));
  if (pod.status?.phase !== "Succeeded" || !line) throw new Error(`probe pod ${name} ${pod.status?.phase}: ${logs}`);
  return { results: JSON.parse(line.slice("RESULT ".length)) as Results, ip: pod.status?.podIP ?? "" };
}

let skipReason: string | undefined;
let allowedServer: HostServer | undefined;
let otherServer: HostServer | undefined;
let target = "";
let guarded = "";

beforeAll(async () => {
  if (!existsSync(kubeconfigPath)) throw new Error(`No cluster: kubeconfig ${kubeconfigPath} does not exist. ${NO_CLUSTER}`);
  kc.loadFromFile(kubeconfigPath);
  core = kc.makeApiClient(k8s.CoreV1Api);
  net = kc.makeApiClient(k8s.NetworkingV1Api);
  try {
    await Promise.race([core.listNode(), sleep(10_000).then(() => Promise.reject(new Error("no answer in 10 s")))]);
  } catch (err) {
    throw new Error(`No cluster reachable at ${kc.getCurrentCluster()?.server}: ${String(err)}. ${NO_CLUSTER}`);
  }
  // The test serves ports on the node address: only possible on the node itself (make cluster-up).
  try {
    allowedServer = await serveOnNode();
    otherServer = await serveOnNode();
  } catch (err) {
    skipReason = `cannot listen on the node address ${NODE_IP} (${String(err)}): only the \`make cluster-up\` cluster runs on this machine`;
    return;
  }

  await core.createNamespace({ body: { metadata: { name: namespace } } });
  await until("the default service account", 30_000, async () =>
    (await core.readNamespacedServiceAccount({ name: "default", namespace })) ?? undefined,
  );
  await net.createNamespacedNetworkPolicy({
    namespace,
    body: {
      metadata: { name: "restricted-egress" },
      spec: {
        podSelector: { matchLabels: { role: "restricted" } },
        policyTypes: ["Egress"],
        egress: [{ to: [{ ipBlock: { cidr: `${NODE_IP}/32` } }], ports: [{ protocol: "TCP", port: allowedServer.port }] }],
      },
    },
  });
  await net.createNamespacedNetworkPolicy({
    namespace,
    body: {
      metadata: { name: "guarded-ingress" },
      spec: {
        podSelector: { matchLabels: { role: "guarded" } },
        policyTypes: ["Ingress"],
        // the client library names the `from` field `_from`
        ingress: [{ _from: [{ podSelector: { matchLabels: { role: "client" } } }], ports: [{ protocol: "TCP", port: POD_PORT }] }],
      },
    },
  });
  const server = ["python3", "-c", `import http.server as h; h.HTTPServer(("", ${POD_PORT}), h.SimpleHTTPRequestHandler).serve_forever()`];
  await core.createNamespacedPod({ namespace, body: podBody("target", { role: "target" }, server, POD_PORT) });
  await core.createNamespacedPod({ namespace, body: podBody("guarded", { role: "guarded" }, server, POD_PORT) });
  const ready = async (name: string) =>
    until(`pod ${name} to be ready`, 90_000, async () => {
      const p = await core.readNamespacedPod({ name, namespace });
      return p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ? p.status?.podIP : undefined;
    });
  target = await ready("target");
  guarded = await ready("guarded");
}, 150_000);

afterAll(async () => {
  allowedServer?.server.close();
  otherServer?.server.close();
  if (core && !skipReason) await core.deleteNamespace({ name: namespace }).catch(() => undefined);
});

describe("NetworkPolicy on the local cluster", () => {
  it("applies a pod's egress policy to the node's own ports, to other pods, and from the pod's first packet; pods without policy reach everything", async (ctx) => {
    if (skipReason) ctx.skip(skipReason);
    const allowed = `${NODE_IP}:${allowedServer!.port}`;
    const other = `${NODE_IP}:${otherServer!.port}`;
    const kubelet = `${NODE_IP}:${KUBELET_PORT}`;
    const apiserver = `${NODE_IP}:${APISERVER_PORT}`;
    const git = `${NODE_IP}:${GIT_PORT}`;
    const pod = `${target}:${POD_PORT}`;
    const targets = [allowed, other, kubelet, apiserver, git, pod];

    const [r, o] = await Promise.all([
      runProbe("restricted", { role: "restricted" }, targets),
      runProbe("open", { role: "open" }, targets),
    ]);
    const show = (x: Results) => JSON.stringify(x);

    // the one port the policy allows
    expect(r.results[allowed]?.connected, show(r.results)).toBe(true);
    // everything else on the node, and other pods: never, not even in the pod's first instant
    for (const t of [other, kubelet, apiserver, git, pod]) {
      expect(r.results[t]?.connected, `restricted pod reached ${t}: ${show(r.results)}`).toBe(false);
    }
    // the node's side agrees: the other port never saw the restricted pod
    expect(otherServer!.peers).not.toContain(r.ip);
    expect(allowedServer!.peers).toContain(r.ip);

    // without a policy: the node's ports (what the e2e tests rely on: git daemon, codeplane on the node) and pods
    for (const t of [allowed, other, kubelet, git, pod]) {
      expect(o.results[t]?.connected, `open pod did not reach ${t}: ${show(o.results)}`).toBe(true);
    }
    expect(otherServer!.peers).toContain(o.ip);
    // The API server listens on the node address only if configured to (by default it is on
    // 127.0.0.1, which pods cannot reach): then the open pod must get through as well.
    if (await hostCanConnect(APISERVER_PORT)) {
      expect(o.results[apiserver]?.connected, show(o.results)).toBe(true);
    } else {
      ctx.annotate(`nothing listens on ${apiserver}: the API server check only shows the restricted pod does not connect`);
    }
  });

  it("applies a pod's ingress policy to other pods", async (ctx) => {
    if (skipReason) ctx.skip(skipReason);
    const g = `${guarded}:${POD_PORT}`;
    const [client, stranger] = await Promise.all([
      runProbe("client", { role: "client" }, [g]),
      runProbe("stranger", { role: "stranger" }, [g]),
    ]);
    expect(client.results[g]?.connected, `client ${client.ip}: ${JSON.stringify(client.results)}`).toBe(true);
    expect(stranger.results[g]?.connected, `stranger ${stranger.ip}: ${JSON.stringify(stranger.results)}`).toBe(false);
  });

  it("gives pods no IPv6 path to the node (the enforcer polices IPv4 only)", (ctx) => {
    if (skipReason) ctx.skip(skipReason);
    const sysctl = `/proc/sys/net/ipv6/conf/${BRIDGE}/disable_ipv6`;
    if (!existsSync(sysctl)) ctx.skip(`no bridge ${BRIDGE} on this machine`);
    expect(readFileSync(sysctl, "utf8").trim()).toBe("1");
    const v6 = readFileSync("/proc/net/if_inet6", "utf8").split("\n").filter((l) => l.trim().endsWith(` ${BRIDGE}`));
    expect(v6).toEqual([]);
  });
});
