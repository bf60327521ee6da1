import { BlockList, isIP } from "node:net";
import { lookup as dnsLookup } from "node:dns/promises";
import { DomainValidationError, unavailable } from "../errors.ts";

// Which clone URLs codeplane will fetch from. The server fetches on behalf of
// API callers, so a URL is a server-side request: without this policy a caller
// could make the control plane talk to the cluster network, the cloud metadata
// endpoint or its own filesystem (SSRF).

export type HostLookup = (host: string) => Promise<string[]>;

export interface CloneUrlPolicyOptions {
  /** Operator switch for development and tests: file://, local paths, http://, git:// and private addresses. */
  allowLocal: boolean;
  /** ssh:// and scp-like `git@host:path` URLs; only meaningful where an SSH credential exists. */
  allowSsh?: boolean;
  /** Injected for tests; defaults to the system resolver (all A and AAAA records). */
  lookup?: HostLookup;
}

export type CloneUrlKind = "https" | "http" | "ssh" | "git" | "file" | "path";

export interface InspectedCloneUrl {
  kind: CloneUrlKind;
  /** The URL in the form to hand to git (WHATWG-normalised for URL forms, so git sees the host we checked). */
  url: string;
  /** Host without brackets; null for file:// and local paths. */
  host: string | null;
  /** Explicit or default port; null where it does not apply. */
  port: number | null;
  /**
   * The addresses the host resolved to when the policy checked them (empty
   * when the host was not resolved). Callers can pin the fetch to them so a
   * DNS answer that changes between check and fetch cannot reach a private
   * address.
   */
  addresses: string[];
}

const LOC = ["body", "url"];

function refuse(msg: string): DomainValidationError {
  return new DomainValidationError([{ loc: [...LOC], msg, type: "value_error" }]);
}

// IPv4 ranges that are not the public internet. Kept as data so the IPv6
// forms that embed an IPv4 address (NAT64, 6to4) can be derived from it.
const BLOCKED_V4: [string, number][] = [
  ["0.0.0.0", 8], // "this network", includes the unspecified address
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, includes cloud metadata 169.254.169.254
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, includes broadcast 255.255.255.255
];

const BLOCKED_V6: [string, number][] = [
  ["::", 96], // unspecified, loopback and the deprecated IPv4-compatible form
  ["100::", 64], // discard
  ["2001::", 32], // Teredo tunnels to arbitrary IPv4 hosts
  ["2001:db8::", 32],
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // deprecated site-local
  ["ff00::", 8], // multicast
];

function v4ToHexGroups(addr: string): [string, string] {
  const o = addr.split(".").map(Number) as [number, number, number, number];
  return [((o[0] << 8) | o[1]).toString(16), ((o[2] << 8) | o[3]).toString(16)];
}

function buildBlockList(): BlockList {
  const list = new BlockList();
  for (const [addr, prefix] of BLOCKED_V4) {
    list.addSubnet(addr, prefix, "ipv4");
    const [hi, lo] = v4ToHexGroups(addr);
    // node's BlockList already matches IPv4-mapped (::ffff:a.b.c.d) against IPv4
    // rules; NAT64 and 6to4 embed the IPv4 address elsewhere, so add those forms.
    list.addSubnet(`64:ff9b::${hi}:${lo}`, 96 + prefix, "ipv6");
    list.addSubnet(`64:ff9b:1::${hi}:${lo}`, 96 + prefix, "ipv6");
    list.addSubnet(`2002:${hi}:${lo}::`, 16 + prefix, "ipv6");
  }
  for (const [addr, prefix] of BLOCKED_V6) list.addSubnet(addr, prefix, "ipv6");
  return list;
}

const BLOCKED = buildBlockList();

/** True when the literal IP address is loopback, private, link-local, multicast or otherwise not public. */
export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true; // not an address we can reason about: refuse
  if (family === 6 && address.includes("%")) return true; // scoped (zone id) addresses are link-local by nature
  return BLOCKED.check(address, family === 4 ? "ipv4" : "ipv6");
}

const defaultLookup: HostLookup = async (host) => {
  const answers = await dnsLookup(host, { all: true, verbatim: true });
  return answers.map((a) => a.address);
};

// `user@host:path` without a scheme, as git understands it (a colon before any slash).
const SCP_LIKE = /^(?:([A-Za-z0-9._~-]+)@)?([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):(.*)$/;

interface Parsed {
  kind: CloneUrlKind;
  url: string;
  host: string | null;
  port: number | null;
}

function parse(raw: string, opts: CloneUrlPolicyOptions): Parsed {
  if (typeof raw !== "string" || raw.trim() === "") throw refuse("Clone URL must not be empty");
  const input = raw.trim();
  if (input.length > 2048) throw refuse("Clone URL is too long");
  // Control characters have no place in a URL and could split git's config or log lines.
  if (/[\x00-\x1f\x7f]/.test(input)) throw refuse("Clone URL contains control characters");
  if (input.startsWith("-")) throw refuse("Clone URL must not start with '-'");

  // `<transport>::<address>` selects a git remote helper (ext:: runs commands).
  if (/^[A-Za-z0-9+.-]+::/.test(input)) throw refuse("Clone URL uses an unsupported git transport; use https://");

  const schemeMatch = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(input);
  if (!schemeMatch) {
    if (input.startsWith("/")) {
      if (!opts.allowLocal) throw refuse("Local paths are not allowed as clone URLs; use an https:// URL");
      return { kind: "path", url: input, host: null, port: null };
    }
    const scp = SCP_LIKE.exec(input);
    if (scp && !input.includes("://")) {
      if (!opts.allowSsh) throw refuse("SSH clone URLs are not allowed here; use an https:// URL");
      const host = scp[2]!.replace(/^\[|\]$/g, "");
      if (scp[3] === "" || scp[3]!.startsWith("-")) throw refuse("SSH clone URL has no valid repository path");
      return { kind: "ssh", url: input, host: normaliseHost(host), port: 22 };
    }
    throw refuse("Clone URL must be an absolute https:// URL");
  }

  const scheme = schemeMatch[1]!.toLowerCase();
  let u: URL;
  try {
    u = new URL(input);
  } catch {
    throw refuse("Clone URL is not a valid URL");
  }

  switch (scheme) {
    case "https":
    case "http":
    case "git":
    case "ssh": {
      if (scheme === "http" && !opts.allowLocal) throw refuse("http:// clone URLs are not allowed; use https://");
      if (scheme === "git" && !opts.allowLocal) throw refuse("git:// clone URLs are not allowed; use https://");
      if (scheme === "ssh" && !opts.allowSsh) throw refuse("SSH clone URLs are not allowed here; use an https:// URL");
      if (u.password !== "" || (u.username !== "" && scheme !== "ssh")) {
        // Credentials in a URL end up in logs, process lists and the database.
        throw refuse("Clone URL must not contain credentials; use a credential or integration instead");
      }
      if (u.username.startsWith("-")) throw refuse("Clone URL has an invalid user name");
      const host = u.hostname.replace(/^\[|\]$/g, "");
      if (host === "") throw refuse("Clone URL has no host");
      if (u.pathname === "/" || u.pathname === "") throw refuse("Clone URL has no repository path");
      const defaults: Record<string, number> = { https: 443, http: 80, git: 9418, ssh: 22 };
      const port = u.port === "" ? defaults[scheme]! : Number(u.port);
      const kind = scheme as CloneUrlKind;
      // For ssh the WHATWG parser keeps the host opaque, so normalise the host the way
      // an http URL would be (decimal/octal/hex IPv4 forms) before judging it.
      return { kind, url: u.href, host: scheme === "ssh" ? normaliseHost(host) : host, port };
    }
    case "file":
      if (!opts.allowLocal) throw refuse("file:// clone URLs are not allowed; use an https:// URL");
      if (u.hostname !== "" && u.hostname !== "localhost") throw refuse("file:// URLs must not name a host");
      return { kind: "file", url: u.href, host: null, port: null };
    default:
      throw refuse(`Clone URL scheme '${scheme}' is not supported; use https://`);
  }
}

function normaliseHost(host: string): string {
  // A host starting with '-' would reach ssh as an option (CVE-2017-1000117).
  if (host.startsWith("-") || !/^[A-Za-z0-9._:-]+$/.test(host)) throw refuse("Clone URL has an invalid host");
  if (isIP(host) === 6) return host.toLowerCase();
  try {
    return new URL(`http://${host}/`).hostname;
  } catch {
    throw refuse("Clone URL has an invalid host");
  }
}

function isLocalName(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  return h === "localhost" || h.endsWith(".localhost");
}

/**
 * Checks a clone URL against the policy and, for remote hosts, resolves the
 * host and refuses it if any address is not public. Throws
 * DomainValidationError (loc ["body","url"], type "value_error") when refused,
 * or an "unavailable" DomainError when DNS itself fails transiently.
 */
export async function inspectCloneUrl(url: string, opts: CloneUrlPolicyOptions): Promise<InspectedCloneUrl> {
  const parsed = parse(url, opts);
  if (parsed.host === null || opts.allowLocal) return { ...parsed, addresses: [] };

  const host = parsed.host;
  if (isIP(host) !== 0) {
    if (isBlockedAddress(host)) throw refuse("Clone URL points at a private, loopback or reserved address");
    return { ...parsed, addresses: [host] };
  }
  if (isLocalName(host)) throw refuse("Clone URL points at a private, loopback or reserved address");
  if (!host.includes(".")) throw refuse("Clone URL host must be a fully qualified domain name");

  let addresses: string[];
  try {
    addresses = await (opts.lookup ?? defaultLookup)(host);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "ENOTFOUND" || code === "ENODATA") throw refuse(`Host '${host}' could not be resolved`);
    throw unavailable(`Could not resolve host '${host}'; try again later`, err);
  }
  if (addresses.length === 0) throw refuse(`Host '${host}' could not be resolved`);
  // Any private answer refuses the whole host: the fetch may pick any of them.
  if (addresses.some(isBlockedAddress)) {
    throw refuse("Clone URL resolves to a private, loopback or reserved address");
  }
  return { ...parsed, addresses };
}

/** The policy check alone; see inspectCloneUrl. */
export async function checkCloneUrl(url: string, opts: CloneUrlPolicyOptions): Promise<void> {
  await inspectCloneUrl(url, opts);
}

/**
 * A canonical spelling for storing and comparing clone URLs: trimmed,
 * WHATWG-normalised for URL forms (lower-case host, default port dropped),
 * without trailing slashes. Does not judge the URL; call checkCloneUrl for that.
 */
export function normalizeCloneUrl(url: string): string {
  const input = url.trim();
  let out = input;
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(input)) {
    try {
      out = new URL(input).href;
    } catch {
      out = input;
    }
  }
  return out.length > 1 ? out.replace(/(?<=[^/:])\/+$/, "") : out;
}
