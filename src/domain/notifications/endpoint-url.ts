import { lookup as dnsLookup } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import { DomainValidationError, unavailable } from "../errors.ts";
import { isBlockedAddress, type HostLookup } from "../repositories/clone-url-policy.ts";

// Where webhooks may be sent: the clone URL policy's address rules
// (clone-url-policy.ts: no loopback, private, link-local, metadata or other
// non-public address, names resolved and every answer judged), and its
// operator switch, CODEPLANE_ALLOW_LOCAL_REPOSITORIES, which allows http://
// and local addresses for development and tests. Checked when an endpoint is
// registered or changed, and again at every delivery on the address the
// connection actually uses (guardedLookup), so a name that later resolves to a
// private address is refused then.

export interface EndpointUrlOptions {
  allowLocal: boolean;
  /** Injected for tests; defaults to the system resolver. */
  lookup?: HostLookup;
}

const refuse = (msg: string) => new DomainValidationError([{ loc: ["body", "url"], msg, type: "value_error" }]);

const isLocalName = (host: string) => {
  const h = host.toLowerCase().replace(/\.$/, "");
  return h === "localhost" || h.endsWith(".localhost");
};

/** The checks that need no DNS; returns the parsed URL. */
export function parseEndpointUrl(raw: string, allowLocal: boolean): URL {
  const input = raw.trim();
  if (input === "") throw refuse("Endpoint URL must not be empty");
  if (input.length > 2048) throw refuse("Endpoint URL is too long");
  if (/[\x00-\x1f\x7f]/.test(input)) throw refuse("Endpoint URL contains control characters");
  let u: URL;
  try {
    u = new URL(input);
  } catch {
    throw refuse("Endpoint URL is not a valid URL");
  }
  if (u.protocol === "http:") {
    if (!allowLocal) throw refuse("http:// endpoint URLs are not allowed; use https://");
  } else if (u.protocol !== "https:") throw refuse("Endpoint URL must be an https:// URL");
  if (u.username !== "" || u.password !== "") throw refuse("Endpoint URL must not contain credentials; receivers verify the signature instead");
  if (u.hash !== "") throw refuse("Endpoint URL must not have a fragment");
  const host = u.hostname.replace(/^\[|\]$/g, "");
  if (host === "") throw refuse("Endpoint URL has no host");
  if (allowLocal) return u;
  if (isIP(host) !== 0) {
    if (isBlockedAddress(host)) throw refuse("Endpoint URL points at a private, loopback or reserved address");
    return u;
  }
  if (isLocalName(host)) throw refuse("Endpoint URL points at a private, loopback or reserved address");
  if (!host.includes(".")) throw refuse("Endpoint URL host must be a fully qualified domain name");
  return u;
}

const systemLookup: HostLookup = (host) =>
  new Promise((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (err, answers) => (err ? reject(err) : resolve(answers.map((a) => a.address)))),
  );

/** The whole policy, at registration: the URL's normal form, or a 422 (an "unavailable" error when DNS itself fails for now). */
export async function checkEndpointUrl(raw: string, o: EndpointUrlOptions): Promise<string> {
  const u = parseEndpointUrl(raw, o.allowLocal);
  const host = u.hostname.replace(/^\[|\]$/g, "");
  if (o.allowLocal || isIP(host) !== 0) return u.href;
  let addresses: string[];
  try {
    addresses = await (o.lookup ?? systemLookup)(host);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "ENOTFOUND" || code === "ENODATA") throw refuse(`Host '${host}' could not be resolved`);
    throw unavailable(`Could not resolve host '${host}'; try again later`, err);
  }
  if (addresses.length === 0) throw refuse(`Host '${host}' could not be resolved`);
  if (addresses.some(isBlockedAddress)) throw refuse("Endpoint URL resolves to a private, loopback or reserved address");
  return u.href;
}

/**
 * The resolver a delivery's connection uses: it resolves the name and refuses
 * the connection when any answer is not public (unless local addresses are
 * allowed), so the address checked is the address connected to.
 */
export function guardedLookup(allowLocal: boolean, lookup: HostLookup = systemLookup): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname).then(
      (addresses) => {
        if (addresses.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0);
        if (!allowLocal && addresses.some(isBlockedAddress)) {
          return callback(Object.assign(new Error(`${hostname} resolves to a private, loopback or reserved address`), { code: "EADDRNOTALLOWED" }), "", 0);
        }
        const family = options.family === 4 || options.family === 6 ? options.family : 0;
        const usable = family ? addresses.filter((a) => isIP(a) === family) : addresses;
        if (usable.length === 0) return callback(Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: "ENOTFOUND" }), "", 0);
        if (options.all)
          return callback(
            null,
            usable.map((address) => ({ address, family: isIP(address) })),
            0,
          );
        callback(null, usable[0]!, isIP(usable[0]!));
      },
      (err: unknown) => callback(err as NodeJS.ErrnoException, "", 0),
    );
  };
}
