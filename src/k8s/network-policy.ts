import { isIP } from "node:net";
import type { V1LabelSelector, V1NetworkPolicy, V1NetworkPolicyEgressRule, V1NetworkPolicyPeer, V1NetworkPolicyPort } from "@kubernetes/client-node";
import { METADATA_CIDRS, type EgressMode, type EgressRule } from "../resources/egress.ts";
import { egressSettingsProblems, familyOf, strictlyContains, type GitEndpoint } from "../resources/egress-settings.ts";
import { MANAGED_BY } from "../resources/labels.ts";

// Pure: what run and analysis pods may reach, as a NetworkPolicy. They execute
// other people's code, so they reach DNS, codeplane's git endpoint and what
// the operator allows (a package mirror), and nothing else: no ingress, never
// the metadata address, and with `open` egress still nothing inside the
// cluster. The only author of that policy: `codeplane install` and, with
// Helm, every controller process at start apply what this builds
// (docs/decisions/0100-network-policy-one-author.md).

export const WORKLOAD_POLICY_NAME = "codeplane-workloads";

/** Selects every run, analysis and environment build pod (src/resources/labels.ts) and nothing else codeplane runs. */
export const WORKLOAD_POD_SELECTOR: V1LabelSelector = {
  matchLabels: { ...MANAGED_BY },
  matchExpressions: [{ key: "app.kubernetes.io/component", operator: "In", values: ["run", "analysis", "environment"] }],
};

/** The cluster DNS: CoreDNS and kube-dns both carry `k8s-app: kube-dns` in kube-system. */
export const DNS_PEER: V1NetworkPolicyPeer = {
  namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } },
  podSelector: { matchLabels: { "k8s-app": "kube-dns" } },
};

export interface WorkloadPolicyInput {
  /** The run namespace (CODEPLANE_NAMESPACE). */
  namespace: string;
  name?: string;
  mode: EgressMode;
  allow: readonly EgressRule[];
  /** Closed even with open egress (CODEPLANE_RUN_EGRESS_CLUSTER_CIDRS). */
  clusterCidrs: readonly string[];
  /** null: no git endpoint is configured, so workloads cannot start anyway; nothing is opened for it. */
  git: GitEndpoint | null;
}

export class EgressSettingsError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`run egress settings cannot be enforced:\n${problems.map((p) => `  ${p}`).join("\n")}`);
    this.name = "EgressSettingsError";
    this.problems = problems;
  }
}

// --- the policy ---------------------------------------------------------------

const blockOf = (cidr: string, except: readonly string[]): V1NetworkPolicyPeer => ({
  ipBlock: { cidr, ...(except.length ? { except: [...except] } : {}) },
});

const dedupe = (list: readonly string[]) => [...new Set(list)];

function gitRule(git: GitEndpoint): V1NetworkPolicyEgressRule {
  const ports: V1NetworkPolicyPort[] = [{ protocol: "TCP", port: git.port }];
  if ("ip" in git) return { to: [blockOf(`${git.ip}/${isIP(git.ip) === 4 ? 32 : 128}`, [])], ports };
  return {
    to: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": git.namespace } }, podSelector: { matchLabels: { ...git.podSelector } } }],
    ports,
  };
}

function allowRule(rule: EgressRule): V1NetworkPolicyEgressRule {
  const except = METADATA_CIDRS.filter((m) => strictlyContains(rule.cidr, m));
  const ports = rule.ports.map((p): V1NetworkPolicyPort => ({
    protocol: p.protocol,
    port: p.port,
    ...(p.endPort !== undefined ? { endPort: p.endPort } : {}),
  }));
  return { to: [blockOf(rule.cidr, except)], ...(ports.length ? { ports } : {}) };
}

/** Every address of both families but the metadata ranges and the cluster's. */
function openRule(clusterCidrs: readonly string[]): V1NetworkPolicyEgressRule {
  const closed = (family: 4 | 6) => dedupe([...METADATA_CIDRS, ...clusterCidrs].filter((c) => familyOf(c) === family));
  return { to: [blockOf("0.0.0.0/0", closed(4)), blockOf("::/0", closed(6))] };
}

/**
 * The run namespace's NetworkPolicy for workload pods: no ingress; egress to
 * DNS, the git endpoint and each allowed rule, plus the internet (not the
 * metadata ranges, not the cluster CIDRs) when the mode is `open`. Throws
 * EgressSettingsError for settings it cannot enforce.
 */
export function buildWorkloadNetworkPolicy(input: WorkloadPolicyInput): V1NetworkPolicy {
  const problems = egressSettingsProblems(input);
  if (problems.length) throw new EgressSettingsError(problems);
  const egress: V1NetworkPolicyEgressRule[] = [
    {
      to: [structuredClone(DNS_PEER)],
      ports: [
        { protocol: "UDP", port: 53 },
        { protocol: "TCP", port: 53 },
      ],
    },
    ...(input.git ? [gitRule(input.git)] : []),
    ...input.allow.map(allowRule),
    ...(input.mode === "open" ? [openRule(input.clusterCidrs)] : []),
  ];
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: {
      name: input.name ?? WORKLOAD_POLICY_NAME,
      namespace: input.namespace,
      labels: { "app.kubernetes.io/name": "codeplane", ...MANAGED_BY },
    },
    spec: {
      podSelector: structuredClone(WORKLOAD_POD_SELECTOR),
      // Ingress listed with no rules: nothing may connect to a workload pod.
      policyTypes: ["Ingress", "Egress"],
      egress,
    },
  };
}
