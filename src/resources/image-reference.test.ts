import { describe, expect, it } from "vitest";
import { allowingPrefix, parseImageReference, parseRegistryPrefix } from "./image-reference.ts";

const DIGEST = `sha256:${"a1".repeat(32)}`;

describe("parseImageReference", () => {
  it.each<[string, string, string]>([
    // [as written, name matched against prefixes, the reference pods use]
    ["python:3.12", "docker.io/library/python", "docker.io/library/python:3.12"],
    ["python", "docker.io/library/python", "docker.io/library/python:latest"],
    ["library/python:3.12", "docker.io/library/python", "docker.io/library/python:3.12"],
    ["docker.io/python:3.12", "docker.io/library/python", "docker.io/library/python:3.12"],
    ["index.docker.io/library/python:3.12", "docker.io/library/python", "docker.io/library/python:3.12"],
    ["acme/tools:1", "docker.io/acme/tools", "docker.io/acme/tools:1"],
    ["ghcr.io/acme/tools:1.4", "ghcr.io/acme/tools", "ghcr.io/acme/tools:1.4"],
    ["GHCR.io/acme/tools:1.4", "ghcr.io/acme/tools", "ghcr.io/acme/tools:1.4"],
    [
      "mcr.microsoft.com/devcontainers/python:1-3.12-bookworm",
      "mcr.microsoft.com/devcontainers/python",
      "mcr.microsoft.com/devcontainers/python:1-3.12-bookworm",
    ],
    ["localhost:5000/x", "localhost:5000/x", "localhost:5000/x:latest"],
    ["localhost:5000/team/x:2", "localhost:5000/team/x", "localhost:5000/team/x:2"],
    ["localhost/x:1", "localhost/x", "localhost/x:1"],
    [`ghcr.io/acme/tools@${DIGEST}`, "ghcr.io/acme/tools", `ghcr.io/acme/tools@${DIGEST}`],
    [`ghcr.io/acme/tools:1.4@${DIGEST}`, "ghcr.io/acme/tools", `ghcr.io/acme/tools:1.4@${DIGEST}`],
    [`python@${DIGEST}`, "docker.io/library/python", `docker.io/library/python@${DIGEST}`],
    ["registry.example.com:8443/a/b/c:v1_x.y-z", "registry.example.com:8443/a/b/c", "registry.example.com:8443/a/b/c:v1_x.y-z"],
    ["  python:3.12  ", "docker.io/library/python", "docker.io/library/python:3.12"],
  ])("%s", (text, name, normalized) => {
    const got = parseImageReference(text);
    expect(got).toMatchObject({ ok: true, value: { name, normalized } });
  });

  it.each<[string, RegExp]>([
    ["", /not an image reference/],
    ["ghcr.io/Acme/tools:1", /repository names are lowercase \('Acme'\)/],
    ["Python:3.12", /repository names are lowercase/],
    ["ghcr.io/acme/tools@sha256:abc", /digest must be sha256/],
    [`ghcr.io/acme/tools@sha256:${"A1".repeat(32)}`, /digest must be sha256/],
    ["ghcr.io/acme/tools:-bad", /'-bad' is not a tag/],
    ["ghcr.io/acme//tools", /'' is not a repository path segment/],
    ["ghcr.io/acme/tools_:1", /is not a repository path segment/],
    ["host:port:1/x", /is not a registry host/],
    ["x:1 --privileged", /not an image reference/],
    [`ghcr.io/${"a".repeat(300)}`, /longer than 255/],
    [`ghcr.io/${"a".repeat(240)}:${"t".repeat(128)}@sha512:${"f".repeat(128)}`, /longer than 512 characters/],
  ])("refuses %s", (text, reason) => {
    const got = parseImageReference(text);
    expect(got.ok).toBe(false);
    if (!got.ok) expect(got.reason).toMatch(reason);
  });
});

describe("parseRegistryPrefix", () => {
  it.each([
    ["ghcr.io", "ghcr.io"],
    ["ghcr.io/acme/", "ghcr.io/acme"],
    ["GHCR.IO/acme", "ghcr.io/acme"],
    ["docker.io/library", "docker.io/library"],
    ["index.docker.io/acme", "docker.io/acme"],
    ["localhost:5000", "localhost:5000"],
    ["localhost:5000/team", "localhost:5000/team"],
  ])("%s is %s", (text, want) => expect(parseRegistryPrefix(text)).toEqual({ ok: true, value: want }));

  it.each([
    ["python", /must start with a registry host/],
    ["acme/tools", /must start with a registry host/],
    ["", /must start with a registry host/],
    ["ghcr.io/acme/tools:1", /names a tag/],
    [`ghcr.io/acme/tools@${DIGEST}`, /names a digest/],
    ["ghcr.io/Acme", /lowercase/],
    ["ghcr.io/acme*", /not a repository path segment/],
  ])("refuses %s", (text, reason) => {
    const got = parseRegistryPrefix(text);
    expect(got.ok).toBe(false);
    if (!got.ok) expect(got.reason).toMatch(reason);
  });
});

describe("allowingPrefix: whole path segments, never a substring", () => {
  const allowed = (image: string, prefixes: string[]) => {
    const ref = parseImageReference(image);
    if (!ref.ok) throw new Error(ref.reason);
    return allowingPrefix(
      ref.value,
      prefixes.map((p) => {
        const r = parseRegistryPrefix(p);
        if (!r.ok) throw new Error(r.reason);
        return r.value;
      }),
    );
  };

  it.each<[string, string[], string | null]>([
    ["ghcr.io/acme/x:1", ["ghcr.io/acme"], "ghcr.io/acme"],
    ["ghcr.io/acme-evil/x:1", ["ghcr.io/acme"], null],
    ["ghcr.io/acmex:1", ["ghcr.io/acme"], null],
    ["ghcr.io/acme:1", ["ghcr.io/acme"], "ghcr.io/acme"],
    ["ghcr.io/acme/team/x:1", ["ghcr.io/acme"], "ghcr.io/acme"],
    ["ghcr.io/other/x:1", ["ghcr.io"], "ghcr.io"],
    ["ghcr.io.evil.com/acme/x:1", ["ghcr.io"], null],
    ["evil.com/ghcr.io/acme/x:1", ["ghcr.io/acme"], null],
    // Docker Hub shorthand is matched as what it means.
    ["python:3.12", ["docker.io/library"], "docker.io/library"],
    ["python:3.12", ["docker.io/library/python"], "docker.io/library/python"],
    ["python:3.12", ["docker.io/library/py"], null],
    ["acme/tools:1", ["docker.io/library"], null],
    ["docker.io/library/python:3.12", ["index.docker.io/library"], "docker.io/library"],
    // Hosts are case-insensitive; ports are part of the host.
    ["GHCR.IO/acme/x:1", ["ghcr.io/acme"], "ghcr.io/acme"],
    ["localhost:5000/x", ["localhost:5000"], "localhost:5000"],
    ["localhost:50001/x", ["localhost:5000"], null],
    ["localhost/x", ["localhost:5000"], null],
    ["localhost:5000/x", ["localhost"], null],
    // Digests keep working.
    [`ghcr.io/acme/x@${DIGEST}`, ["ghcr.io/acme"], "ghcr.io/acme"],
    // The longest prefix is named.
    ["ghcr.io/acme/team/x:1", ["ghcr.io", "ghcr.io/acme/team", "ghcr.io/acme"], "ghcr.io/acme/team"],
    // Nothing allowed: nothing is.
    ["ghcr.io/acme/x:1", [], null],
  ])("%s with %j: %s", (image, prefixes, want) => expect(allowed(image, prefixes)).toBe(want));
});
