import { isIP } from "node:net";

// What run and analysis pods may reach, as operators write it in
// CODEPLANE_RUN_EGRESS_ALLOW and the Helm values. Pure: parsed here, rendered
// into a NetworkPolicy elsewhere.

export type EgressMode = "restricted" | "open";

export interface EgressPort {
  protocol: "TCP" | "UDP";
  port: number;
  /** Inclusive end of a port range. */
  endPort?: number;
}

export interface EgressRule {
  cidr: string;
  /** Empty: every port. */
  ports: EgressPort[];
}

/** The cloud metadata addresses (IPv4 link-local, AWS's IPv6 one): denied whatever the mode. */
export const METADATA_CIDRS = ["169.254.0.0/16", "fd00:ec2::254/128"] as const;

/**
 * Addresses that are inside a cluster or a private network on most
 * installations (RFC 1918, carrier-grade NAT, loopback, IPv6 unique-local and
 * link-local): open egress still excludes them, so "open" means the internet,
 * not the cluster's Services, nodes and pods.
 */
export const DEFAULT_CLUSTER_CIDRS = [
  "10.0.0.0/8",
  "172.16.0.0/12",
  "192.168.0.0/16",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "fc00::/7",
  "fe80::/10",
  "::1/128",
] as const;

export function isCidr(value: string): boolean {
  const slash = value.indexOf("/");
  if (slash < 0) return false;
  const ip = value.slice(0, slash);
  const bits = value.slice(slash + 1);
  const family = isIP(ip);
  if (!family || !/^[0-9]{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

const PORT = /^([0-9]{1,5})(?:-([0-9]{1,5}))?(?:\/(tcp|udp))?$/i;

/**
 * `CIDR` (every port) or `CIDR@PORT[-END][/tcp|/udp]`, comma-separated; the
 * same CIDR may appear more than once to allow several ports. Returns a
 * message instead when an entry is malformed.
 */
export function parseEgressRules(text: string): EgressRule[] | string {
  const byCidr = new Map<string, EgressRule>();
  for (const entry of text
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean)) {
    const at = entry.indexOf("@");
    const cidr = at < 0 ? entry : entry.slice(0, at);
    if (!isCidr(cidr)) return `'${entry}': '${cidr}' is not a CIDR (write 10.0.0.0/8@443/tcp, or a bare CIDR for every port)`;
    const rule = byCidr.get(cidr) ?? { cidr, ports: [] };
    if (at >= 0) {
      const m = PORT.exec(entry.slice(at + 1));
      const port = m ? Number(m[1]) : NaN;
      const end = m?.[2] ? Number(m[2]) : undefined;
      if (!m || port < 1 || port > 65535 || (end !== undefined && (end < port || end > 65535))) {
        return `'${entry}': the port must be 1-65535, a range 'low-high', optionally followed by /tcp or /udp`;
      }
      rule.ports.push({
        protocol: (m[3]?.toUpperCase() as "TCP" | "UDP" | undefined) ?? "TCP",
        port,
        ...(end !== undefined && end !== port ? { endPort: end } : {}),
      });
    } else if (byCidr.has(cidr) && rule.ports.length) {
      return `'${entry}': ${cidr} is listed both with and without ports`;
    }
    byCidr.set(cidr, rule);
  }
  return [...byCidr.values()];
}
