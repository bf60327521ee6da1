// NetworkPolicy enforcement on the local cluster (docs/local-cluster.md, "NetworkPolicy").
// Run and analysis pods are codeplane's security boundary: their egress is limited by a
// NetworkPolicy. On this cluster the API server, kubelet, git daemon, test databases and
// codeplane itself are processes of the node, reached by pods at the node address: that
// traffic goes through the node's INPUT path, not FORWARD, and must obey the policy too.
//
// Pods in a throw-away namespace probe TCP ports and ask the cluster DNS from their first
// instant (policies exist before the pods start, so a pod's first packets are covered too),
// each target in parallel, retrying with short timeouts for a few seconds, and print what
// connected or answered:
//   restricted  default-deny egress but TCP to <node>/32 on one port served by this test, and
//               DNS to the kube-dns pods (the rule codeplane's run policy has)
//   sealed      default-deny egress, no rule at all
//   open        no policy: reaches the node's ports, other pods and Services, resolves names
//   client      no policy, allowed by the ingress policy of `guarded`
// Targets: the allowed port and another port served by this test on the node address, the
// kubelet, the API server port, the git daemon, a pod without policy, the API server through
// the `kubernetes` Service, a pod whose ingress only admits `client` pods; DNS questions go to
// the pod's resolver (the kube-dns Service).
// NETWORK RULE: traffic goes only to the node address, the pod network and the cluster's
// Services (translated to those on the node), never elsewhere. CoreDNS forwards nothing: the
// name outside the cluster asked below is answered NXDOMAIN by it, not looked up anywhere.
import { execFileSync } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { connect, createServer, type Server } from "node:net";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/until.ts";

const repoRoot = new URL("../..", import.meta.url).pathname;
const kubeconfigPath = process.env.KUBECONFIG || `${repoRoot}.cluster/kubeconfig`;
const RUNNER_IMAGE = process.env.CODEPLANE_RUNNER_IMAGE ?? "codeplane-runner:dev";
const NODE_IP = process.env.CODEPLANE_CLUSTER_NODE_IP ?? "10.244.0.1";
const BRIDGE = process.env.BRIDGE_NAME ?? "cp-br0";
const SERVICE_CIDR = process.env.SERVICE_CIDR ?? "10.96.0.0/24";
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
// once it connected (host:port) or was answered (dns:NAME, an A question to the resolver of
// /etc/resolv.conf). Prints one JSON line:
// {target: {connected, outcomes}} and {"dns:NAME": {answered, rcode, addresses, outcomes}}.
const PROBE_SCRIPT = `
import json, random, socket, struct, sys, threading, time
targets = sys.argv[1:]
result = {}
resolver = [l.split()[1] for l in open("/etc/resolv.conf") if l.startswith("nameserver")][0]
def ask(name):
    tid = random.randrange(65536)
    q = struct.pack(">HHHHHH", tid, 0x0100, 1, 0, 0, 0)
    q += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\\0" + struct.pack(">HH", 1, 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(${ATTEMPT_TIMEOUT})
    try:
        s.sendto(q, (resolver, 53))
        while True:
            d = s.recv(4096)
            if struct.unpack(">H", d[:2])[0] == tid: break
    finally:
        s.close()
    rcode, ancount = d[3] & 15, struct.unpack(">H", d[6:8])[0]
    i = 12
    while d[i]: i += d[i] + 1
    i += 5
    addresses = []
    for _ in range(ancount):
        i += 2 if d[i] >= 192 else len(name) + 2
        rtype, _c, _t, rdlen = struct.unpack(">HHIH", d[i:i + 10])
        i += 10
        if rtype == 1 and rdlen == 4: addresses.append(socket.inet_ntoa(d[i:i + 4]))
        i += rdlen
    return rcode, addresses
def dns(t):
    name = t[4:]
    outcomes = []
    deadline = time.time() + ${PROBE_SECONDS}
    while time.time() < deadline:
        try:
            rcode, addresses = ask(name)
            result[t] = {"answered": True, "rcode": rcode, "addresses": addresses, "outcomes": outcomes}
            return
        except socket.timeout:
            outcomes.append("timeout")
        except OSError as e:
            outcomes.append(e.strerror or str(e))
            time.sleep(0.2)
    result[t] = {"answered": False, "outcomes": outcomes}
def probe(t):
    if t.startswith("dns:"): return dns(t)
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
          ...(readinessPort ? { readinessProbe: { tcpSocket: { port: readinessPort }, periodSeconds: 1 } } : {}),
        },
      ],
    },
  };
}

type Results = Record<string, { connected?: boolean; answered?: boolean; rcode?: number; addresses?: string[]; outcomes: string[] }>;
const NXDOMAIN = 3;

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
let apiServiceIP = "";
let dnsServiceIP = "";

beforeAll(async () => {
  if (!existsSync(kubeconfigPath)) throw new Error(`No cluster: kubeconfig ${kubeconfigPath} does not exist. ${NO_CLUSTER}`);
  kc.loadFromFile(kubeconfigPath);
  core = kc.makeApiClient(k8s.CoreV1Api);
  net = kc.makeApiClient(k8s.NetworkingV1Api);
  try {
    await Promise.race([core.listNode(), sleep(10_000).then(() => Promise.reject(new Error("no answer in 10 s")))]);
  } catch (err) {
    throw new Error(`No cluster reachable at ${kc.getCurrentCluster()?.server}: ${String(err)}. ${NO_CLUSTER}`, { cause: err });
  }
  // The test serves ports on the node address: only possible on the node itself (make cluster-up).
  try {
    allowedServer = await serveOnNode();
    otherServer = await serveOnNode();
  } catch (err) {
    skipReason = `cannot listen on the node address ${NODE_IP} (${String(err)}): only the \`make cluster-up\` cluster runs on this machine`;
    return;
  }

  // Services and DNS: kube-proxy and CoreDNS (cluster-up) give these addresses
  apiServiceIP = (await core.readNamespacedService({ name: "kubernetes", namespace: "default" })).spec?.clusterIP ?? "";
  try {
    dnsServiceIP = (await core.readNamespacedService({ name: "kube-dns", namespace: "kube-system" })).spec?.clusterIP ?? "";
  } catch (err) {
    throw new Error(`no kube-dns Service in kube-system (${String(err)}): \`make cluster-up\` deploys CoreDNS`, { cause: err });
  }

  await core.createNamespace({ body: { metadata: { name: namespace } } });
  await until("the default service account", 30_000, async () => (await core.readNamespacedServiceAccount({ name: "default", namespace })) ?? undefined);
  await net.createNamespacedNetworkPolicy({
    namespace,
    body: {
      metadata: { name: "restricted-egress" },
      spec: {
        podSelector: { matchLabels: { role: "restricted" } },
        policyTypes: ["Egress"],
        egress: [
          { to: [{ ipBlock: { cidr: `${NODE_IP}/32` } }], ports: [{ protocol: "TCP", port: allowedServer.port }] },
          {
            to: [
              {
                namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } },
                podSelector: { matchLabels: { "k8s-app": "kube-dns" } },
              },
            ],
            ports: [
              { protocol: "UDP", port: 53 },
              { protocol: "TCP", port: 53 },
            ],
          },
        ],
      },
    },
  });
  await net.createNamespacedNetworkPolicy({
    namespace,
    body: { metadata: { name: "sealed-egress" }, spec: { podSelector: { matchLabels: { role: "sealed" } }, policyTypes: ["Egress"] } },
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
  it("applies a pod's egress policy to the node's own ports, to other pods, to Services and to DNS, from the pod's first packet; pods without policy reach everything", async (ctx) => {
    if (skipReason) ctx.skip(skipReason);
    const allowed = `${NODE_IP}:${allowedServer!.port}`;
    const other = `${NODE_IP}:${otherServer!.port}`;
    const kubelet = `${NODE_IP}:${KUBELET_PORT}`;
    const apiserver = `${NODE_IP}:${APISERVER_PORT}`;
    const git = `${NODE_IP}:${GIT_PORT}`;
    const pod = `${target}:${POD_PORT}`;
    const apiService = `${apiServiceIP}:443`;
    const clusterName = "dns:kubernetes.default.svc.cluster.local";
    const dnsName = "dns:kube-dns.kube-system.svc.cluster.local";
    const outsideName = "dns:example.com";
    const tcp = [allowed, other, kubelet, apiserver, git, pod, apiService];
    const targets = [...tcp, clusterName, dnsName, outsideName];

    const [r, sealed, o] = await Promise.all([
      runProbe("restricted", { role: "restricted" }, targets),
      runProbe("sealed", { role: "sealed" }, targets),
      runProbe("open", { role: "open" }, targets),
    ]);
    const show = (x: Results) => JSON.stringify(x);
    expect(await hostCanConnect(APISERVER_PORT), `nothing listens on ${apiserver} (cluster-up's apiserver-relay)`).toBe(true);

    // the one port the policy allows, and DNS through the kube-dns pods' rule
    expect(r.results[allowed]?.connected, show(r.results)).toBe(true);
    expect(r.results[clusterName], show(r.results)).toMatchObject({ answered: true, rcode: 0, addresses: [apiServiceIP] });
    expect(r.results[dnsName], show(r.results)).toMatchObject({ answered: true, rcode: 0, addresses: [dnsServiceIP] });
    // names outside the cluster do not exist (and are not looked up anywhere)
    expect(r.results[outsideName], show(r.results)).toMatchObject({ answered: true, rcode: NXDOMAIN, addresses: [] });
    // everything else on the node, other pods, the API through its Service: never, not even in
    // the pod's first instant
    for (const t of [other, kubelet, apiserver, git, pod, apiService]) {
      expect(r.results[t]?.connected, `restricted pod reached ${t}: ${show(r.results)}`).toBe(false);
    }
    // the node's side agrees: the other port never saw the restricted pod
    expect(otherServer!.peers).not.toContain(r.ip);
    expect(allowedServer!.peers).toContain(r.ip);

    // deny-all egress: nothing at all, not even DNS
    for (const t of tcp) expect(sealed.results[t]?.connected, `sealed pod reached ${t}: ${show(sealed.results)}`).toBe(false);
    for (const t of [clusterName, dnsName, outsideName]) {
      expect(sealed.results[t]?.answered, `sealed pod got a DNS answer for ${t}: ${show(sealed.results)}`).toBe(false);
    }
    expect(otherServer!.peers).not.toContain(sealed.ip);
    expect(allowedServer!.peers).not.toContain(sealed.ip);

    // without a policy: the node's ports (what the e2e tests rely on: git daemon, codeplane on
    // the node), pods, the API server directly and through the `kubernetes` Service, and DNS
    for (const t of tcp) expect(o.results[t]?.connected, `open pod did not reach ${t}: ${show(o.results)}`).toBe(true);
    expect(o.results[clusterName], show(o.results)).toMatchObject({ answered: true, rcode: 0, addresses: [apiServiceIP] });
    expect(o.results[outsideName], show(o.results)).toMatchObject({ answered: true, rcode: NXDOMAIN });
    expect(otherServer!.peers).toContain(o.ip);
  });

  it("applies a pod's ingress policy to other pods", async (ctx) => {
    if (skipReason) ctx.skip(skipReason);
    const g = `${guarded}:${POD_PORT}`;
    const [client, stranger] = await Promise.all([runProbe("client", { role: "client" }, [g]), runProbe("stranger", { role: "stranger" }, [g])]);
    expect(client.results[g]?.connected, `client ${client.ip}: ${JSON.stringify(client.results)}`).toBe(true);
    expect(stranger.results[g]?.connected, `stranger ${stranger.ip}: ${JSON.stringify(stranger.results)}`).toBe(false);
  });

  it("refuses the node's connections to a Service address kube-proxy has not translated, rather than sending them off the machine", (ctx) => {
    if (skipReason) ctx.skip(skipReason);
    if (!existsSync(`/proc/sys/net/ipv6/conf/${BRIDGE}`)) ctx.skip(`no bridge ${BRIDGE} on this machine`);
    // Checked in the rules themselves: a packet sent to prove it would leave the machine if they were wrong.
    const rules = execFileSync("iptables", ["-w", "-S", "OUTPUT"], { encoding: "utf8" }).split("\n");
    const reject = rules.findIndex((r) => r.startsWith(`-A OUTPUT -d ${SERVICE_CIDR} `) && r.includes(" -j REJECT"));
    expect(reject, rules.join("\n")).toBeGreaterThan(0);
    // Nothing before it lets the node's packets through unconditionally (kube-router's jump matches pods' addresses).
    expect(rules.slice(0, reject).filter((r) => r.startsWith("-A OUTPUT") && / -j ACCEPT$/.test(r))).toEqual([]);
  });

  it("gives pods no IPv6 path to the node (the enforcer polices IPv4 only)", (ctx) => {
    if (skipReason) ctx.skip(skipReason);
    const sysctl = `/proc/sys/net/ipv6/conf/${BRIDGE}/disable_ipv6`;
    if (!existsSync(sysctl)) ctx.skip(`no bridge ${BRIDGE} on this machine`);
    expect(readFileSync(sysctl, "utf8").trim()).toBe("1");
    const v6 = readFileSync("/proc/net/if_inet6", "utf8")
      .split("\n")
      .filter((l) => l.trim().endsWith(` ${BRIDGE}`));
    expect(v6).toEqual([]);
  });
});
