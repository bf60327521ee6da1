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

// Which addresses a clone URL may reach, reviewed against the IANA IPv4 and
// IPv6 special-purpose address registries (docs/operators/security.md has the decision
// for every range; clone-url-policy.test.ts has a row for each).
//
// IPv4 is a block list: everything that is not globally reachable unicast.
// The globally reachable anycast services in 192.31.196.0/24 (AS112),
// 192.52.193.0/24 (AMT) and 192.175.48.0/24 (AS112 delegation) stay allowed.
const BLOCKED_V4: [string, number][] = [
  ["0.0.0.0", 8], // "this network", includes the unspecified address
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, includes cloud metadata 169.254.169.254
  ["172.16.0.0", 12],
  ["192.0.0.0", 24], // IETF protocol assignments (DS-Lite, NAT64 discovery, ...)
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // deprecated 6to4 relay anycast
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, includes broadcast 255.255.255.255
];

// IPv6 is an allow list: only global unicast (2000::/3) can be a remote git
// server, which refuses at once everything in ::/8 (unspecified, loopback,
// IPv4-mapped ::ffff:0:0/96, IPv4-translated ::ffff:0:0:0/96, IPv4-compatible
// ::/96), 100::/64 discard, 5f00::/16 SRv6, fc00::/7, fe80::/10, fec0::/10,
// ff00::/8 and whatever IANA assigns outside 2000::/3 later. Two exceptions
// and some holes follow.
const GLOBAL_UNICAST_V6: [string, number] = ["2000::", 3];
// NAT64's well-known prefix: IPv6-only clusters with DNS64 reach every IPv4
// host through it, so it is allowed when the IPv4 address it embeds (the low
// 32 bits) is.
const NAT64_WELL_KNOWN: [string, number] = ["64:ff9b::", 96];
// Not remote git servers, although inside 2000::/3.
const BLOCKED_V6: [string, number][] = [
  ["2001::", 23], // IETF protocol assignments: Teredo (2001::/32), benchmarking, ORCHID, AMT, anycast services
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4: deprecated (RFC 7526), embeds any IPv4 address, relays are untrusted
  ["3fff::", 20], // documentation (RFC 9637)
];
// 64:ff9b:1::/48 (local-use NAT64) is outside 2000::/3 and stays refused: its
// translation is whatever the site configured, so nothing can tell what an
// address in it reaches.

function v4ToHexGroups(addr: string): [string, string] {
  const o = addr.split(".").map(Number) as [number, number, number, number];
  return [((o[0] << 8) | o[1]).toString(16), ((o[2] << 8) | o[3]).toString(16)];
}

/** An IPv6 address (already validated by isIP, no zone id) as a 128-bit integer. */
function v6ToBigInt(address: string): bigint {
  let text = address.toLowerCase();
  if (text.includes(".")) {
    // A trailing dotted quad is the last two groups.
    const at = text.lastIndexOf(":");
    const [hi, lo] = v4ToHexGroups(text.slice(at + 1));
    text = `${text.slice(0, at + 1)}${hi}:${lo}`;
  }
  const [head, tail] = text.split("::") as [string, string | undefined];
  const groups = (part: string | undefined) => (part ? part.split(":") : []);
  const before = groups(head);
  const after = groups(tail);
  const all = tail === undefined ? before : [...before, ...Array<string>(8 - before.length - after.length).fill("0"), ...after];
  return all.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

const inPrefix = (n: bigint, [prefix, bits]: [string, number]): boolean => n >> BigInt(128 - bits) === v6ToBigInt(prefix) >> BigInt(128 - bits);

function v4FromBigInt(n: bigint): string {
  const v = Number(n & 0xffffffffn);
  return [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join(".");
}

const BLOCKED = new BlockList();
for (const [addr, prefix] of BLOCKED_V4) BLOCKED.addSubnet(addr, prefix, "ipv4");

/** True when the literal IP address is loopback, private, link-local, multicast or otherwise not public. */
export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true; // not an address we can reason about: refuse
  if (family === 4) return BLOCKED.check(address, "ipv4");
  if (address.includes("%")) return true; // scoped (zone id) addresses are link-local by nature
  const n = v6ToBigInt(address);
  if (inPrefix(n, NAT64_WELL_KNOWN)) return BLOCKED.check(v4FromBigInt(n), "ipv4");
  if (!inPrefix(n, GLOBAL_UNICAST_V6)) return true;
  return BLOCKED_V6.some((range) => inPrefix(n, range));
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

/** Checks every clone URL gets, whatever its form: the trimmed URL. */
function checkedInput(raw: string): string {
  if (typeof raw !== "string" || raw.trim() === "") throw refuse("Clone URL must not be empty");
  const input = raw.trim();
  if (input.length > 2048) throw refuse("Clone URL is too long");
  // Control characters have no place in a URL and could split git's config or log lines.
  if (/[\x00-\x1f\x7f]/.test(input)) throw refuse("Clone URL contains control characters");
  if (input.startsWith("-")) throw refuse("Clone URL must not start with '-'");
  // `<transport>::<address>` selects a git remote helper (ext:: runs commands).
  if (/^[A-Za-z0-9+.-]+::/.test(input)) throw refuse("Clone URL uses an unsupported git transport; use https://");
  return input;
}

/** A clone URL without a scheme: a local path, or scp-like `user@host:path`. */
function parseSchemeless(input: string, opts: CloneUrlPolicyOptions): Parsed {
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

const DEFAULT_PORTS: Record<string, number> = { https: 443, http: 80, git: 9418, ssh: 22 };

/** An https, http, git or ssh URL: each scheme as the options allow, no credentials, a host and a path. */
function parseNetworkUrl(scheme: "https" | "http" | "git" | "ssh", u: URL, opts: CloneUrlPolicyOptions): Parsed {
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
  const port = u.port === "" ? DEFAULT_PORTS[scheme]! : Number(u.port);
  // For ssh the WHATWG parser keeps the host opaque, so normalise the host the way
  // an http URL would be (decimal/octal/hex IPv4 forms) before judging it.
  return { kind: scheme, url: u.href, host: scheme === "ssh" ? normaliseHost(host) : host, port };
}

function parse(raw: string, opts: CloneUrlPolicyOptions): Parsed {
  const input = checkedInput(raw);
  const schemeMatch = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(input);
  if (!schemeMatch) return parseSchemeless(input, opts);

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
    case "ssh":
      return parseNetworkUrl(scheme, u, opts);
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
 * The part of the policy that needs no DNS: scheme, local paths, credentials,
 * literal addresses, local names. Pure and cheap (microseconds), so it runs
 * on every read of a cached mirror as well as before every fetch. Throws like
 * inspectCloneUrl; returns the parsed URL and whether its host still has to be
 * resolved and judged.
 */
export function checkCloneUrlWithoutDns(url: string, opts: CloneUrlPolicyOptions): { parsed: InspectedCloneUrl; needsDns: boolean } {
  const parsed = parse(url, opts);
  if (parsed.host === null || opts.allowLocal) return { parsed: { ...parsed, addresses: [] }, needsDns: false };
  const host = parsed.host;
  if (isIP(host) !== 0) {
    if (isBlockedAddress(host)) throw refuse("Clone URL points at a private, loopback or reserved address");
    return { parsed: { ...parsed, addresses: [host] }, needsDns: false };
  }
  if (isLocalName(host)) throw refuse("Clone URL points at a private, loopback or reserved address");
  if (!host.includes(".")) throw refuse("Clone URL host must be a fully qualified domain name");
  return { parsed: { ...parsed, addresses: [] }, needsDns: true };
}

/**
 * Checks a clone URL against the policy and, for remote hosts, resolves the
 * host and refuses it if any address is not public. Throws
 * DomainValidationError (loc ["body","url"], type "value_error") when refused,
 * or an "unavailable" DomainError when DNS itself fails transiently.
 */
export async function inspectCloneUrl(url: string, opts: CloneUrlPolicyOptions): Promise<InspectedCloneUrl> {
  const { parsed, needsDns } = checkCloneUrlWithoutDns(url, opts);
  if (!needsDns) return parsed;
  const host = parsed.host!;
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
