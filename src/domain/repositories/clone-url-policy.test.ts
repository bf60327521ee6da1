import { describe, expect, it } from "vitest";
import { DomainError, DomainValidationError } from "../errors.ts";
import { checkCloneUrl, checkCloneUrlWithoutDns, inspectCloneUrl, isBlockedAddress, normalizeCloneUrl, type HostLookup } from "./clone-url-policy.ts";

// The network is closed in tests and must stay out of them: every lookup is a table.
const DNS: Record<string, string[]> = {
  "github.com": ["140.82.121.3"],
  "gitlab.example.com": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
  "internal.example.com": ["10.1.2.3"],
  "mixed.example.com": ["93.184.216.34", "192.168.1.10"],
  "metadata.example.com": ["169.254.169.254"],
  "v6loop.example.com": ["::1"],
  "mapped.example.com": ["::ffff:127.0.0.1"],
  "ula.example.com": ["fd12:3456::1"],
  "nat64-private.example.com": ["64:ff9b::a00:1"],
  "nat64-public.example.com": ["64:ff9b::8c52:7903"],
  "translated.example.com": ["::ffff:0:a00:1"],
  "nat64-local.example.com": ["64:ff9b:1::8c52:7903"],
  "6to4.example.com": ["2002:8c52:7903::1"],
  "teredo.example.com": ["2001:0:4136:e378:8000:63bf:3fff:fdd2"],
};

const lookup: HostLookup = async (host) => {
  const found = DNS[host];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
  return found;
};

async function refusal(url: string, opts: { allowLocal?: boolean; allowSsh?: boolean } = {}) {
  try {
    await checkCloneUrl(url, { allowLocal: opts.allowLocal ?? false, allowSsh: opts.allowSsh, lookup });
  } catch (err) {
    return err;
  }
  return undefined;
}

describe("checkCloneUrl (production policy)", () => {
  it.each([
    "https://github.com/acme/widgets.git",
    "https://github.com/acme/widgets",
    "https://gitlab.example.com:8443/group/sub/project.git",
    "https://nat64-public.example.com/x/y.git",
    "https://140.82.121.3/acme/widgets.git",
  ])("accepts %s", async (url) => {
    expect(await refusal(url)).toBeUndefined();
  });

  it.each([
    ["http://github.com/acme/widgets.git", "http://"],
    ["git://github.com/acme/widgets.git", "git://"],
    ["file:///srv/repos/x.git", "file://"],
    ["/srv/repos/x.git", "Local paths"],
    ["../x.git", "absolute https"],
    ["x.git", "absolute https"],
    ["ftp://github.com/x.git", "scheme 'ftp'"],
    ["ext::sh -c touch% /tmp/pwned", "unsupported git transport"],
    ["fd::17/x", "unsupported git transport"],
    ["https://user:pass@github.com/acme/widgets.git", "credentials"],
    ["https://token@github.com/acme/widgets.git", "credentials"],
    ["https://github.com/", "no repository path"],
    ["https://github.com", "no repository path"],
    ["", "empty"],
    ["-uhttps://github.com/x", "start with '-'"],
    ["https://github.com/x\n.git", "control characters"],
    ["ssh://git@github.com/acme/widgets.git", "SSH"],
    ["git@github.com:acme/widgets.git", "SSH"],
    ["https://localhost/x.git", "private"],
    ["https://app.localhost/x.git", "private"],
    ["https://127.0.0.1/x.git", "private"],
    ["https://2130706433/x.git", "private"],
    ["https://0x7f.1/x.git", "private"],
    ["https://0177.0.0.1/x.git", "private"],
    ["https://0x7f000001/x.git", "private"],
    ["https://10.0.0.5/x.git", "private"],
    ["https://172.16.0.1/x.git", "private"],
    ["https://172.31.255.255/x.git", "private"],
    ["https://192.168.0.1/x.git", "private"],
    ["https://169.254.169.254/latest/meta-data", "private"],
    ["https://100.64.0.1/x.git", "private"],
    ["https://0.0.0.0/x.git", "private"],
    ["https://224.0.0.1/x.git", "private"],
    ["https://255.255.255.255/x.git", "private"],
    ["https://[::1]/x.git", "private"],
    ["https://[::]/x.git", "private"],
    ["https://[::ffff:127.0.0.1]/x.git", "private"],
    ["https://[::ffff:a9fe:a9fe]/x.git", "private"],
    ["https://[fd00::1]/x.git", "private"],
    ["https://[fe80::1]/x.git", "private"],
    ["https://[ff02::1]/x.git", "private"],
    ["https://[2002:7f00:1::]/x.git", "private"],
    ["https://[::ffff:0:127.0.0.1]/x.git", "private"],
    ["https://[::ffff:0:a9fe:a9fe]/x.git", "private"],
    ["https://[::127.0.0.1]/x.git", "private"],
    ["https://[64:ff9b::127.0.0.1]/x.git", "private"],
    ["https://[64:ff9b:1::8.8.8.8]/x.git", "private"],
    ["https://internal.example.com/x.git", "resolves to a private"],
    ["https://mixed.example.com/x.git", "resolves to a private"],
    ["https://metadata.example.com/x.git", "resolves to a private"],
    ["https://v6loop.example.com/x.git", "resolves to a private"],
    ["https://mapped.example.com/x.git", "resolves to a private"],
    ["https://ula.example.com/x.git", "resolves to a private"],
    ["https://nat64-private.example.com/x.git", "resolves to a private"],
    ["https://translated.example.com/x.git", "resolves to a private"],
    ["https://nat64-local.example.com/x.git", "resolves to a private"],
    ["https://6to4.example.com/x.git", "resolves to a private"],
    ["https://teredo.example.com/x.git", "resolves to a private"],
    ["https://nxdomain.example.com/x.git", "could not be resolved"],
    ["https://intranet/x.git", "fully qualified"],
  ])("refuses %s", async (url, why) => {
    const err = await refusal(url);
    expect(err).toBeInstanceOf(DomainValidationError);
    const issue = (err as DomainValidationError).issues[0]!;
    expect(issue.loc).toEqual(["body", "url"]);
    expect(issue.type).toBe("value_error");
    expect(issue.msg).toContain(why);
    // A refusal must never echo credentials back.
    expect(issue.msg).not.toContain("pass");
  });
});

describe("checkCloneUrl with allowSsh", () => {
  it.each(["ssh://git@github.com/acme/widgets.git", "git@github.com:acme/widgets.git", "github.com:acme/widgets.git"])("accepts %s", async (url) => {
    expect(await refusal(url, { allowSsh: true })).toBeUndefined();
  });

  it.each([
    ["ssh://git:secret@github.com/acme/widgets.git", "credentials"],
    ["git@127.0.0.1:acme/widgets.git", "private"],
    ["git@0x7f.1:acme/widgets.git", "private"],
    ["git@[::1]:acme/widgets.git", "private"],
    ["git@internal.example.com:acme/widgets.git", "resolves to a private"],
    ["ssh://-oProxyCommand=touch/x.git", "invalid host"],
    ["ssh://-oProxyCommand@github.com/x.git", "invalid user"],
    ["git@github.com:-x", "repository path"],
  ])("refuses %s", async (url, why) => {
    const err = (await refusal(url, { allowSsh: true })) as DomainValidationError;
    expect(err).toBeInstanceOf(DomainValidationError);
    expect(err.issues[0]!.msg).toContain(why);
  });
});

describe("checkCloneUrl with allowLocal", () => {
  it.each([
    "file:///tmp/fixture.git",
    "/tmp/fixture.git",
    "http://127.0.0.1:3000/x.git",
    "http://localhost/x.git",
    "git://10.0.0.1/x.git",
    "https://internal.example.com/x.git",
  ])("accepts %s without resolving", async (url) => {
    let resolved = 0;
    await checkCloneUrl(url, {
      allowLocal: true,
      lookup: async () => {
        resolved++;
        return [];
      },
    });
    expect(resolved).toBe(0);
  });

  it.each([
    ["https://u:p@example.com/x.git", "credentials"],
    ["file://otherhost/x.git", "host"],
    ["relative/path.git", "absolute"],
    ["ssh://git@example.com/x.git", "SSH"],
    ["ext::sh -c touch% /tmp/pwned", "unsupported git transport"],
  ])("still refuses %s", async (url, why) => {
    const err = (await refusal(url, { allowLocal: true })) as DomainValidationError;
    expect(err).toBeInstanceOf(DomainValidationError);
    expect(err.issues[0]!.msg).toContain(why);
  });
});

describe("inspectCloneUrl", () => {
  it("returns the normalised URL and the checked addresses for pinning", async () => {
    const r = await inspectCloneUrl("https://GitLab.Example.com:443/group/p.git", { allowLocal: false, lookup });
    expect(r).toEqual({
      kind: "https",
      url: "https://gitlab.example.com/group/p.git",
      host: "gitlab.example.com",
      port: 443,
      addresses: DNS["gitlab.example.com"],
    });
  });

  it("reports a transient DNS failure as unavailable, not as a bad URL", async () => {
    const failing: HostLookup = async () => {
      throw Object.assign(new Error("queryA ETIMEOUT"), { code: "EAI_AGAIN" });
    };
    const err = await inspectCloneUrl("https://github.com/x/y", { allowLocal: false, lookup: failing }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).kind).toBe("unavailable");
  });
});

describe("checkCloneUrlWithoutDns (run on every read of a cached mirror)", () => {
  it.each([
    ["file:///tmp/x.git", false, "file://"],
    ["/tmp/x.git", false, "Local paths"],
    ["http://github.com/x.git", false, "http://"],
    ["https://127.0.0.1/x.git", false, "private"],
    ["https://[::ffff:0:127.0.0.1]/x.git", false, "private"],
    ["https://localhost/x.git", false, "private"],
    ["https://u:p@github.com/x.git", true, "credentials"],
  ])("refuses %s (allowLocal %s) without DNS", (url, allowLocal, why) => {
    let err: unknown;
    try {
      checkCloneUrlWithoutDns(url, { allowLocal, lookup: () => Promise.reject(new Error("no DNS here")) });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DomainValidationError);
    expect((err as DomainValidationError).issues[0]!.msg).toContain(why);
  });

  it.each([
    ["https://github.com/acme/widgets.git", false, true],
    ["https://140.82.121.3/acme/widgets.git", false, false],
    ["file:///tmp/x.git", true, false],
    ["https://internal.example.com/x.git", true, false],
  ])("passes %s (allowLocal %s); needs DNS: %s", (url, allowLocal, needsDns) => {
    expect(checkCloneUrlWithoutDns(url, { allowLocal }).needsDns).toBe(needsDns);
  });
});

describe("isBlockedAddress", () => {
  it.each([
    ["8.8.8.8", false],
    ["2606:4700::1111", false],
    ["127.0.0.1", true],
    ["::ffff:10.0.0.1", true],
    ["fe80::1%eth0", true],
    ["not-an-ip", true],
  ])("%s -> %s", (addr, blocked) => {
    expect(isBlockedAddress(addr)).toBe(blocked);
  });

  // The IANA IPv4 and IPv6 special-purpose address registries, range by range
  // (with the edges of each), and the IPv6 forms that embed an IPv4 address.
  // README "Security" explains each decision.
  it.each([
    // IPv4 special-purpose registry
    ["0.0.0.0", true, "this host on this network"],
    ["0.255.255.255", true, "this network"],
    ["10.0.0.1", true, "private-use"],
    ["100.64.0.1", true, "shared address space (CGNAT)"],
    ["100.127.255.255", true, "shared address space, last"],
    ["100.128.0.1", false, "just past shared address space"],
    ["127.0.0.1", true, "loopback"],
    ["169.254.169.254", true, "link-local (cloud metadata)"],
    ["172.15.255.255", false, "just before 172.16/12"],
    ["172.16.0.1", true, "private-use"],
    ["172.31.255.255", true, "private-use, last"],
    ["172.32.0.1", false, "just past 172.16/12"],
    ["192.0.0.8", true, "IETF protocol assignments (IPv4 dummy)"],
    ["192.0.0.170", true, "NAT64/DNS64 discovery"],
    ["192.0.2.1", true, "documentation (TEST-NET-1)"],
    ["192.31.196.1", false, "AS112-v4: globally reachable anycast"],
    ["192.52.193.1", false, "AMT: globally reachable anycast"],
    ["192.88.99.1", true, "deprecated 6to4 relay anycast"],
    ["192.168.0.1", true, "private-use"],
    ["192.175.48.1", false, "AS112 direct delegation: globally reachable"],
    ["198.18.0.1", true, "benchmarking"],
    ["198.19.255.255", true, "benchmarking, last"],
    ["198.20.0.1", false, "just past benchmarking"],
    ["198.51.100.1", true, "documentation (TEST-NET-2)"],
    ["203.0.113.1", true, "documentation (TEST-NET-3)"],
    ["224.0.0.1", true, "multicast"],
    ["239.255.255.250", true, "multicast, last block"],
    ["240.0.0.1", true, "reserved"],
    ["255.255.255.255", true, "limited broadcast"],
    ["140.82.121.3", false, "public"],
    // IPv6 special-purpose registry
    ["::", true, "unspecified"],
    ["::1", true, "loopback"],
    ["::ffff:127.0.0.1", true, "IPv4-mapped loopback"],
    ["::ffff:169.254.169.254", true, "IPv4-mapped metadata"],
    ["::ffff:8.8.8.8", true, "IPv4-mapped: never a real remote address, use the IPv4 form"],
    ["::ffff:0:127.0.0.1", true, "IPv4-translated (::ffff:0:0:0/96) loopback"],
    ["::ffff:0:7f00:1", true, "IPv4-translated, hex form"],
    ["::ffff:0:8.8.8.8", true, "IPv4-translated: stateless translation, never a real remote"],
    ["::127.0.0.1", true, "IPv4-compatible (deprecated)"],
    ["::8.8.8.8", true, "IPv4-compatible (deprecated)"],
    ["64:ff9b::10.0.0.1", true, "NAT64 well-known prefix embedding a private address"],
    ["64:ff9b::127.0.0.1", true, "NAT64 well-known prefix embedding loopback"],
    ["64:ff9b::a9fe:a9fe", true, "NAT64 well-known prefix embedding metadata"],
    ["64:ff9b::192.0.2.1", true, "NAT64 well-known prefix embedding documentation"],
    ["64:ff9b::8c52:7903", false, "NAT64 well-known prefix embedding a public address (DNS64 clusters)"],
    ["64:ff9b::1:8c52:7903", true, "inside 64:ff9b::/64 but outside the /96"],
    ["64:ff9b:1::8.8.8.8", true, "local-use NAT64 (64:ff9b:1::/48): the translation is site-defined"],
    ["64:ff9b:1:a00:1::", true, "local-use NAT64, /48 layout"],
    ["100::1", true, "discard-only"],
    ["100:0:0:1::1", true, "dummy prefix (RFC 9780)"],
    ["2001::1", true, "Teredo"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", true, "Teredo"],
    ["2001:1::1", true, "IETF protocol assignments (PCP anycast)"],
    ["2001:2::1", true, "benchmarking"],
    ["2001:3::1", true, "AMT"],
    ["2001:10::1", true, "ORCHID (deprecated)"],
    ["2001:20::1", true, "ORCHIDv2"],
    ["2001:1ff:ffff::1", true, "IETF protocol assignments, last"],
    ["2001:200::1", false, "just past 2001::/23 (WIDE)"],
    ["2001:4860:4860::8888", false, "public (Google DNS)"],
    ["2001:db8::1", true, "documentation"],
    ["2002:a00:1::", true, "6to4 embedding a private address"],
    ["2002:8c52:7903::1", true, "6to4 (deprecated, relays untrusted) even for a public address"],
    ["2620:fe::fe", false, "public"],
    ["3fff::1", true, "documentation (RFC 9637)"],
    ["3fff:fff:ffff::1", true, "documentation, last"],
    ["4000::1", true, "outside global unicast 2000::/3"],
    ["5f00::1", true, "SRv6 SIDs"],
    ["fc00::1", true, "unique local"],
    ["fd12:3456::1", true, "unique local"],
    ["fe80::1", true, "link-local"],
    ["fec0::1", true, "site-local (deprecated)"],
    ["ff02::1", true, "multicast"],
    ["ff0e::1", true, "multicast, global scope"],
  ])("%s -> %s (%s)", (addr, blocked) => {
    expect(isBlockedAddress(addr)).toBe(blocked);
  });
});

describe("normalizeCloneUrl", () => {
  it.each([
    ["https://GitHub.com/acme/widgets/", "https://github.com/acme/widgets"],
    ["https://github.com:443/acme/widgets.git", "https://github.com/acme/widgets.git"],
    ["  https://github.com/acme/widgets//  ", "https://github.com/acme/widgets"],
    ["git@github.com:acme/widgets.git/", "git@github.com:acme/widgets.git"],
    ["file:///", "file:///"],
    ["/srv/x.git/", "/srv/x.git"],
  ])("%s -> %s", (input, out) => {
    expect(normalizeCloneUrl(input)).toBe(out);
  });
});
