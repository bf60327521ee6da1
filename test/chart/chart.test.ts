import { execFile as execFileCb } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { V1NetworkPolicy } from "@kubernetes/client-node";
import { parseAllDocuments } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { DEFAULT_CLUSTER_CIDRS, METADATA_CIDRS, parseEgressRules } from "../../src/k8s/egress.ts";
import { RESTRICTED_POD_SECURITY_LABELS } from "../../src/k8s/labels.ts";
import { buildWorkloadNetworkPolicy, WORKLOAD_POD_SELECTOR } from "../../src/k8s/network-policy.ts";

// The chart renders what the binary builds: the workload NetworkPolicy from
// `helm template` must equal buildWorkloadNetworkPolicy for the same settings
// (with the git endpoint as the release's pods), the settings it passes the
// binary must be ones loadConfig accepts, and the run namespace and the API
// pods' policy must be what "Isolation of user code" promises.

const execFile = promisify(execFileCb);
const root = new URL("../..", import.meta.url).pathname;
const CHART = path.join(root, "charts/codeplane");
const RELEASE = "cp";
const RELEASE_NS = "codeplane";
const FULLNAME = "cp-codeplane";
const REQUIRED = { database: { existingSecret: "codeplane-db" }, encryption: { existingSecret: "codeplane-keys" } };

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: any;
}

let helm: string;
let dir: string;

beforeAll(async () => {
  const { stdout } = await execFile(path.join(root, "hack/tools/helm.sh"), [], { maxBuffer: 16 * 1024 * 1024 });
  helm = stdout.trim().split("\n").pop()!;
  dir = mkdtempSync(path.join(tmpdir(), "codeplane-chart-"));
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function valuesFile(values: object): string {
  const file = path.join(dir, `${randomBytes(6).toString("hex")}.json`);
  writeFileSync(file, JSON.stringify({ ...REQUIRED, ...values }));
  return file;
}

async function render(values: object = {}): Promise<K8sObject[]> {
  const { stdout } = await execFile(helm, ["template", RELEASE, CHART, "--namespace", RELEASE_NS, "-f", valuesFile(values)], { maxBuffer: 16 * 1024 * 1024 });
  return parseAllDocuments(stdout)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((d): d is K8sObject => d !== null);
}

/** The message `helm template` fails with. */
async function refusal(values: object): Promise<string> {
  return render(values).then(
    () => "rendered",
    (err: { stderr?: string }) => err.stderr ?? String(err),
  );
}

const find = (docs: K8sObject[], kind: string, name: string) => {
  const doc = docs.find((d) => d.kind === kind && d.metadata.name === name);
  if (!doc) throw new Error(`no ${kind} ${name} in ${docs.map((d) => `${d.kind}/${d.metadata.name}`).join(", ")}`);
  return doc;
};

function env(docs: K8sObject[]): Record<string, string> {
  const deployment = find(docs, "Deployment", FULLNAME);
  return Object.fromEntries((deployment.spec.template.spec.containers[0].env as { name: string; value: string }[]).map((e) => [e.name, e.value]));
}

/** What the binary would build from the environment the chart gives it, with the git endpoint as Helm names it. */
function builtFromEnv(e: Record<string, string>): V1NetworkPolicy {
  const config = loadConfig({ ...e, DATABASE_URL: "postgres://x@127.0.0.1/db", CODEPLANE_ENCRYPTION_KEY: randomBytes(32).toString("base64") });
  return buildWorkloadNetworkPolicy({
    namespace: config.kubernetes.namespace,
    name: `${FULLNAME}-workloads`,
    mode: config.runs.egress.mode,
    allow: config.runs.egress.allow,
    clusterCidrs: config.runs.egress.clusterCidrs,
    git: { namespace: RELEASE_NS, podSelector: { "app.kubernetes.io/name": "codeplane", "app.kubernetes.io/instance": RELEASE }, port: config.http.gitPort! },
  });
}

const RUN_NS = `${RELEASE}-runs`;

describe("the Helm chart", () => {
  it("passes helm lint", async () => {
    const { stdout } = await execFile(helm, ["lint", CHART, "-f", valuesFile({})]);
    expect(stdout).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
  });

  it.each<[string, object, string, string]>([
    ["restricted (the default)", {}, "restricted", ""],
    ["open", { runs: { egress: { mode: "open" } } }, "open", ""],
    [
      "allowed rules: ports, ranges, UDP, IPv6 and every port",
      {
        runs: {
          egress: {
            allow: [
              { cidr: "10.20.0.15/32", ports: [{ port: 443 }, { port: 3128, protocol: "TCP" }] },
              { cidr: "10.30.0.0/24", ports: [{ port: 8000, endPort: 8100 }, { port: 123, protocol: "udp" }] },
              { cidr: "2001:db8:1::/48", ports: [{ port: 443 }] },
              { cidr: "192.0.2.0/24" },
            ],
          },
        },
      },
      "restricted",
      "10.20.0.15/32@443/tcp,10.20.0.15/32@3128/tcp,10.30.0.0/24@8000-8100/tcp,10.30.0.0/24@123/udp,2001:db8:1::/48@443/tcp,192.0.2.0/24",
    ],
    [
      "allowed CIDRs that hold (or just miss) a metadata range, the address arithmetic Helm repeats",
      {
        runs: {
          egress: {
            allow: [
              { cidr: "0.0.0.0/0", ports: [{ port: 443 }] },
              { cidr: "128.0.0.0/1" },
              { cidr: "169.254.0.0/15" },
              { cidr: "169.0.0.0/8" },
              { cidr: "170.0.0.0/8" },
              { cidr: "168.0.0.0/7" },
              { cidr: "::/0", ports: [{ port: 443 }] },
              { cidr: "fc00::/7" },
              { cidr: "fd00:ec2::/32" },
              { cidr: "fd00:ec2::200/120" },
              { cidr: "fd00:ec2::/127" },
              { cidr: "FD00:EC3::/32" },
              { cidr: "2001:db8::/32" },
            ],
          },
        },
      },
      "restricted",
      "0.0.0.0/0@443/tcp,128.0.0.0/1,169.254.0.0/15,169.0.0.0/8,170.0.0.0/8,168.0.0.0/7,::/0@443/tcp,fc00::/7,fd00:ec2::/32,fd00:ec2::200/120,fd00:ec2::/127,FD00:EC3::/32,2001:db8::/32",
    ],
    [
      "open with a mirror and the operator's own cluster ranges",
      { runs: { egress: { mode: "open", allow: [{ cidr: "10.96.0.0/16", ports: [{ port: 443 }] }], clusterCIDRs: ["10.0.0.0/8", "169.254.0.0/16", "fd12::/16"] } } },
      "open",
      "10.96.0.0/16@443/tcp",
    ],
  ])("renders the workload policy buildWorkloadNetworkPolicy builds: %s", async (_, values, mode, allowEnv) => {
    const docs = await render(values);
    const e = env(docs);
    expect(e.CODEPLANE_RUN_EGRESS).toBe(mode);
    expect(e.CODEPLANE_RUN_EGRESS_ALLOW).toBe(allowEnv);
    const rendered = find(docs, "NetworkPolicy", `${FULLNAME}-workloads`);
    const built = builtFromEnv(e);
    expect(rendered.metadata.namespace).toBe(RUN_NS);
    expect({ apiVersion: rendered.apiVersion, kind: rendered.kind, name: rendered.metadata.name, namespace: rendered.metadata.namespace }).toEqual({
      apiVersion: built.apiVersion,
      kind: built.kind,
      name: built.metadata!.name,
      namespace: built.metadata!.namespace,
    });
    expect(rendered.spec).toEqual(built.spec);
  });

  it("excludes the metadata ranges and the cluster CIDRs from open egress", async () => {
    const docs = await render({ runs: { egress: { mode: "open" } } });
    const egress = find(docs, "NetworkPolicy", `${FULLNAME}-workloads`).spec.egress as { to: { ipBlock?: { cidr: string; except?: string[] } }[] }[];
    const open = egress.at(-1)!.to.map((p) => p.ipBlock!);
    expect(open.map((b) => b.cidr)).toEqual(["0.0.0.0/0", "::/0"]);
    expect(open[0]!.except).toEqual(expect.arrayContaining(["169.254.0.0/16", ...DEFAULT_CLUSTER_CIDRS.filter((c) => !c.includes(":"))]));
    expect(open[1]!.except).toEqual(expect.arrayContaining(["fd00:ec2::254/128", ...DEFAULT_CLUSTER_CIDRS.filter((c) => c.includes(":"))]));
    // In restricted mode no block reaches the internet at all.
    const restricted = find(await render(), "NetworkPolicy", `${FULLNAME}-workloads`);
    expect(JSON.stringify(restricted.spec)).not.toContain("ipBlock");
  });

  it("defaults to the binary's metadata and cluster ranges", async () => {
    const e = env(await render());
    expect(e.CODEPLANE_RUN_EGRESS_CLUSTER_CIDRS).toBe(DEFAULT_CLUSTER_CIDRS.join(","));
    const docs = await render({ runs: { egress: { allow: [{ cidr: "0.0.0.0/0" }, { cidr: "::/0" }] } } });
    const blocks = (find(docs, "NetworkPolicy", `${FULLNAME}-workloads`).spec.egress as { to: { ipBlock: { except: string[] } }[] }[]).slice(2);
    expect(blocks.flatMap((r) => r.to[0]!.ipBlock.except)).toEqual([...METADATA_CIDRS]);
  });

  it.each<[string, object, RegExp]>([
    ["the IPv4 metadata range", { runs: { egress: { allow: [{ cidr: "169.254.0.0/16", ports: [{ port: 80 }] }] } } }, /'169\.254\.0\.0\/16' lies inside the cloud metadata range 169\.254\.0\.0\/16/],
    ["the metadata address", { runs: { egress: { allow: [{ cidr: "169.254.169.254/32" }] } } }, /'169\.254\.169\.254\/32' lies inside the cloud metadata range/],
    ["the IPv6 metadata address", { runs: { egress: { allow: [{ cidr: "fd00:0ec2:0::254/128" }] } } }, /lies inside the cloud metadata range fd00:ec2::254\/128/],
    ["a CIDR listed twice", { runs: { egress: { allow: [{ cidr: "10.0.0.0/8", ports: [{ port: 80 }] }, { cidr: "10.0.0.0/8" }] } } }, /10\.0\.0\.0\/8 is listed twice/],
    ["a malformed CIDR", { runs: { egress: { allow: [{ cidr: "10.0.0/8" }] } } }, /'10\.0\.0\/8' is not a CIDR/],
    ["a prefix too long", { runs: { egress: { allow: [{ cidr: "10.0.0.0/33" }] } } }, /prefix length is at most 32/],
    ["a port out of range", { runs: { egress: { allow: [{ cidr: "10.0.0.0/8", ports: [{ port: 70000 }] }] } } }, /port must be 1-65535/],
    ["an unknown protocol", { runs: { egress: { allow: [{ cidr: "10.0.0.0/8", ports: [{ port: 80, protocol: "SCTP" }] }] } } }, /protocol must be TCP or UDP/],
    ["a cluster CIDR of a whole family", { runs: { egress: { mode: "open", clusterCIDRs: ["::/0"] } } }, /'::\/0' is every address of its family/],
    ["an unknown mode", { runs: { egress: { mode: "wide" } } }, /runs.egress.mode must be restricted or open/],
    ["the API policy without a git port", { config: { CODEPLANE_GIT_PORT: "" } }, /networkPolicy.enabled needs config.CODEPLANE_GIT_PORT/],
    ["creating the release namespace", { runNamespace: { create: true, name: RELEASE_NS } }, /runNamespace.name is the release namespace/],
    ["the old string form of runNamespace", { runNamespace: "runs" }, /runNamespace is a map now/],
  ])("refuses %s", async (_, values, message) => {
    expect(await refusal(values)).toMatch(message);
  });

  it("creates the run namespace under the restricted Pod Security Standard and points the binary and its Role there", async () => {
    const docs = await render();
    const ns = find(docs, "Namespace", RUN_NS);
    expect(ns.metadata.labels).toMatchObject(RESTRICTED_POD_SECURITY_LABELS);
    expect(ns.metadata.annotations?.["helm.sh/resource-policy"]).toBeUndefined();
    expect(env(docs).CODEPLANE_NAMESPACE).toBe(RUN_NS);
    expect(find(docs, "Role", FULLNAME).metadata.namespace).toBe(RUN_NS);
    expect(find(docs, "RoleBinding", FULLNAME).metadata.namespace).toBe(RUN_NS);
    expect(docs.filter((d) => d.kind === "Namespace")).toHaveLength(1);
  });

  it("keeps the run namespace on uninstall when asked, and uses an existing one without creating it", async () => {
    const kept = find(await render({ runNamespace: { keep: true } }), "Namespace", RUN_NS);
    expect(kept.metadata.annotations).toEqual({ "helm.sh/resource-policy": "keep" });
    const existing = await render({ runNamespace: { create: false, name: "shared-runs" } });
    expect(existing.filter((d) => d.kind === "Namespace")).toEqual([]);
    expect(env(existing).CODEPLANE_NAMESPACE).toBe("shared-runs");
    expect(find(existing, "NetworkPolicy", `${FULLNAME}-workloads`).metadata.namespace).toBe("shared-runs");
  });

  it("serves http, git and metrics on their own ports and points pods at the Service's git port", async () => {
    const docs = await render();
    const container = find(docs, "Deployment", FULLNAME).spec.template.spec.containers[0];
    expect(container.ports).toEqual([
      { name: "http", containerPort: 8080 },
      { name: "git", containerPort: 8081 },
      { name: "metrics", containerPort: 9090 },
    ]);
    expect(find(docs, "Service", FULLNAME).spec.ports).toEqual([
      { name: "http", port: 80, targetPort: "http" },
      { name: "git", port: 8081, targetPort: "git" },
      { name: "metrics", port: 9090, targetPort: "metrics" },
    ]);
    const e = env(docs);
    expect(e.CODEPLANE_INTERNAL_URL).toBe(`http://${FULLNAME}.${RELEASE_NS}.svc:8081`);
    expect(e.CODEPLANE_GIT_PORT).toBe("8081");
    expect(e.CODEPLANE_METRICS_PORT).toBe("9090");
    expect(env(await render({ config: { CODEPLANE_INTERNAL_URL: "http://10.1.2.3:8081" } })).CODEPLANE_INTERNAL_URL).toBe("http://10.1.2.3:8081");
  });

  it("passes preprocessing variables and runtimeClassName presets to the binary, which accepts them", async () => {
    const docs = await render({
      runs: { preprocessEnv: { PIP_INDEX_URL: "https://mirror.example.internal/pypi/simple" } },
      computeTypes: {
        "cpu-general": { requests: { cpu: "250m", memory: "256Mi" }, limits: { cpu: "1", memory: "1Gi" } },
        "cpu-sandboxed": { requests: { cpu: "250m", memory: "256Mi" }, limits: { cpu: "1", memory: "1Gi" }, runtimeClassName: "gvisor" },
      },
    });
    const e = env(docs);
    const config = loadConfig({ ...e, DATABASE_URL: "postgres://x@127.0.0.1/db", CODEPLANE_ENCRYPTION_KEY: randomBytes(32).toString("base64") });
    expect(config.runs.preprocessEnv).toEqual({ PIP_INDEX_URL: "https://mirror.example.internal/pypi/simple" });
    expect(config.runs.computeTypes["cpu-sandboxed"]!.runtimeClassName).toBe("gvisor");
    expect(env(await render()).CODEPLANE_RUN_PREPROCESS_ENV).toBe("{}");
  });

  describe("the API pods' policy", () => {
    type Rule = { ports: { protocol: string; port: number }[]; from: object[] };
    const apiPolicy = async (values: object = {}) => find(await render(values), "NetworkPolicy", FULLNAME);
    const rulesFor = (policy: K8sObject, port: number) => (policy.spec.ingress as Rule[]).filter((r) => r.ports.some((p) => p.port === port));

    it("admits the git port only from the run namespace's workload pods", async () => {
      const policy = await apiPolicy();
      expect(policy.metadata.namespace).toBe(RELEASE_NS);
      expect(policy.spec.podSelector).toEqual({ matchLabels: { "app.kubernetes.io/name": "codeplane", "app.kubernetes.io/instance": RELEASE } });
      expect(policy.spec.policyTypes).toEqual(["Ingress"]);
      const git = rulesFor(policy, 8081);
      expect(git).toEqual([
        {
          ports: [{ protocol: "TCP", port: 8081 }],
          from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": RUN_NS } }, podSelector: WORKLOAD_POD_SELECTOR }],
        },
      ]);
    });

    it("admits the API port from every namespace but the run namespace, and from ingressFrom", async () => {
      const [main, ...more] = rulesFor(await apiPolicy(), 8080);
      expect(more).toEqual([]);
      expect(main!.ports).toEqual([{ protocol: "TCP", port: 8080 }]);
      expect(main!.from[0]).toEqual({ namespaceSelector: { matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "NotIn", values: [RUN_NS] }] } });
      // The default ingressFrom: clients outside the private ranges (run pods have private addresses).
      expect(main!.from.slice(1)).toEqual([
        { ipBlock: { cidr: "0.0.0.0/0", except: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"] } },
        { ipBlock: { cidr: "::/0", except: ["fc00::/7", "fe80::/10"] } },
      ]);
      const custom = rulesFor(await apiPolicy({ networkPolicy: { api: { ingressFrom: [{ ipBlock: { cidr: "10.0.0.0/16" } }] } } }), 8080);
      expect(custom[0]!.from.slice(1)).toEqual([{ ipBlock: { cidr: "10.0.0.0/16" } }]);
    });

    it("admits the metrics port only from networkPolicy.metrics.from (nobody when empty)", async () => {
      expect(rulesFor(await apiPolicy(), 9090)).toEqual([]);
      const from = [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } }];
      expect(rulesFor(await apiPolicy({ networkPolicy: { metrics: { from } } }), 9090)).toEqual([{ ports: [{ protocol: "TCP", port: 9090 }], from }]);
    });

    it("is left out when networkPolicy.enabled is false; the workloads' policy stays", async () => {
      const docs = await render({ networkPolicy: { enabled: false } });
      expect(docs.filter((d) => d.kind === "NetworkPolicy").map((d) => d.metadata.name)).toEqual([`${FULLNAME}-workloads`]);
    });
  });
});
