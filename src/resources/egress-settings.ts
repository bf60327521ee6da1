import { isIP } from "node:net";
import { METADATA_CIDRS, type EgressRule } from "./egress.ts";

// Pure: the address arithmetic and the settings checks behind run egress.
// config.ts refuses settings that cannot be enforced before anything starts,
// and the NetworkPolicy builder (src/k8s/network-policy.ts) refuses them again
// and uses the same arithmetic; neither needs a cluster client, so they live
// with the API types rather than in the adapter.

/**
 * Where pods clone from (codeplane's `/git/`): an address (CODEPLANE_INTERNAL_URL
 * with an IP literal: the API on a node or outside the cluster), or codeplane's
 * API pods (the Helm chart: the URL names a Service, and a NetworkPolicy sees
 * the pods behind it, on their container port).
 */
export type GitEndpoint = { ip: string; port: number } | { namespace: string; podSelector: Record<string, string>; port: number };

// --- addresses --------------------------------------------------------------

interface Prefix {
  family: 4 | 6;
  bits: bigint;
  length: number;
}

function ipBits(ip: string): { family: 4 | 6; bits: bigint } | null {
  const family = isIP(ip);
  if (family === 4) return { family, bits: ip.split(".").reduce((acc, o) => (acc << 8n) | BigInt(o), 0n) };
  if (family !== 6) return null;
  let text = ip.toLowerCase();
  // An embedded IPv4 tail (::ffff:10.0.0.1) becomes its two groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const n = ipBits(v4[1]!)!.bits;
    text = text.slice(0, v4.index) + `${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const groups = (s: string | undefined) => (s ? s.split(":") : []);
  const left = groups(head);
  const right = groups(tail);
  const all = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right];
  return { family, bits: all.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n) };
}

function parsePrefix(cidr: string): Prefix | null {
  const slash = cidr.indexOf("/");
  const ip = ipBits(slash < 0 ? cidr : cidr.slice(0, slash));
  if (!ip) return null;
  const width = ip.family === 4 ? 32 : 128;
  const length = slash < 0 ? width : Number(cidr.slice(slash + 1));
  if (!Number.isInteger(length) || length < 0 || length > width) return null;
  return { ...ip, length };
}

const width = (p: Prefix) => BigInt(p.family === 4 ? 32 : 128);

/** Whether every address of `inner` is in `outer` (the same family; Kubernetes' reading: host bits ignored). */
export function cidrContains(outer: string, inner: string): boolean {
  const o = parsePrefix(outer);
  const i = parsePrefix(inner);
  if (!o || !i || o.family !== i.family || o.length > i.length) return false;
  const shift = width(o) - BigInt(o.length);
  return o.bits >> shift === i.bits >> shift;
}

/** What a NetworkPolicy `except` entry must be: inside the block and smaller than it. */
export const strictlyContains = (outer: string, inner: string) => cidrContains(outer, inner) && parsePrefix(outer)!.length < parsePrefix(inner)!.length;

export const familyOf = (cidr: string): 4 | 6 => (cidr.includes(":") ? 6 : 4);

// --- settings ---------------------------------------------------------------

/**
 * What cannot be turned into a valid policy that keeps the metadata address
 * closed: an allowed CIDR inside a metadata range (it cannot carry that range
 * as an `except`, so it would open the metadata address itself), a git
 * endpoint there, a cluster CIDR covering a whole address family (write
 * `restricted` instead). Empty when the settings are fine.
 */
export function egressSettingsProblems(input: { allow: readonly EgressRule[]; clusterCidrs: readonly string[]; git?: GitEndpoint | null }): string[] {
  const problems: string[] = [];
  for (const rule of input.allow) {
    const inside = METADATA_CIDRS.find((m) => cidrContains(m, rule.cidr));
    if (inside) problems.push(`CODEPLANE_RUN_EGRESS_ALLOW: '${rule.cidr}' lies inside the cloud metadata range ${inside}, which runs may never reach`);
  }
  for (const cidr of input.clusterCidrs) {
    if (parsePrefix(cidr)?.length === 0)
      problems.push(`CODEPLANE_RUN_EGRESS_CLUSTER_CIDRS: '${cidr}' is every address of its family; use CODEPLANE_RUN_EGRESS=restricted to close egress`);
  }
  const git = input.git;
  if (git && "ip" in git) {
    const inside = METADATA_CIDRS.find((m) => cidrContains(m, git.ip));
    if (inside) problems.push(`CODEPLANE_INTERNAL_URL: ${git.ip} lies inside the cloud metadata range ${inside}, which runs may never reach`);
  }
  return problems;
}

/**
 * The git endpoint a NetworkPolicy can name from CODEPLANE_INTERNAL_URL: its
 * host must be an IP literal (the port is the URL's, or 80/443). A DNS name
 * cannot be an ipBlock, and the pods behind it are known only to whoever
 * deployed them (the Helm chart), so a message saying so is returned instead.
 */
export function gitEndpointFromUrl(internalUrl: string): GitEndpoint | string {
  const url = new URL(internalUrl);
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (!isIP(host)) {
    return (
      `CODEPLANE_INTERNAL_URL's host '${host}' is a DNS name, and a NetworkPolicy can only allow run pods to reach an address: ` +
      `set CODEPLANE_INTERNAL_URL to the IP address pods reach codeplane at (for example http://10.244.0.1:8081 on the local cluster), ` +
      `or install with the Helm chart, whose policy allows codeplane's API pods by their labels`
    );
  }
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  return { ip: host, port };
}
