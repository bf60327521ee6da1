import type { V1NetworkPolicy } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { DEFAULT_CLUSTER_CIDRS, METADATA_CIDRS, parseEgressRules, type EgressRule } from "../resources/egress.ts";
import { cidrContains, type GitEndpoint } from "../resources/egress-settings.ts";
import { buildWorkloadNetworkPolicy, EgressSettingsError, type WorkloadPolicyInput } from "./network-policy.ts";

const rules = (text: string): EgressRule[] => {
  const r = parseEgressRules(text);
  if (typeof r === "string") throw new Error(r);
  return r;
};

const IP_GIT: GitEndpoint = { ip: "10.244.0.1", port: 8081 };
const POD_GIT: GitEndpoint = { namespace: "codeplane", podSelector: { "app.kubernetes.io/name": "codeplane", "app.kubernetes.io/instance": "cp" }, port: 8081 };

const input = (over: Partial<WorkloadPolicyInput> = {}): WorkloadPolicyInput => ({
  namespace: "runs",
  mode: "restricted",
  allow: [],
  clusterCidrs: DEFAULT_CLUSTER_CIDRS,
  git: IP_GIT,
  ...over,
});

/**
 * Whether a policy lets a workload pod open a TCP connection to an address
 * outside any namespace (the ipBlock part of the rules), read the way a CNI
 * reads it: some rule whose port list admits the port and one of whose
 * blocks holds the address but none of its `except`s.
 */
function reachable(policy: V1NetworkPolicy, ip: string, port: number, protocol = "TCP"): boolean {
  const host = ip.includes(":") ? `${ip}/128` : `${ip}/32`;
  return (policy.spec!.egress ?? []).some((rule) => {
    const portOk =
      !rule.ports?.length ||
      rule.ports.some((p) => (p.protocol ?? "TCP") === protocol && (p.port === undefined || (port >= Number(p.port) && port <= (p.endPort ?? Number(p.port)))));
    const peerOk = (rule.to ?? []).some(
      (peer) => peer.ipBlock && cidrContains(peer.ipBlock.cidr, host) && !(peer.ipBlock.except ?? []).some((e) => cidrContains(e, host)),
    );
    return portOk && peerOk;
  });
}

describe("buildWorkloadNetworkPolicy", () => {
  it("selects run, analysis and environment build pods, admits no ingress, and in restricted mode allows DNS and the git address only", () => {
    expect(buildWorkloadNetworkPolicy(input())).toEqual({
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: {
        name: "codeplane-workloads",
        namespace: "runs",
        labels: { "app.kubernetes.io/name": "codeplane", "app.kubernetes.io/managed-by": "codeplane" },
      },
      spec: {
        podSelector: {
          matchLabels: { "app.kubernetes.io/managed-by": "codeplane" },
          matchExpressions: [{ key: "app.kubernetes.io/component", operator: "In", values: ["run", "analysis", "environment"] }],
        },
        policyTypes: ["Ingress", "Egress"],
        egress: [
          {
            to: [
              { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } }, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } },
            ],
            ports: [
              { protocol: "UDP", port: 53 },
              { protocol: "TCP", port: 53 },
            ],
          },
          { to: [{ ipBlock: { cidr: "10.244.0.1/32" } }], ports: [{ protocol: "TCP", port: 8081 }] },
        ],
      },
    });
  });

  it("allows codeplane's API pods by namespace and labels in the pods form", () => {
    const policy = buildWorkloadNetworkPolicy(input({ git: POD_GIT, name: "cp-codeplane-workloads" }));
    expect(policy.metadata!.name).toBe("cp-codeplane-workloads");
    expect(policy.spec!.egress![1]).toEqual({
      to: [
        {
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "codeplane" } },
          podSelector: { matchLabels: { "app.kubernetes.io/name": "codeplane", "app.kubernetes.io/instance": "cp" } },
        },
      ],
      ports: [{ protocol: "TCP", port: 8081 }],
    });
  });

  it("allows an IPv6 git address as a /128", () => {
    expect(buildWorkloadNetworkPolicy(input({ git: { ip: "fd00::1", port: 80 } })).spec!.egress![1]!.to).toEqual([{ ipBlock: { cidr: "fd00::1/128" } }]);
  });

  it("opens nothing for git when no endpoint is configured (workloads cannot start then)", () => {
    const egress = buildWorkloadNetworkPolicy(input({ git: null })).spec!.egress!;
    expect(egress).toHaveLength(1);
    expect(egress[0]!.ports).toEqual([
      { protocol: "UDP", port: 53 },
      { protocol: "TCP", port: 53 },
    ]);
  });

  it.each<[string, string, object[]]>([
    ["a CIDR on every port", "10.0.5.0/24", [{ to: [{ ipBlock: { cidr: "10.0.5.0/24" } }] }]],
    [
      "ports, a range and UDP",
      "10.0.5.0/24@443,10.0.5.0/24@8000-8100/tcp,10.0.5.0/24@123/udp",
      [
        {
          to: [{ ipBlock: { cidr: "10.0.5.0/24" } }],
          ports: [
            { protocol: "TCP", port: 443 },
            { protocol: "TCP", port: 8000, endPort: 8100 },
            { protocol: "UDP", port: 123 },
          ],
        },
      ],
    ],
    [
      "one rule per CIDR, in order",
      "192.0.2.7/32@3128,2001:db8::/64@443",
      [
        { to: [{ ipBlock: { cidr: "192.0.2.7/32" } }], ports: [{ protocol: "TCP", port: 3128 }] },
        { to: [{ ipBlock: { cidr: "2001:db8::/64" } }], ports: [{ protocol: "TCP", port: 443 }] },
      ],
    ],
    [
      "CIDRs holding a metadata range keep it out",
      "0.0.0.0/0@443,169.254.0.0/15,fc00::/7@80,::/0",
      [
        { to: [{ ipBlock: { cidr: "0.0.0.0/0", except: ["169.254.0.0/16"] } }], ports: [{ protocol: "TCP", port: 443 }] },
        { to: [{ ipBlock: { cidr: "169.254.0.0/15", except: ["169.254.0.0/16"] } }] },
        { to: [{ ipBlock: { cidr: "fc00::/7", except: ["fd00:ec2::254/128"] } }], ports: [{ protocol: "TCP", port: 80 }] },
        { to: [{ ipBlock: { cidr: "::/0", except: ["fd00:ec2::254/128"] } }] },
      ],
    ],
  ])("allowed rules: %s", (_, allow, expected) => {
    const egress = buildWorkloadNetworkPolicy(input({ allow: rules(allow) })).spec!.egress!;
    expect(egress.slice(2)).toEqual(expected);
  });

  it("in open mode adds both families' internet without the metadata ranges and the cluster CIDRs", () => {
    const egress = buildWorkloadNetworkPolicy(input({ mode: "open" })).spec!.egress!;
    expect(egress).toHaveLength(3);
    expect(egress[2]).toEqual({
      to: [
        { ipBlock: { cidr: "0.0.0.0/0", except: ["169.254.0.0/16", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "127.0.0.0/8"] } },
        { ipBlock: { cidr: "::/0", except: ["fd00:ec2::254/128", "fc00::/7", "fe80::/10", "::1/128"] } },
      ],
    });
  });

  it("in open mode lists a cluster CIDR once even when it repeats a metadata range, and keeps an empty family's metadata range", () => {
    const egress = buildWorkloadNetworkPolicy(input({ mode: "open", clusterCidrs: ["169.254.0.0/16", "10.96.0.0/12"] })).spec!.egress!;
    expect(egress[2]!.to).toEqual([
      { ipBlock: { cidr: "0.0.0.0/0", except: ["169.254.0.0/16", "10.96.0.0/12"] } },
      { ipBlock: { cidr: "::/0", except: ["fd00:ec2::254/128"] } },
    ]);
  });

  it("refuses settings it cannot enforce, naming each", () => {
    const build = () => buildWorkloadNetworkPolicy(input({ allow: rules("169.254.169.254/32@80,fd00:ec2::254/128") }));
    expect(build).toThrow(EgressSettingsError);
    expect(build).toThrow(/169\.254\.169\.254\/32[\s\S]*fd00:ec2::254\/128/);
  });

  it("returns objects it does not share with later calls", () => {
    const a = buildWorkloadNetworkPolicy(input());
    a.spec!.podSelector!.matchLabels!.x = "y";
    (a.spec!.egress![0]!.to![0]!.podSelector!.matchLabels as Record<string, string>)["k8s-app"] = "x";
    expect(buildWorkloadNetworkPolicy(input())).toEqual(buildWorkloadNetworkPolicy(input({})));
    expect(buildWorkloadNetworkPolicy(input()).spec!.podSelector!.matchLabels).toEqual({ "app.kubernetes.io/managed-by": "codeplane" });
  });

  // What each setting lets a workload reach, read back from the policy.
  const METADATA = ["169.254.169.254", "169.254.170.2", "fd00:ec2::254"];
  const INSIDE = ["10.96.0.1", "10.244.0.7", "172.20.0.5", "192.168.1.1", "100.64.0.1", "127.0.0.1", "fd12::1", "fe80::1", "::1"];
  const INTERNET = ["8.8.8.8", "2606:4700::1111"];
  it.each<[string, Partial<WorkloadPolicyInput>, string[], string[]]>([
    ["restricted", {}, ["10.244.0.1"], [...METADATA, ...INSIDE, ...INTERNET]],
    ["open", { mode: "open" }, ["10.244.0.1", ...INTERNET], [...METADATA, ...INSIDE]],
    ["restricted with the whole internet allowed", { allow: rules("0.0.0.0/0,::/0") }, ["10.244.0.1", ...INSIDE, ...INTERNET], METADATA],
    [
      "open with a mirror inside the cluster",
      { mode: "open", allow: rules("10.96.0.0/16@443") },
      ["10.244.0.1", "10.96.0.1", ...INTERNET],
      [...METADATA, "10.244.0.7", "172.20.0.5"],
    ],
  ])("%s: reaches what it should, never the metadata address", (_, over, yes, no) => {
    const policy = buildWorkloadNetworkPolicy(input(over));
    const port = (ip: string) => (ip === "10.244.0.1" ? 8081 : 443);
    for (const ip of yes) expect(reachable(policy, ip, port(ip)), ip).toBe(true);
    for (const ip of no) expect(reachable(policy, ip, port(ip)), ip).toBe(false);
    for (const ip of METADATA) expect(reachable(policy, ip, 80), ip).toBe(false);
  });

  it("keeps the metadata ranges constant (the chart repeats them)", () => {
    expect(METADATA_CIDRS).toEqual(["169.254.0.0/16", "fd00:ec2::254/128"]);
  });
});
