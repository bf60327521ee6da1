import { describe, expect, it } from "vitest";
import { chooseImage, compareVersions, environmentKey, parseVersion, type Catalog, type EnvironmentNeeds, type ToolchainNeed } from "./environment-catalog.ts";

const CATALOG: Catalog = [
  { image: "runner:dev", toolchains: { python: "3.11", node: "24" }, packages: [] },
  { image: "python-next:dev", toolchains: { python: "3.13", node: "24" }, packages: [] },
  { image: "go:dev", toolchains: { go: "1.24", node: "24", python: "3.11" }, packages: [] },
  { image: "build:dev", toolchains: { c: "gcc-12", python: "3.11", node: "24" }, packages: [] },
  { image: "torch:dev", toolchains: { python: "3.11", node: "24" }, packages: ["torch"], presets: ["gpu"] },
];

const tc = (name: string, version: string | null, exact = false, source = "test"): ToolchainNeed => ({ name, version, exact, source });
const needs = (toolchains: ToolchainNeed[], packages: string[] = []): EnvironmentNeeds => ({ toolchains, packages });

describe("chooseImage", () => {
  const cases: { name: string; needs: EnvironmentNeeds; preset?: string; image?: string; warns?: RegExp; refused?: RegExp }[] = [
    { name: "nothing needed: the first general image", needs: needs([]), image: "runner:dev" },
    { name: "python at least 3.10: the first that satisfies", needs: needs([tc("python", "3.10")]), image: "runner:dev" },
    { name: "python at least 3.12: the newer image", needs: needs([tc("python", "3.12")]), image: "python-next:dev" },
    { name: "python exactly 3.13", needs: needs([tc("python", "3.13", true)]), image: "python-next:dev" },
    {
      name: "python exactly 3.12: nearest, with a warning",
      needs: needs([tc("python", "3.12", true)]),
      image: "runner:dev",
      warns: /python 3\.12 .* nearest, python 3\.11/,
    },
    { name: "go", needs: needs([tc("go", "1.22")]), image: "go:dev" },
    { name: "go newer than the catalog: refused", needs: needs([tc("go", "1.30")]), refused: /go >= 1\.30 .*offers 1\.24 \(go:dev\)/ },
    { name: "c via make", needs: needs([tc("c", null), tc("python", null)]), image: "build:dev" },
    {
      name: "rust: no image",
      needs: needs([tc("rust", null, false, "Cargo.toml")]),
      refused: /no image provides rust \(Cargo\.toml\).*CODEPLANE_ENVIRONMENT_IMAGES/,
    },
    { name: "go and c together: no single image", needs: needs([tc("go", null), tc("c", null)]), refused: /no single image/ },
    { name: "torch on the gpu preset: its image", needs: needs([tc("python", "3.8")], ["torch"]), preset: "gpu", image: "torch:dev" },
    {
      name: "torch on a cpu preset: refused, naming the preset",
      needs: needs([tc("python", "3.8")], ["torch"]),
      refused: /needs torch.*only on compute types gpu/,
    },
    { name: "a package no image provides is installed as usual", needs: needs([tc("python", null)], ["jax"]), image: "runner:dev" },
    { name: "the gpu preset still has general images", needs: needs([tc("go", null)]), preset: "gpu", image: "go:dev" },
    { name: "unparsable versions compare as text", needs: needs([tc("c", "gcc-12", true)]), image: "build:dev" },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = chooseImage(CATALOG, c.needs, c.preset ?? "cpu-general");
      if (c.refused) {
        expect(got.ok).toBe(false);
        if (!got.ok) expect(got.reason).toMatch(c.refused);
        return;
      }
      expect(got).toMatchObject({ ok: true, image: c.image });
      if (got.ok) {
        if (c.warns) expect(got.warnings.join("\n")).toMatch(c.warns);
        else expect(got.warnings).toEqual([]);
      }
    });
  }

  it("refuses on a preset no image is for when every image names presets", () => {
    const got = chooseImage([{ image: "x", toolchains: {}, packages: [], presets: ["gpu"] }], needs([]), "cpu-general");
    expect(got).toMatchObject({ ok: false });
  });
});

describe("versions", () => {
  it.each([
    ["3.9", "3.10", -1],
    ["3.11", "3.11.7", 0],
    ["1.24", "1.22", 1],
    ["24", "22", 1],
  ])("%s vs %s", (a, b, sign) => {
    expect(Math.sign(compareVersions(parseVersion(a)!, parseVersion(b)!))).toBe(sign);
  });
  it("is null for text", () => expect(parseVersion("gcc-12")).toBeNull());
});

describe("environmentKey", () => {
  const base = {
    image: "runner:dev",
    manifests: [{ path: "requirements.txt", sha256: "a".repeat(64) }],
    steps: [{ run: "pip install -r requirements.txt" }],
    cachePaths: [],
  };
  it("is stable and ignores manifest order", () => {
    const two = { ...base, manifests: [...base.manifests, { path: "a.txt", sha256: "b".repeat(64) }] };
    const reversed = { ...two, manifests: [...two.manifests].reverse() };
    expect(environmentKey(two)).toBe(environmentKey(reversed));
    expect(environmentKey(base)).toMatch(/^[0-9a-f]{64}$/);
  });
  it.each([
    ["the image", { image: "python-next:dev" }],
    ["a lockfile", { manifests: [{ path: "requirements.txt", sha256: "c".repeat(64) }] }],
    ["a step", { steps: [{ run: "pip install -e ." }] }],
    ["a cached path", { cachePaths: ["node_modules"] }],
  ])("changes with %s", (_what, change) => {
    expect(environmentKey({ ...base, ...change })).not.toBe(environmentKey(base));
  });
});
