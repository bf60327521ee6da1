import { describe, expect, it } from "vitest";
import { DEFAULT_CLUSTER_CIDRS, parseEgressRules, type EgressRule } from "./egress.ts";
import { cidrContains, egressSettingsProblems, gitEndpointFromUrl, type GitEndpoint } from "./egress-settings.ts";

const rules = (text: string): EgressRule[] => {
  const r = parseEgressRules(text);
  if (typeof r === "string") throw new Error(r);
  return r;
};

const IP_GIT: GitEndpoint = { ip: "10.244.0.1", port: 8081 };

describe("cidrContains", () => {
  it.each([
    ["169.254.0.0/16", "169.254.169.254/32", true],
    ["169.254.0.0/16", "169.254.0.0/16", true],
    ["169.254.0.0/16", "169.254.0.0/15", false],
    ["0.0.0.0/0", "169.254.0.0/16", true],
    ["128.0.0.0/1", "169.254.0.0/16", true],
    ["0.0.0.0/1", "169.254.0.0/16", false],
    ["10.0.0.0/8", "10.255.255.255", true],
    ["10.1.2.3/8", "10.0.0.0/16", true], // host bits are ignored, as Kubernetes does
    ["10.0.0.0/8", "fd00::/8", false],
    ["fc00::/7", "fd00:ec2::254/128", true],
    ["fd00:ec2::/32", "fd00:ec2::254", true],
    ["fd00:ec2::254/128", "fd00:ec2::254/128", true],
    ["fd00:ec3::/32", "fd00:ec2::254/128", false],
    ["::/0", "2001:db8::1", true],
    ["::ffff:0:0/96", "::ffff:10.0.0.1", true],
    ["2001:db8::/32", "2001:db9::/32", false],
  ])("%s holds %s: %s", (outer, inner, expected) => {
    expect(cidrContains(outer, inner)).toBe(expected);
  });
});

describe("gitEndpointFromUrl", () => {
  it.each([
    ["http://10.244.0.1:8081", { ip: "10.244.0.1", port: 8081 }],
    ["http://10.244.0.1", { ip: "10.244.0.1", port: 80 }],
    ["https://192.0.2.10", { ip: "192.0.2.10", port: 443 }],
    ["https://192.0.2.10:8443", { ip: "192.0.2.10", port: 8443 }],
    ["http://[fd00::1]:8081", { ip: "fd00::1", port: 8081 }],
  ])("%s is an address", (url, expected) => {
    expect(gitEndpointFromUrl(url)).toEqual(expected);
  });

  it.each(["http://codeplane.codeplane.svc:8081", "http://localhost:8080", "https://git.example.com"])(
    "%s (a DNS name) is refused with what to do instead",
    (url) => {
      const r = gitEndpointFromUrl(url);
      expect(typeof r).toBe("string");
      expect(r).toMatch(/DNS name/);
      expect(r).toMatch(/IP address/);
      expect(r).toMatch(/Helm chart/);
    },
  );
});

describe("egressSettingsProblems", () => {
  it.each<[string, { allow?: string; clusterCidrs?: string[]; git?: GitEndpoint | null }, RegExp[]]>([
    ["the defaults", {}, []],
    ["a package mirror", { allow: "10.0.5.0/24@443/tcp,10.0.5.0/24@3128" }, []],
    ["a rule holding the metadata range (it gets an except)", { allow: "0.0.0.0/0,::/0,169.254.0.0/15" }, []],
    ["the IPv4 metadata range itself", { allow: "169.254.0.0/16@80" }, [/'169\.254\.0\.0\/16' lies inside the cloud metadata range 169\.254\.0\.0\/16/]],
    ["the metadata address", { allow: "169.254.169.254/32" }, [/169\.254\.169\.254\/32.*never reach/]],
    ["the IPv6 metadata address", { allow: "fd00:ec2::254/128@80" }, [/fd00:ec2::254\/128.*fd00:ec2::254\/128/]],
    ["a cluster CIDR of a whole family", { clusterCidrs: ["10.0.0.0/8", "::/0"] }, [/CLUSTER_CIDRS: '::\/0' is every address/]],
    ["a git endpoint in the metadata range", { git: { ip: "169.254.1.1", port: 80 } }, [/CODEPLANE_INTERNAL_URL: 169\.254\.1\.1/]],
    ["a git endpoint elsewhere", { git: IP_GIT }, []],
  ])("%s", (_, s, expected) => {
    const problems = egressSettingsProblems({ allow: rules(s.allow ?? ""), clusterCidrs: s.clusterCidrs ?? DEFAULT_CLUSTER_CIDRS, git: s.git ?? null });
    expect(problems).toHaveLength(expected.length);
    expected.forEach((re, i) => expect(problems[i]).toMatch(re));
  });
});
