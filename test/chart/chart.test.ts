import { execFile as execFileCb } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { V1NetworkPolicy } from "@kubernetes/client-node";
import { parse, parseAllDocuments } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { DEFAULT_CLUSTER_CIDRS, METADATA_CIDRS } from "../../src/resources/egress.ts";
import { RESTRICTED_POD_SECURITY_LABELS } from "../../src/resources/labels.ts";
import { planInstall } from "../../src/k8s/install.ts";
import { buildWorkloadNetworkPolicy, WORKLOAD_POD_SELECTOR } from "../../src/k8s/network-policy.ts";
import { renderCrds } from "../../src/resources/render.ts";
import { CHART_README, withTable } from "./values-doc.ts";
import { helmBinary } from "./helm-binary.ts";

// The chart passes the binary settings it accepts, and the binary builds the
// workload NetworkPolicy from them (it applies it at start: the chart renders
// none, docs/decisions/0100-network-policy-one-author.md): the policy the
// binary would apply from the chart's environment must name the release's
// pods as the git endpoint, in the run namespace, under the name the Role
// lets it write. The run namespace and the API pods' policy must be what
// "Isolation of user code" promises.

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
  helm = await helmBinary();
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

async function render(values: object = {}, args: string[] = []): Promise<K8sObject[]> {
  const { stdout } = await execFile(helm, ["template", RELEASE, CHART, "--namespace", RELEASE_NS, "-f", valuesFile(values), ...args], {
    maxBuffer: 16 * 1024 * 1024,
  });
  return parseAllDocuments(stdout)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((d): d is K8sObject => d !== null);
}

/** The message `helm template` fails with. */
async function refusal(values: object, args: string[] = []): Promise<string> {
  return render(values, args).then(
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

const podSpec = (docs: K8sObject[]) => find(docs, "Deployment", FULLNAME).spec.template.spec;
const container = (docs: K8sObject[]) => podSpec(docs).containers[0];

/** What the binary makes of the environment the chart gives it. */
const configFromEnv = (e: Record<string, string>) =>
  loadConfig({ ...e, DATABASE_URL: "postgres://x@127.0.0.1/db", CODEPLANE_ENCRYPTION_KEY: randomBytes(32).toString("base64") });

/** The workload NetworkPolicy the binary applies at start from the environment the chart gives it (the code of `codeplane install`). */
const appliedFromEnv = (e: Record<string, string>): V1NetworkPolicy => planInstall(configFromEnv(e)).networkPolicy;

/** The policy the chart used to render itself: the egress settings, with the release's API pods on the git port as the git endpoint. */
function expectedPolicy(e: Record<string, string>): V1NetworkPolicy {
  const config = configFromEnv(e);
  return buildWorkloadNetworkPolicy({
    namespace: RUN_NS,
    name: `${FULLNAME}-workloads`,
    mode: config.runs.egress.mode,
    allow: config.runs.egress.allow,
    clusterCidrs: config.runs.egress.clusterCidrs,
    git: { namespace: RELEASE_NS, podSelector: { "app.kubernetes.io/name": "codeplane", "app.kubernetes.io/instance": RELEASE }, port: 8081 },
  });
}

const WORKLOAD_POLICY = `${FULLNAME}-workloads`;

const RUN_NS = `${RELEASE}-runs`;

describe("the Helm chart", () => {
  it.each<[string, object, string[]]>([
    ["the defaults", {}, []],
    [
      "every optional object on",
      {
        ingress: { enabled: true, hosts: [{ host: "codeplane.example.com" }] },
        httpRoute: { enabled: true, parentRefs: [{ name: "gw" }] },
        metrics: { scrapeAnnotations: true, serviceMonitor: { enabled: true }, podMonitor: { enabled: true } },
        imagePullSecrets: [{ name: "regcred" }],
        bootstrap: { existingSecret: "codeplane-bootstrap" },
        runNamespace: { keep: true },
      },
      [],
    ],
    ["one replica on Kubernetes 1.29", { replicaCount: 1 }, ["--kube-version", "1.29.0"]],
  ])("passes helm lint --strict with %s", async (_, values, args) => {
    const { stdout } = await execFile(helm, ["lint", "--strict", CHART, "-f", valuesFile(values), ...args]);
    expect(stdout).toMatch(/1 chart\(s\) linted, 0 chart\(s\) failed/);
    expect(stdout).not.toMatch(/\[(WARNING|ERROR)\]/);
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
              {
                cidr: "10.30.0.0/24",
                ports: [
                  { port: 8000, endPort: 8100 },
                  { port: 123, protocol: "udp" },
                ],
              },
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
      {
        runs: {
          egress: { mode: "open", allow: [{ cidr: "10.96.0.0/16", ports: [{ port: 443 }] }], clusterCIDRs: ["10.0.0.0/8", "169.254.0.0/16", "fd12::/16"] },
        },
      },
      "open",
      "10.96.0.0/16@443/tcp",
    ],
  ])("passes the binary the workload policy's settings, from which it builds the release's policy: %s", async (_, values, mode, allowEnv) => {
    const docs = await render(values);
    const e = env(docs);
    expect(e.CODEPLANE_RUN_EGRESS).toBe(mode);
    expect(e.CODEPLANE_RUN_EGRESS_ALLOW).toBe(allowEnv);
    expect(e.CODEPLANE_RUN_EGRESS_POLICY).toBe(WORKLOAD_POLICY);
    expect(e.CODEPLANE_RUN_EGRESS_GIT_PODS).toBe(`${RELEASE_NS}/app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/name=codeplane`);
    // One author: Helm renders no workload policy; codeplane applies this one at start.
    expect(docs.filter((d) => d.kind === "NetworkPolicy").map((d) => d.metadata.name)).toEqual([FULLNAME]);
    expect(appliedFromEnv(e)).toEqual(expectedPolicy(e));
  });

  it("excludes the metadata ranges and the cluster CIDRs from open egress", async () => {
    const egress = appliedFromEnv(env(await render({ runs: { egress: { mode: "open" } } }))).spec!.egress as {
      to: { ipBlock?: { cidr: string; except?: string[] } }[];
    }[];
    const open = egress.at(-1)!.to.map((p) => p.ipBlock!);
    expect(open.map((b) => b.cidr)).toEqual(["0.0.0.0/0", "::/0"]);
    expect(open[0]!.except).toEqual(expect.arrayContaining(["169.254.0.0/16", ...DEFAULT_CLUSTER_CIDRS.filter((c) => !c.includes(":"))]));
    expect(open[1]!.except).toEqual(expect.arrayContaining(["fd00:ec2::254/128", ...DEFAULT_CLUSTER_CIDRS.filter((c) => c.includes(":"))]));
    // In restricted mode no block reaches the internet at all.
    const restricted = appliedFromEnv(env(await render()));
    expect(JSON.stringify(restricted.spec)).not.toContain("ipBlock");
  });

  it("defaults to the binary's metadata and cluster ranges", async () => {
    const e = env(await render());
    expect(e.CODEPLANE_RUN_EGRESS_CLUSTER_CIDRS).toBe(DEFAULT_CLUSTER_CIDRS.join(","));
    const docs = await render({ runs: { egress: { allow: [{ cidr: "0.0.0.0/0" }, { cidr: "::/0" }] } } });
    const blocks = (appliedFromEnv(env(docs)).spec!.egress as { to: { ipBlock: { except: string[] } }[] }[]).slice(2);
    expect(blocks.flatMap((r) => r.to[0]!.ipBlock.except)).toEqual([...METADATA_CIDRS]);
  });

  // Egress settings the policy cannot enforce: the chart passes them on, and the
  // binary refuses them at start (the pods stop, naming the value), so the
  // address arithmetic lives in one place.
  it.each<[string, object, RegExp]>([
    [
      "the IPv4 metadata range",
      { runs: { egress: { allow: [{ cidr: "169.254.0.0/16", ports: [{ port: 80 }] }] } } },
      /CODEPLANE_RUN_EGRESS_ALLOW: '169\.254\.0\.0\/16' lies inside the cloud metadata range 169\.254\.0\.0\/16/,
    ],
    [
      "the metadata address",
      { runs: { egress: { allow: [{ cidr: "169.254.169.254/32" }] } } },
      /'169\.254\.169\.254\/32' lies inside the cloud metadata range/,
    ],
    [
      "the IPv6 metadata address",
      { runs: { egress: { allow: [{ cidr: "fd00:0ec2:0::254/128" }] } } },
      /lies inside the cloud metadata range fd00:ec2::254\/128/,
    ],
    [
      "a CIDR listed with and without ports",
      { runs: { egress: { allow: [{ cidr: "10.0.0.0/8", ports: [{ port: 80 }] }, { cidr: "10.0.0.0/8" }] } } },
      /10\.0\.0\.0\/8 is listed both with and without ports/,
    ],
    ["a malformed CIDR", { runs: { egress: { allow: [{ cidr: "10.0.0/8" }] } } }, /'10\.0\.0\/8' is not a CIDR/],
    ["a prefix too long", { runs: { egress: { allow: [{ cidr: "10.0.0.0/33" }] } } }, /'10\.0\.0\.0\/33' is not a CIDR/],
    ["a cluster CIDR of a whole family", { runs: { egress: { mode: "open", clusterCIDRs: ["::/0"] } } }, /'::\/0' is every address of its family/],
  ])("passes on, and the binary refuses at start, %s", async (_, values, message) => {
    const e = env(await render(values));
    expect(() => planInstall(configFromEnv(e))).toThrow(message);
  });

  it.each<[string, object, RegExp]>([
    [
      "a CIDR that would split the variable",
      { runs: { egress: { allow: [{ cidr: "10.0.0.0/8,1.2.3.4/32" }] } } },
      /'\/runs\/egress\/allow\/0\/cidr': '10\.0\.0\.0\/8,1\.2\.3\.4\/32' does not match pattern/,
    ],
    ["a bare address", { runs: { egress: { allow: [{ cidr: "10.0.0.1" }] } } }, /'\/runs\/egress\/allow\/0\/cidr': '10\.0\.0\.1' does not match pattern/],
    [
      "a port out of range",
      { runs: { egress: { allow: [{ cidr: "10.0.0.0/8", ports: [{ port: 70000 }] }] } } },
      /'\/runs\/egress\/allow\/0\/ports\/0\/port': maximum: got 70,000, want 65,535/,
    ],
    [
      "an unknown protocol",
      { runs: { egress: { allow: [{ cidr: "10.0.0.0/8", ports: [{ port: 80, protocol: "SCTP" }] }] } } },
      /'\/runs\/egress\/allow\/0\/ports\/0\/protocol': value must be one of 'TCP', 'UDP'/,
    ],
    ["an unknown mode", { runs: { egress: { mode: "wide" } } }, /'\/runs\/egress\/mode': value must be one of 'restricted', 'open'/],
    ["the API policy without a git port", { config: { CODEPLANE_GIT_PORT: "" } }, /networkPolicy.enabled needs config.CODEPLANE_GIT_PORT/],
    ["creating the release namespace", { runNamespace: { create: true, name: RELEASE_NS } }, /runNamespace.name is the release namespace/],
    ["the old string form of runNamespace", { runNamespace: "runs" }, /'\/runNamespace': got string, want object/],
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
    const keptDocs = await render({ runNamespace: { keep: true } });
    expect(find(keptDocs, "Namespace", RUN_NS).metadata.annotations).toEqual({ "helm.sh/resource-policy": "keep" });
    const existing = await render({ runNamespace: { create: false, name: "shared-runs" } });
    expect(existing.filter((d) => d.kind === "Namespace")).toEqual([]);
    expect(env(existing).CODEPLANE_NAMESPACE).toBe("shared-runs");
    // The workload policy is the binary's, in the run namespace and owned by no release: it stays
    // wherever the namespace stays, so pods still running there after an uninstall stay confined.
    expect(appliedFromEnv(env(existing)).metadata!.namespace).toBe("shared-runs");
    expect(existing.filter((d) => d.kind === "NetworkPolicy").map((d) => d.metadata.name)).toEqual([FULLNAME]);
  });

  it("serves http, git and metrics on their own ports and points pods at the Service's git port", async () => {
    const docs = await render();
    expect(container(docs).ports).toEqual([
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

  it("sizes analysis pods to the analyzer: cpu-small, 256Mi requested, 384Mi limit (it peaks under 256 MiB)", async () => {
    const config = configFromEnv(env(await render()));
    expect(config.analyses.computeType).toBe("cpu-small");
    const preset = config.runs.computeTypes[config.analyses.computeType]!;
    expect(preset.requests).toEqual({ cpu: "250m", memory: "256Mi" });
    expect(preset.limits).toEqual({ cpu: "1", memory: "384Mi" });
    // Runs keep their default preset.
    expect(config.runs.computeTypes["cpu-general"]!.limits.memory).toBe("1Gi");
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
    const config = configFromEnv(e);
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
      expect(docs.filter((d) => d.kind === "NetworkPolicy")).toEqual([]);
      expect(env(docs).CODEPLANE_RUN_EGRESS_POLICY).toBe(WORKLOAD_POLICY);
    });
  });

  describe("values.schema.json", () => {
    const schema = JSON.parse(readFileSync(path.join(CHART, "values.schema.json"), "utf8"));
    const values = parse(readFileSync(path.join(CHART, "values.yaml"), "utf8"));

    it.each<[string, object, string[], RegExp]>([
      ["replicaCount=two", {}, ["--set", "replicaCount=two"], /at '\/replicaCount': got string, want integer/],
      ["a negative replica count", { replicaCount: -1 }, [], /at '\/replicaCount': minimum: got -1, want 0/],
      ["an unknown top-level value", { replicas: 2 }, [], /additional properties 'replicas' not allowed/],
      ["a setting the binary does not have", { config: { CODEPLANE_PORT: "8080" } }, [], /at '\/config': additional properties 'CODEPLANE_PORT' not allowed/],
      [
        "a setting the chart sets itself (now runnerImage)",
        { config: { CODEPLANE_RUNNER_IMAGE: "runner:1" } },
        [],
        /additional properties 'CODEPLANE_RUNNER_IMAGE' not allowed/,
      ],
      ["a port that is not a number", { config: { PORT: "http" } }, [], /at '\/config\/PORT': 'http' does not match pattern/],
      [
        "a number with a leading zero (read as octal by templates)",
        { config: { CODEPLANE_SHUTDOWN_TIMEOUT_SECONDS: "025" } },
        [],
        /at '\/config\/CODEPLANE_SHUTDOWN_TIMEOUT_SECONDS': '025' does not match pattern/,
      ],
      [
        "a boolean setting that is no boolean",
        { config: { CODEPLANE_TRUST_PROXY: "maybe" } },
        [],
        /at '\/config\/CODEPLANE_TRUST_PROXY': value must be one of/,
      ],
      ["an unknown log level", { config: { CODEPLANE_LOG_LEVEL: "verbose" } }, [], /at '\/config\/CODEPLANE_LOG_LEVEL': value must be one of/],
      ["a malformed digest", { image: { digest: "sha256:abc" } }, [], /at '\/image\/digest': 'sha256:abc' does not match pattern/],
      [
        "an unknown pull policy",
        { runnerImage: { pullPolicy: "Sometimes" } },
        [],
        /at '\/runnerImage\/pullPolicy': value must be one of 'Always', 'IfNotPresent', 'Never'/,
      ],
      ["a pull secret given as a bare string", { imagePullSecrets: ["regcred"] }, [], /at '\/imagePullSecrets\/0': got string, want object/],
      ["compute presets without cpu-general", { computeTypes: { "cpu-general": null } }, [], /at '\/computeTypes': missing property 'cpu-general'/],
      [
        "a compute quantity that is no quantity",
        { computeTypes: { "cpu-general": { requests: { cpu: "lots" } } } },
        [],
        /at '\/computeTypes\/cpu-general\/requests\/cpu': 'lots' does not match pattern/,
      ],
      [
        "a budget that is neither a number nor a percentage",
        { podDisruptionBudget: { minAvailable: "half" } },
        [],
        /at '\/podDisruptionBudget\/minAvailable': 'half' does not match pattern/,
      ],
      ["a scrape interval Prometheus cannot read", { metrics: { serviceMonitor: { interval: "1 minute" } } }, [], /at '\/metrics\/serviceMonitor\/interval'/],
      [
        "an unknown Ingress pathType",
        { ingress: { hosts: [{ host: "a.example", paths: [{ path: "/", pathType: "Regex" }] }] } },
        [],
        /at '\/ingress\/hosts\/0\/paths\/0\/pathType': value must be one of/,
      ],
      ["a negative preStop sleep", { lifecycle: { preStopSleepSeconds: -5 } }, [], /at '\/lifecycle\/preStopSleepSeconds': minimum: got -5, want 0/],
    ])("refuses %s before rendering, naming the value", async (_, values, args, message) => {
      const failure = await refusal(values, args);
      expect(failure).toMatch(/values don't meet the specifications of the schema/);
      expect(failure).toMatch(message);
    });

    it("refuses replicaCount=two in helm lint too", async () => {
      const failed = await execFile(helm, ["lint", CHART, "-f", valuesFile({}), "--set", "replicaCount=two"]).then(
        () => "linted",
        (err: { stdout?: string }) => err.stdout ?? String(err),
      );
      expect(failed).toMatch(/at '\/replicaCount': got string, want integer/);
    });

    it("takes numbers and booleans from --set for settings, and hands the binary what it parses", async () => {
      const docs = await render({}, [
        "--set",
        "config.CODEPLANE_LOG_MAX_BYTES=20971520",
        "--set",
        "config.CODEPLANE_TRUST_PROXY=true",
        "--set",
        "config.PORT=8090",
      ]);
      const e = env(docs);
      expect([e.CODEPLANE_LOG_MAX_BYTES, e.CODEPLANE_TRUST_PROXY, e.PORT]).toEqual(["20971520", "true", "8090"]);
      // From a values file a number arrives as a float; it must not become 1.048576e+07.
      const fromFile = env(await render({ config: { CODEPLANE_LOG_MAX_BYTES: 10485760, CODEPLANE_RATE_LIMIT_REQUESTS: 0 } }));
      expect([fromFile.CODEPLANE_LOG_MAX_BYTES, fromFile.CODEPLANE_RATE_LIMIT_REQUESTS]).toEqual(["10485760", "0"]);
      const config = configFromEnv(e);
      expect([config.runs.logMaxBytes, config.http.trustProxy, config.http.port]).toEqual([20971520, true, 8090]);
    });

    it("describes every value and gives the default values.yaml has", () => {
      const problems: string[] = [];
      const walk = (node: any, value: unknown, at: string) => {
        if (!node) return void problems.push(`${at}: not in the schema`);
        if (!node.description) problems.push(`${at}: no description`);
        if ("default" in node) {
          try {
            expect(node.default).toEqual(value);
          } catch {
            problems.push(`${at}: default ${JSON.stringify(node.default)} but values.yaml has ${JSON.stringify(value)}`);
          }
        } else if (typeof value !== "object" || value === null || Array.isArray(value) || !node.properties) {
          problems.push(`${at}: no default`);
        }
        if (node.properties && value && typeof value === "object" && !Array.isArray(value)) {
          for (const [k, v] of Object.entries(value)) walk(node.properties[k], v, `${at}.${k}`);
          for (const k of Object.keys(node.properties)) if (!(k in value) && k !== "global") problems.push(`${at}.${k}: in the schema, not in values.yaml`);
          if (node.additionalProperties !== false) problems.push(`${at}: additionalProperties is not false`);
        }
      };
      walk(schema, values, "values");
      expect(problems).toEqual([]);
    });

    it("is what the chart's README lists (node test/chart/values-doc.ts rewrites the table)", () => {
      const readme = readFileSync(CHART_README, "utf8");
      expect(readme).toBe(withTable(readme));
    });

    it("lists under config every setting of the binary that the chart does not set itself", () => {
      const source = readFileSync(path.join(root, "src/config.ts"), "utf8");
      const body = source.slice(source.indexOf("const envSchema = z.object({"), source.indexOf("\n});", source.indexOf("const envSchema")));
      const settings = [...body.matchAll(/^ {2}([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1]!);
      expect(settings.length).toBeGreaterThan(40);
      // From the Secrets the chart mounts (envFrom), or meaningless in a pod.
      const fromSecrets = [
        "DATABASE_URL",
        "CODEPLANE_ENCRYPTION_KEY",
        "CODEPLANE_ENCRYPTION_KEY_ID",
        "CODEPLANE_ENCRYPTION_OLD_KEYS",
        "CODEPLANE_BOOTSTRAP_API_KEY",
        "CODEPLANE_GITHUB_PRIVATE_KEY",
        "CODEPLANE_GITHUB_WEBHOOK_SECRET",
        "CODEPLANE_GITHUB_WEBHOOK_OLD_SECRETS",
        "CODEPLANE_OIDC_CLIENT_SECRET",
        "CODEPLANE_S3_ACCESS_KEY_ID",
        "CODEPLANE_S3_SECRET_ACCESS_KEY",
        "KUBECONFIG",
      ];
      const configKeys = Object.keys(schema.properties.config.properties);
      return render().then((docs) => {
        const setByChart = Object.keys(env(docs)).filter((k) => !configKeys.includes(k));
        const unlisted = settings.filter((k) => !configKeys.includes(k) && !setByChart.includes(k) && !fromSecrets.includes(k));
        expect(unlisted, "settings neither in config nor set by the chart").toEqual([]);
        expect(
          configKeys.filter((k) => !settings.includes(k)),
          "config keys the binary does not read",
        ).toEqual([]);
        expect(
          setByChart.filter((k) => !settings.includes(k)),
          "variables the chart sets that the binary does not read",
        ).toEqual([]);
      });
    });
  });

  describe("images", () => {
    const DIGEST = `sha256:${"a".repeat(64)}`;
    const RUNNER_DIGEST = `sha256:${"b".repeat(64)}`;

    it("defaults to the images make images builds and imports into the local cluster", async () => {
      const docs = await render();
      const e = env(docs);
      expect(container(docs).image).toBe("docker.io/library/codeplane:dev");
      expect(container(docs).imagePullPolicy).toBe("IfNotPresent");
      expect(e.CODEPLANE_IMAGE).toBe("docker.io/library/codeplane:dev");
      expect(e.CODEPLANE_RUNNER_IMAGE).toBe("docker.io/library/codeplane-runner:dev");
      expect(e.CODEPLANE_IMAGE_PULL_POLICY).toBe("IfNotPresent");
      expect(configFromEnv(e).runs).toMatchObject({
        codeplaneImage: e.CODEPLANE_IMAGE,
        runnerImage: e.CODEPLANE_RUNNER_IMAGE,
        imagePullPolicy: "IfNotPresent",
      });
    });

    it("builds registry/repository:tag, lets a digest win over the tag, and falls back to appVersion", async () => {
      const docs = await render({
        image: { registry: "registry.example.com", repository: "platform/codeplane", tag: "1.2.3", digest: DIGEST, pullPolicy: "Always" },
        runnerImage: { registry: "", repository: "mirror/runner", tag: "", pullPolicy: "Never" },
      });
      const e = env(docs);
      expect(container(docs).image).toBe(`registry.example.com/platform/codeplane@${DIGEST}`);
      expect(container(docs).imagePullPolicy).toBe("Always");
      expect(e.CODEPLANE_IMAGE).toBe(`registry.example.com/platform/codeplane@${DIGEST}`);
      expect(e.CODEPLANE_RUNNER_IMAGE).toBe("mirror/runner:0.1.0");
      expect(e.CODEPLANE_IMAGE_PULL_POLICY).toBe("Never");
      const tagged = env(await render({ runnerImage: { tag: "7", digest: RUNNER_DIGEST } }));
      expect(tagged.CODEPLANE_RUNNER_IMAGE).toBe(`docker.io/library/codeplane-runner@${RUNNER_DIGEST}`);
    });

    it("gives the API pods the pull secrets and passes their names to the binary for run and analysis pods", async () => {
      const none = await render();
      expect(podSpec(none).imagePullSecrets).toBeUndefined();
      expect(env(none).CODEPLANE_IMAGE_PULL_SECRETS).toBe("");
      expect(configFromEnv(env(none)).runs.imagePullSecrets).toEqual([]);
      const docs = await render({ imagePullSecrets: [{ name: "regcred" }, { name: "mirror.pull" }] });
      expect(podSpec(docs).imagePullSecrets).toEqual([{ name: "regcred" }, { name: "mirror.pull" }]);
      expect(env(docs).CODEPLANE_IMAGE_PULL_SECRETS).toBe("regcred,mirror.pull");
      expect(configFromEnv(env(docs)).runs.imagePullSecrets).toEqual(["regcred", "mirror.pull"]);
    });
  });

  describe("availability and placement", () => {
    const budget = (docs: K8sObject[]) => docs.filter((d) => d.kind === "PodDisruptionBudget");
    const SELECTOR = { "app.kubernetes.io/name": "codeplane", "app.kubernetes.io/instance": RELEASE };

    it("has a PodDisruptionBudget only with more than one replica", async () => {
      const [pdb, ...more] = budget(await render());
      expect(more).toEqual([]);
      expect(pdb!.spec).toEqual({ selector: { matchLabels: SELECTOR }, minAvailable: 1, unhealthyPodEvictionPolicy: "AlwaysAllow" });
      expect(budget(await render({ replicaCount: 1 }))).toEqual([]);
      expect(budget(await render({ podDisruptionBudget: { enabled: false } }))).toEqual([]);
      const [pct] = budget(await render({ replicaCount: 4, podDisruptionBudget: { maxUnavailable: "50%", unhealthyPodEvictionPolicy: "" } }));
      expect(pct!.spec).toEqual({ selector: { matchLabels: SELECTOR }, maxUnavailable: "50%" });
    });

    it("spreads two or more replicas over nodes softly unless told otherwise", async () => {
      expect(podSpec(await render()).topologySpreadConstraints).toEqual([
        {
          maxSkew: 1,
          topologyKey: "kubernetes.io/hostname",
          whenUnsatisfiable: "ScheduleAnyway",
          labelSelector: { matchLabels: SELECTOR },
          matchLabelKeys: ["pod-template-hash"],
        },
      ]);
      expect(podSpec(await render({ replicaCount: 1 })).topologySpreadConstraints).toBeUndefined();
      expect(podSpec(await render({ defaultTopologySpread: false })).topologySpreadConstraints).toBeUndefined();
      const zones = podSpec(
        await render({
          topologySpreadConstraints: [
            { maxSkew: 1, topologyKey: "topology.kubernetes.io/zone", whenUnsatisfiable: "DoNotSchedule" },
            { maxSkew: 2, topologyKey: "kubernetes.io/hostname", whenUnsatisfiable: "ScheduleAnyway", labelSelector: { matchLabels: { tier: "api" } } },
          ],
        }),
      ).topologySpreadConstraints;
      expect(zones).toEqual([
        { maxSkew: 1, topologyKey: "topology.kubernetes.io/zone", whenUnsatisfiable: "DoNotSchedule", labelSelector: { matchLabels: SELECTOR } },
        { maxSkew: 2, topologyKey: "kubernetes.io/hostname", whenUnsatisfiable: "ScheduleAnyway", labelSelector: { matchLabels: { tier: "api" } } },
      ]);
    });

    it("passes priority class, node selection, pod annotations and labels through", async () => {
      const docs = await render({
        priorityClassName: "platform-critical",
        nodeSelector: { pool: "system" },
        tolerations: [{ key: "dedicated", operator: "Equal", value: "platform", effect: "NoSchedule" }],
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: "arch", operator: "In", values: ["amd64"] }] }] },
          },
        },
        podAnnotations: { "example.com/team": "platform" },
        podLabels: { "example.com/cost-center": "42" },
      });
      const pod = find(docs, "Deployment", FULLNAME).spec.template;
      expect(pod.spec.priorityClassName).toBe("platform-critical");
      expect(pod.spec.nodeSelector).toEqual({ pool: "system" });
      expect(pod.spec.tolerations).toHaveLength(1);
      expect(pod.spec.affinity.nodeAffinity).toBeDefined();
      expect(pod.metadata.annotations["example.com/team"]).toBe("platform");
      expect(pod.metadata.labels["example.com/cost-center"]).toBe("42");
      expect(podSpec(await render()).priorityClassName).toBeUndefined();
    });

    it("runs as a ServiceAccount it creates or one that exists, with annotations for workload identity", async () => {
      const docs = await render({ serviceAccount: { annotations: { "eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/codeplane" } } });
      const sa = find(docs, "ServiceAccount", FULLNAME);
      expect(sa.metadata.annotations).toEqual({ "eks.amazonaws.com/role-arn": "arn:aws:iam::1:role/codeplane" });
      expect(podSpec(docs).serviceAccountName).toBe(FULLNAME);
      const existing = await render({ serviceAccount: { create: false, name: "platform-codeplane" } });
      expect(existing.filter((d) => d.kind === "ServiceAccount")).toEqual([]);
      expect(podSpec(existing).serviceAccountName).toBe("platform-codeplane");
      expect(find(existing, "RoleBinding", FULLNAME).spec ?? (find(existing, "RoleBinding", FULLNAME) as any).subjects).toBeDefined();
      expect((find(existing, "RoleBinding", FULLNAME) as any).subjects).toEqual([
        { kind: "ServiceAccount", name: "platform-codeplane", namespace: RELEASE_NS },
      ]);
      const noRbac = await render({ rbac: { create: false } });
      expect(noRbac.filter((d) => d.kind === "Role" || d.kind === "RoleBinding")).toEqual([]);
    });
  });

  describe("labels", () => {
    const everything = {
      ingress: { enabled: true, hosts: [{ host: "codeplane.example.com" }] },
      httpRoute: { enabled: true, parentRefs: [{ name: "gw" }] },
      metrics: { serviceMonitor: { enabled: true }, podMonitor: { enabled: true } },
      commonLabels: { "example.com/team": "platform" },
    };

    it("puts the recommended labels, helm.sh/chart and commonLabels on every object", async () => {
      // The helm test pod is apart (test/chart/helm-test-hook.test.ts): it must not carry the API pods' selector.
      const docs = await render(everything, ["--skip-tests"]);
      expect(docs.map((d) => d.kind).sort()).toEqual(
        [
          "CustomResourceDefinition",
          "CustomResourceDefinition",
          "Deployment",
          "HTTPRoute",
          "Ingress",
          "Namespace",
          "NetworkPolicy",
          "PodDisruptionBudget",
          "PodMonitor",
          "Role",
          "RoleBinding",
          "Service",
          "ServiceAccount",
          "ServiceMonitor",
        ].sort(),
      );
      for (const d of docs) {
        expect(d.metadata.labels, `${d.kind}/${d.metadata.name}`).toMatchObject({
          "app.kubernetes.io/name": "codeplane",
          "app.kubernetes.io/instance": RELEASE,
          "app.kubernetes.io/version": "0.1.0",
          "app.kubernetes.io/managed-by": "Helm",
          "app.kubernetes.io/component": expect.stringMatching(/^(server|runs|crds)$/),
          "app.kubernetes.io/part-of": "codeplane",
          "helm.sh/chart": expect.stringMatching(/^codeplane-\d+\.\d+\.\d+/),
          "example.com/team": "platform",
        });
      }
      expect(find(docs, "Namespace", RUN_NS).metadata.labels!["app.kubernetes.io/component"]).toBe("runs");
    });

    it("labels the API pods so that the workload selector never picks them", async () => {
      const labels = find(await render(everything), "Deployment", FULLNAME).spec.template.metadata.labels as Record<string, string>;
      expect(labels).toMatchObject({ "app.kubernetes.io/component": "server", "app.kubernetes.io/managed-by": "Helm" });
      const matches =
        Object.entries(WORKLOAD_POD_SELECTOR.matchLabels!).every(([k, v]) => labels[k] === v) &&
        WORKLOAD_POD_SELECTOR.matchExpressions!.every((x) => x.values!.includes(labels[x.key]!));
      expect(matches).toBe(false);
    });
  });

  describe("metrics", () => {
    it("renders no monitor and no scrape annotation by default", async () => {
      const docs = await render();
      expect(docs.filter((d) => d.kind === "ServiceMonitor" || d.kind === "PodMonitor")).toEqual([]);
      expect(Object.keys(find(docs, "Deployment", FULLNAME).spec.template.metadata.annotations)).toEqual(["checksum/config"]);
    });

    it("has a ServiceMonitor on the Service's metrics port", async () => {
      const docs = await render({
        metrics: { serviceMonitor: { enabled: true, labels: { release: "kube-prometheus-stack" }, interval: "30s", namespace: "monitoring" } },
      });
      const monitor = find(docs, "ServiceMonitor", FULLNAME);
      expect(monitor.apiVersion).toBe("monitoring.coreos.com/v1");
      expect(monitor.metadata.namespace).toBe("monitoring");
      expect(monitor.metadata.labels!.release).toBe("kube-prometheus-stack");
      expect(monitor.spec.namespaceSelector).toEqual({ matchNames: [RELEASE_NS] });
      expect(monitor.spec.endpoints).toEqual([{ port: "metrics", path: "/metrics", interval: "30s", honorLabels: false }]);
      // It selects this release's Service, on a port that Service has, which leads to the metrics listener.
      const service = find(docs, "Service", FULLNAME);
      expect(service.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
      expect(service.spec.ports.find((p: { name: string }) => p.name === "metrics")).toEqual({ name: "metrics", port: 9090, targetPort: "metrics" });
      expect(
        docs.filter((d) => d.kind === "Service" && Object.entries(monitor.spec.selector.matchLabels).every(([k, v]) => d.metadata.labels?.[k] === v)),
      ).toHaveLength(1);
    });

    it("has a PodMonitor on the pods' metrics port", async () => {
      const docs = await render({ metrics: { podMonitor: { enabled: true, scrapeTimeout: "10s" } } });
      const monitor = find(docs, "PodMonitor", FULLNAME);
      expect(monitor.metadata.namespace).toBe(RELEASE_NS);
      expect(monitor.spec.podMetricsEndpoints).toEqual([{ port: "metrics", path: "/metrics", scrapeTimeout: "10s", honorLabels: false }]);
      const pod = find(docs, "Deployment", FULLNAME).spec.template;
      expect(pod.metadata.labels).toMatchObject(monitor.spec.selector.matchLabels);
      expect(pod.spec.containers[0].ports).toContainEqual({ name: "metrics", containerPort: 9090 });
    });

    it("annotates the pods for annotation-based scraping, on the port /metrics is served on", async () => {
      const annotations = (docs: K8sObject[]) => find(docs, "Deployment", FULLNAME).spec.template.metadata.annotations;
      expect(annotations(await render({ metrics: { scrapeAnnotations: true } }))).toMatchObject({
        "prometheus.io/scrape": "true",
        "prometheus.io/port": "9090",
        "prometheus.io/path": "/metrics",
      });
      // Without a metrics port, /metrics is on PORT and so are the monitors.
      const shared = await render({ config: { CODEPLANE_METRICS_PORT: "" }, metrics: { scrapeAnnotations: true, serviceMonitor: { enabled: true } } });
      expect(annotations(shared)["prometheus.io/port"]).toBe("8080");
      expect(find(shared, "ServiceMonitor", FULLNAME).spec.endpoints[0].port).toBe("http");
    });
  });

  describe("extra environment and volumes", () => {
    it("passes the GitHub App's secrets from github.existingSecret and its other settings from config, which the binary accepts", async () => {
      expect(container(await render()).envFrom).not.toContainEqual({ secretRef: { name: "codeplane-github" } });
      const docs = await render({
        github: { existingSecret: "codeplane-github" },
        config: { CODEPLANE_GITHUB_APP_ID: 12345, CODEPLANE_GITHUB_APP_SLUG: "codeplane", CODEPLANE_PUBLIC_URL: "https://codeplane.example.com" },
      });
      const c = container(docs);
      expect(c.envFrom).toContainEqual({ secretRef: { name: "codeplane-github" } });
      const e = env(docs);
      expect([e.CODEPLANE_GITHUB_APP_ID, e.CODEPLANE_GITHUB_APP_SLUG, e.CODEPLANE_PUBLIC_URL]).toEqual(["12345", "codeplane", "https://codeplane.example.com"]);
      const key = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs1", format: "pem" }).toString();
      const config = configFromEnv({ ...e, CODEPLANE_GITHUB_PRIVATE_KEY: key, CODEPLANE_GITHUB_WEBHOOK_SECRET: "from-the-secret" });
      expect(config.github).toMatchObject({ appId: "12345", appSlug: "codeplane", apiUrl: "https://api.github.com", webUrl: "https://github.com" });
      // Without the Secret's keys the binary refuses to start, naming them.
      expect(() => configFromEnv(e)).toThrow(/CODEPLANE_GITHUB_PRIVATE_KEY: required for the GitHub App/);
    });

    it("keeps objects in a folder by default, and in a bucket with keys from objectStore.existingSecret, which the binary accepts", async () => {
      const plain = await render();
      expect(configFromEnv(env(plain)).objectStore).toEqual({ kind: "directory", dir: "/var/lib/codeplane/objects" });
      expect(container(plain).envFrom).not.toContainEqual({ secretRef: { name: "codeplane-s3" } });
      const docs = await render({
        objectStore: { existingSecret: "codeplane-s3" },
        config: {
          CODEPLANE_OBJECT_STORE: "s3",
          CODEPLANE_S3_ENDPOINT: "http://minio.storage:9000",
          CODEPLANE_S3_BUCKET: "codeplane-envs",
          CODEPLANE_S3_FORCE_PATH_STYLE: true,
        },
      });
      expect(container(docs).envFrom).toContainEqual({ secretRef: { name: "codeplane-s3" } });
      const e = env(docs);
      expect(Object.keys(e).filter((k) => k.startsWith("CODEPLANE_S3_") && k.includes("KEY"))).toEqual([]);
      const config = configFromEnv({ ...e, CODEPLANE_S3_ACCESS_KEY_ID: "AK", CODEPLANE_S3_SECRET_ACCESS_KEY: "from-the-secret" });
      expect(config.objectStore).toEqual({
        kind: "s3",
        s3: {
          endpoint: "http://minio.storage:9000",
          bucket: "codeplane-envs",
          region: "us-east-1",
          forcePathStyle: true,
          accessKeyId: "AK",
          secretAccessKey: "from-the-secret",
        },
      });
    });

    it("adds extraEnv, extraEnvFrom, extraVolumes and extraVolumeMounts after the chart's own", async () => {
      const docs = await render({
        extraEnv: [
          { name: "NODE_EXTRA_CA_CERTS", value: "/etc/codeplane/ca/ca.crt" },
          { name: "FROM_SECRET", valueFrom: { secretKeyRef: { name: "s", key: "k" } } },
        ],
        extraEnvFrom: [{ configMapRef: { name: "codeplane-extra" } }],
        extraVolumes: [{ name: "ca", configMap: { name: "internal-ca" } }],
        extraVolumeMounts: [{ name: "ca", mountPath: "/etc/codeplane/ca", readOnly: true }],
      });
      const c = container(docs);
      expect(c.env.slice(-2)).toEqual([
        { name: "NODE_EXTRA_CA_CERTS", value: "/etc/codeplane/ca/ca.crt" },
        { name: "FROM_SECRET", valueFrom: { secretKeyRef: { name: "s", key: "k" } } },
      ]);
      expect(c.envFrom.at(-1)).toEqual({ configMapRef: { name: "codeplane-extra" } });
      expect(c.envFrom.slice(0, 2)).toEqual([{ secretRef: { name: "codeplane-db" } }, { secretRef: { name: "codeplane-keys" } }]);
      expect(podSpec(docs).volumes.at(-1)).toEqual({ name: "ca", configMap: { name: "internal-ca" } });
      expect(c.volumeMounts.at(-1)).toEqual({ name: "ca", mountPath: "/etc/codeplane/ca", readOnly: true });
      expect(new Set(c.env.map((e: { name: string }) => e.name)).size).toBe(c.env.length);
    });

    it.each<[string, object, RegExp]>([
      [
        "a variable under config",
        { extraEnv: [{ name: "CODEPLANE_LOG_LEVEL", value: "debug" }] },
        /extraEnv: CODEPLANE_LOG_LEVEL is set by the chart; set config.CODEPLANE_LOG_LEVEL instead/,
      ],
      [
        "a variable the chart derives from its values",
        { extraEnv: [{ name: "CODEPLANE_NAMESPACE", value: "elsewhere" }] },
        /extraEnv: CODEPLANE_NAMESPACE is set by the chart from its values/,
      ],
    ])("refuses extraEnv naming %s", async (_, values, message) => {
      expect(await refusal(values)).toMatch(message);
    });
  });

  describe("Ingress and HTTPRoute", () => {
    /** The Service port a backend names, by name or number. */
    const servicePort = (docs: K8sObject[], ref: { name?: string; number?: number }) =>
      find(docs, "Service", FULLNAME).spec.ports.find((p: { name: string; port: number }) => (ref.name ? p.name === ref.name : p.port === ref.number));

    it("routes every Ingress path to the Service's http port, which is the API's", async () => {
      const docs = await render({
        ingress: {
          enabled: true,
          className: "nginx",
          annotations: { "nginx.ingress.kubernetes.io/proxy-buffering": "off" },
          hosts: [
            {
              host: "codeplane.example.com",
              paths: [
                { path: "/", pathType: "Prefix" },
                { path: "/v1", pathType: "Prefix" },
              ],
            },
            { host: "cp.example.org" },
          ],
          tls: [{ hosts: ["codeplane.example.com"], secretName: "codeplane-tls" }],
        },
      });
      const ingress = find(docs, "Ingress", FULLNAME);
      expect(ingress.spec.ingressClassName).toBe("nginx");
      expect(ingress.metadata.annotations).toEqual({ "nginx.ingress.kubernetes.io/proxy-buffering": "off" });
      expect(ingress.spec.tls).toEqual([{ hosts: ["codeplane.example.com"], secretName: "codeplane-tls" }]);
      const backends = (
        ingress.spec.rules as {
          host: string;
          http: { paths: { path: string; backend: { service: { name: string; port: { name?: string; number?: number } } } }[] };
        }[]
      ).flatMap((r) => r.http.paths.map((p) => [r.host, p.path, p.backend.service] as const));
      expect(backends.map(([host, p]) => `${host}${p}`)).toEqual(["codeplane.example.com/", "codeplane.example.com/v1", "cp.example.org/"]);
      for (const [, , service] of backends) {
        expect(service).toEqual({ name: FULLNAME, port: { name: "http" } });
        expect(servicePort(docs, service.port)).toEqual({ name: "http", port: 80, targetPort: "http" });
      }
      expect(container(docs).ports.find((p: { name: string }) => p.name === "http").containerPort).toBe(8080);
      expect(JSON.stringify(ingress.spec)).not.toMatch(/git|metrics|8081|9090/);
    });

    it("attaches an HTTPRoute to the given Gateways, to the http port only", async () => {
      const docs = await render({
        service: { port: 8000 },
        httpRoute: { enabled: true, parentRefs: [{ name: "public", namespace: "gateway-system", sectionName: "https" }], hostnames: ["codeplane.example.com"] },
      });
      const route = find(docs, "HTTPRoute", FULLNAME);
      expect(route.apiVersion).toBe("gateway.networking.k8s.io/v1");
      expect(route.spec.parentRefs).toEqual([{ name: "public", namespace: "gateway-system", sectionName: "https" }]);
      expect(route.spec.hostnames).toEqual(["codeplane.example.com"]);
      expect(route.spec.rules).toEqual([{ matches: [{ path: { type: "PathPrefix", value: "/" } }], backendRefs: [{ name: FULLNAME, port: 8000 }] }]);
      expect(servicePort(docs, { number: 8000 })).toEqual({ name: "http", port: 8000, targetPort: "http" });
    });

    it("renders neither by default, and refuses them without hosts or Gateways", async () => {
      expect((await render()).filter((d) => d.kind === "Ingress" || d.kind === "HTTPRoute")).toEqual([]);
      expect(await refusal({ ingress: { enabled: true } })).toMatch(/ingress.enabled needs ingress.hosts/);
      expect(await refusal({ httpRoute: { enabled: true } })).toMatch(/httpRoute.enabled needs httpRoute.parentRefs/);
    });
  });

  describe("shutdown", () => {
    const shutdown = (docs: K8sObject[]) => ({ grace: podSpec(docs).terminationGracePeriodSeconds, preStop: container(docs).lifecycle?.preStop });

    it("sleeps before SIGTERM and gives the process its shutdown timeout, with 5 s to spare", async () => {
      const docs = await render();
      expect(shutdown(docs)).toEqual({ grace: 35, preStop: { sleep: { seconds: 5 } } });
      // The same arithmetic over what the binary reads.
      expect(shutdown(docs).grace).toBe(5 + configFromEnv(env(docs)).http.shutdownTimeoutMs / 1000 + 5);
    });

    it.each<[string, object, number, object | undefined]>([
      [
        "a longer sleep and timeout",
        { lifecycle: { preStopSleepSeconds: 10 }, config: { CODEPLANE_SHUTDOWN_TIMEOUT_SECONDS: "40" } },
        55,
        { sleep: { seconds: 10 } },
      ],
      ["the binary's default timeout when config leaves it empty", { config: { CODEPLANE_SHUTDOWN_TIMEOUT_SECONDS: "" } }, 35, { sleep: { seconds: 5 } }],
      ["no preStop hook", { lifecycle: { preStopSleepSeconds: 0 } }, 30, undefined],
    ])("computes the grace period: %s", async (_, values, grace, preStop) => {
      const docs = await render(values);
      expect(shutdown(docs)).toEqual({ grace, preStop });
      const timeout = configFromEnv(env(docs)).http.shutdownTimeoutMs / 1000;
      expect(grace).toBe(((values as { lifecycle?: { preStopSleepSeconds: number } }).lifecycle?.preStopSleepSeconds ?? 5) + timeout + 5);
    });

    it("sleeps with sh on clusters older than 1.30, which lack the sleep action", async () => {
      expect(shutdown(await render({}, ["--kube-version", "1.29.4"])).preStop).toEqual({ exec: { command: ["sh", "-c", "sleep 5"] } });
    });
  });

  describe("CRDs", () => {
    const crds = (docs: K8sObject[]) => docs.filter((d) => d.kind === "CustomResourceDefinition");

    it("are templates (so helm upgrade updates them), kept on uninstall, and equal to what src/resources generates", async () => {
      expect(existsSync(path.join(CHART, "crds")), "the chart's crds/ directory is installed once and never upgraded").toBe(false);
      const rendered = crds(await render());
      const generated = Object.values(renderCrds()).map((text) => parse(text));
      expect(rendered.map((c) => c.metadata.name).sort()).toEqual(generated.map((c) => c.metadata.name).sort());
      for (const crd of rendered) {
        const source = generated.find((g) => g.metadata.name === crd.metadata.name)!;
        expect(crd.spec).toEqual(source.spec);
        expect(crd.metadata.annotations).toEqual({ "helm.sh/resource-policy": "keep" });
        expect(crd.metadata.labels).toMatchObject({ "app.kubernetes.io/component": "crds", "app.kubernetes.io/managed-by": "Helm" });
      }
      // The chart's copy is the generator's output, byte for byte.
      for (const [file, text] of Object.entries(renderCrds())) expect(readFileSync(path.join(CHART, "files/crds", file), "utf8")).toBe(text);
      expect(readdirSync(path.join(CHART, "files/crds")).sort()).toEqual(Object.keys(renderCrds()).sort());
    });

    it("can drop the keep policy, or be left out", async () => {
      for (const crd of crds(await render({ crds: { keep: false } }))) expect(crd.metadata.annotations).toBeUndefined();
      expect(crds(await render({ crds: { install: false } }))).toEqual([]);
    });
  });

  describe("RBAC", () => {
    type Rule = { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] };
    const rules = async () => (find(await render(), "Role", FULLNAME) as unknown as { rules: Rule[] }).rules;
    const grants = (rs: Rule[]) => rs.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g}/${res}:${v}`)))).sort();

    // What each Kubernetes call of the binary needs. A call missing here fails the test: map it, and grant it only if the chart must.
    const CALLS: Record<string, string[]> = {
      createNamespacedCustomObject: ["codeplane.dev/runs:create", "codeplane.dev/analyses:create"],
      getNamespacedCustomObject: ["codeplane.dev/runs:get", "codeplane.dev/analyses:get"],
      listNamespacedCustomObject: ["codeplane.dev/runs:list", "codeplane.dev/analyses:list"],
      patchNamespacedCustomObject: ["codeplane.dev/runs:patch", "codeplane.dev/analyses:patch"],
      patchNamespacedCustomObjectStatus: ["codeplane.dev/runs/status:patch", "codeplane.dev/analyses/status:patch"],
      deleteNamespacedCustomObject: ["codeplane.dev/runs:delete", "codeplane.dev/analyses:delete"],
      createNamespacedJob: ["batch/jobs:create"],
      deleteNamespacedJob: ["batch/jobs:delete"],
      readNamespacedJob: ["batch/jobs:get"],
      listNamespacedJob: ["batch/jobs:list"],
      patchNamespacedJob: ["batch/jobs:patch"],
      patchNamespacedPod: ["/pods:patch"],
      createNamespacedSecret: ["/secrets:create"],
      deleteNamespacedSecret: ["/secrets:delete"],
      listNamespacedPod: ["/pods:list"],
      readNamespacedPod: ["/pods:get"],
      readNamespacedPodLog: ["/pods/log:get"],
      createNamespacedEvent: ["events.k8s.io/events:create"],
      readNamespacedLease: ["coordination.k8s.io/leases:get"],
      createNamespacedLease: ["coordination.k8s.io/leases:create"],
      replaceNamespacedLease: ["coordination.k8s.io/leases:update"],
      readNamespacedNetworkPolicy: ["networking.k8s.io/networkpolicies:get"],
      replaceNamespacedNetworkPolicy: ["networking.k8s.io/networkpolicies:update"],
      createNamespacedNetworkPolicy: ["networking.k8s.io/networkpolicies:create"],
    };
    // Informers list and watch; Log follows read pods/log.
    const INFORMED: Record<string, string[]> = {
      "/apis/batch/v1/namespaces/${ns}/jobs": ["batch/jobs:list", "batch/jobs:watch"],
      "/api/v1/namespaces/${ns}/pods": ["/pods:list", "/pods:watch"],
      "/apis/${GROUP}/${VERSION}/namespaces/${ns}/${x.kind.plural}": [
        "codeplane.dev/runs:list",
        "codeplane.dev/runs:watch",
        "codeplane.dev/analyses:list",
        "codeplane.dev/analyses:watch",
      ],
    };

    function sources(dir: string): string[] {
      return readdirSync(dir, { withFileTypes: true, recursive: true })
        .filter((f) => f.isFile() && f.name.endsWith(".ts") && !f.name.endsWith(".test.ts"))
        .map((f) => path.join(f.parentPath, f.name));
    }

    it("grants exactly what the binary's Kubernetes calls need", async () => {
      // src/k8s/install.ts is scanned too: the pods apply the workload NetworkPolicy with it at start. Its
      // cluster-wide calls (CRDs, the namespace) run only in `codeplane install`, with the operator's credentials.
      // src/controller/kueue.ts calls Kueue's custom objects: the next test maps those.
      const files = [...sources(path.join(root, "src/k8s")), ...sources(path.join(root, "src/controller")), path.join(root, "src/service.ts")].filter(
        (f) => !f.includes("/testing/") && !f.endsWith("/kueue.ts"),
      );
      const needed = new Set<string>();
      const unmapped: string[] = [];
      for (const file of files) {
        const text = readFileSync(file, "utf8");
        for (const [, method] of text.matchAll(/\.((?:create|read|get|list|patch|replace|delete|deleteCollection|watch)Namespaced\w+)\(/g)) {
          if (CALLS[method!]) CALLS[method!]!.forEach((g) => needed.add(g));
          else unmapped.push(`${path.relative(root, file)}: ${method}`);
        }
        for (const [, p] of text.matchAll(/makeInformer<[^>]*>\([^,]+,\s*`([^`]+)`/g)) {
          if (INFORMED[p!]) INFORMED[p!]!.forEach((g) => needed.add(g));
          else unmapped.push(`${path.relative(root, file)}: informer ${p}`);
        }
        if (/followOnce\(|\.log\(\s*target\.namespace/.test(text)) needed.add("/pods/log:get");
      }
      expect(unmapped).toEqual([]);
      // blockOwnerDeletion on the Jobs and Secrets needs the owner's finalizers where OwnerReferencesPermissionEnforcement runs.
      const implied = ["codeplane.dev/runs/finalizers:update", "codeplane.dev/analyses/finalizers:update"];
      expect(grants(await rules())).toEqual([...needed, ...implied].sort());
    });

    it("grants Kueue's objects only with kueue.clusterQueue set, and then exactly what src/controller/kueue.ts calls", async () => {
      const text = readFileSync(path.join(root, "src/controller/kueue.ts"), "utf8");
      const needed = new Set<string>();
      for (const [, verb, plural] of text.matchAll(/\.(get|create|delete|list|patch|replace)NamespacedCustomObject\(\{[^}]*?plural: "(\w+)"/g)) {
        needed.add(`kueue.x-k8s.io/${plural}:${verb === "replace" ? "update" : verb}`);
      }
      expect(needed.size).toBeGreaterThan(0);
      const base = grants(await rules());
      const withKueue = grants((find(await render({ kueue: { clusterQueue: "team" } }), "Role", FULLNAME) as unknown as { rules: Rule[] }).rules);
      expect(base.filter((g) => g.startsWith("kueue"))).toEqual([]);
      expect(withKueue.filter((g) => !base.includes(g))).toEqual([...needed].sort());
    });

    it("creates a ClusterQueue and ResourceFlavor for the run namespace only when asked", async () => {
      expect((await render({ kueue: { clusterQueue: "team" } })).filter((d) => d.kind === "ClusterQueue" || d.kind === "ResourceFlavor")).toEqual([]);
      const docs = await render({ kueue: { clusterQueue: "team", createClusterQueue: true, quota: { cpu: "8", memory: "32Gi" } } });
      const cq = find(docs, "ClusterQueue", "team") as unknown as { spec: Record<string, unknown> };
      expect(find(docs, "ResourceFlavor", "team")).toBeDefined();
      expect(cq.spec).toMatchObject({
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": RUN_NS } },
        queueingStrategy: "StrictFIFO",
        admissionScope: { admissionMode: "UsageBasedAdmissionFairSharing" },
        resourceGroups: [
          {
            coveredResources: ["cpu", "memory"],
            flavors: [
              {
                name: "team",
                resources: [
                  { name: "cpu", nominalQuota: "8" },
                  { name: "memory", nominalQuota: "32Gi" },
                ],
              },
            ],
          },
        ],
      });
      const env = (find(docs, "Deployment", FULLNAME) as any).spec.template.spec.containers[0].env as { name: string; value: string }[];
      expect(env.find((v) => v.name === "CODEPLANE_KUEUE_CLUSTER_QUEUE")?.value).toBe("team");
    });

    it("deletes no pods, reads no Secrets, has no wildcards and keeps the Lease's create apart", async () => {
      const rs = await rules();
      const all = grants(rs);
      expect(all).not.toContain("/pods:delete");
      expect(all.filter((g) => g.startsWith("/secrets:"))).toEqual(["/secrets:create", "/secrets:delete"]);
      expect(JSON.stringify(rs)).not.toContain("*");
      const leases = rs.filter((r) => r.resources.includes("leases"));
      expect(leases).toEqual([
        { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
        { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "update"] },
      ]);
      // The workload NetworkPolicy: created (RBAC cannot name what is created), then read and replaced by its name only.
      expect(rs.filter((r) => r.resources.includes("networkpolicies"))).toEqual([
        { apiGroups: ["networking.k8s.io"], resources: ["networkpolicies"], verbs: ["create"] },
        { apiGroups: ["networking.k8s.io"], resources: ["networkpolicies"], resourceNames: [WORKLOAD_POLICY], verbs: ["get", "update"] },
      ]);
      // A Role in the run namespace, nothing cluster-wide.
      const docs = await render();
      expect(docs.filter((d) => d.kind.startsWith("Cluster"))).toEqual([]);
      expect(find(docs, "Role", FULLNAME).metadata.namespace).toBe(RUN_NS);
    });
  });

  describe("NOTES.txt", () => {
    let notesChart: string;

    beforeAll(() => {
      // helm template does not print NOTES.txt: a copy of the chart renders it through tpl as a comment.
      notesChart = path.join(dir, "notes-chart");
      cpSync(CHART, notesChart, { recursive: true });
      cpSync(path.join(CHART, "templates/NOTES.txt"), path.join(notesChart, "files/NOTES.tpl"));
      writeFileSync(path.join(notesChart, "templates/zz-notes.yaml"), '# {{ tpl (.Files.Get "files/NOTES.tpl") . | replace "\\n" "\\n# " }}\n');
    });

    async function notes(values: object = {}): Promise<string> {
      const { stdout } = await execFile(helm, [
        "template",
        RELEASE,
        notesChart,
        "--namespace",
        RELEASE_NS,
        "-f",
        valuesFile(values),
        "--show-only",
        "templates/zz-notes.yaml",
      ]);
      return stdout.replace(/^# ?/gm, "");
    }

    it("says how to reach the API, seed the first key and find the runs", async () => {
      const text = await notes();
      expect(text).toContain(`kubectl -n ${RELEASE_NS} port-forward svc/${FULLNAME} 8080:80`);
      expect(text).toContain(`kubectl -n ${RELEASE_NS} create secret generic codeplane-bootstrap`);
      expect(text).toContain(
        "--from-literal=CODEPLANE_BOOTSTRAP_API_KEY=$(kubectl -n codeplane exec deploy/cp-codeplane -- node /app/bin/codeplane.mjs keys generate)",
      );
      expect(text).toContain("--set bootstrap.existingSecret=codeplane-bootstrap");
      expect(text).toContain(`kubectl -n ${RUN_NS} get codeplane`);
      // Before it: the category resolves from kubectl's cached discovery, which predates the CRDs after an install.
      expect(text.indexOf("kubectl api-resources --categories codeplane")).toBeGreaterThan(-1);
      expect(text.indexOf("kubectl api-resources --categories codeplane")).toBeLessThan(text.indexOf(`kubectl -n ${RUN_NS} get codeplane`));
      expect(text).toContain("Uninstalling the release deletes that namespace");
      expect(text).toMatch(/locally built :dev/);
    });

    it("reads a seeded key back, names Ingress hosts, Gateways and the run namespace's pull secrets, and warns", async () => {
      const text = await notes({
        replicaCount: 1,
        bootstrap: { existingSecret: "codeplane-bootstrap" },
        ingress: { enabled: true, hosts: [{ host: "codeplane.example.com" }], tls: [{ hosts: ["codeplane.example.com"], secretName: "t" }] },
        httpRoute: { enabled: true, parentRefs: [{ name: "public" }], hostnames: ["cp.example.org"] },
        imagePullSecrets: [{ name: "regcred" }],
        metrics: { serviceMonitor: { enabled: true } },
      });
      expect(text).toContain("kubectl -n codeplane get secret codeplane-bootstrap -o jsonpath='{.data.CODEPLANE_BOOTSTRAP_API_KEY}' | base64 -d");
      expect(text).not.toContain("keys generate");
      expect(text).toContain("https://codeplane.example.com/");
      expect(text).toContain("https://cp.example.org/");
      expect(text).toContain(`kubectl -n ${RUN_NS} create secret docker-registry regcred`);
      expect(text).toMatch(/One replica: no PodDisruptionBudget/);
      expect(text).toMatch(/networkPolicy.metrics.from is empty/);
    });
  });
});
