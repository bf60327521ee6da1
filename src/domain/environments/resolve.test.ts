import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import type { Catalog } from "../../resources/environment-catalog.ts";
import { analysisEnvironmentView, imageContractStep, NO_ENVIRONMENT, resolveEnvironment, type AnalyzedEnvironment, type ImagePolicy } from "./resolve.ts";

const CATALOG: Catalog = [
  { image: "runner:dev", toolchains: { python: "3.11", node: "24" }, packages: [] },
  { image: "torch:dev", toolchains: { python: "3.11", node: "24" }, packages: ["torch"], presets: ["gpu"] },
];
const DIGEST = `sha256:${"0f".repeat(32)}`;

const env = (over: Partial<AnalyzedEnvironment> = {}): AnalyzedEnvironment => ({
  ...NO_ENVIRONMENT,
  toolchains: [{ name: "python", version: "3.10", exact: false, source: "pyproject.toml requires-python >=3.10" }],
  manifests: [{ path: "requirements.txt", sha256: "1".repeat(64) }],
  steps: [{ name: "pip install", run: "pip install -r requirements.txt", why: "requirements.txt", ecosystem: "python" }],
  ...over,
});
const declaring = (image: string, over: Partial<AnalyzedEnvironment> = {}) =>
  env({ declared_image: { image, path: ".devcontainer/devcontainer.json" }, ...over });
const policy = (...allowedRegistries: string[]): ImagePolicy => ({ catalog: CATALOG, allowedRegistries });

describe("resolveEnvironment: a repository's own image", () => {
  it.each<[string, AnalyzedEnvironment, ImagePolicy, string, { image: string; source: string; note: RegExp } | { refused: RegExp }]>([
    [
      "allowed: the declared image, normalised, with the contract check first",
      declaring("ghcr.io/acme/py:3.12"),
      policy("ghcr.io/acme"),
      "cpu-general",
      {
        image: "ghcr.io/acme/py:3.12",
        source: "repository",
        note: /own image ghcr\.io\/acme\/py:3\.12 .* is used: its registry is allowed \(ghcr\.io\/acme, /,
      },
    ],
    [
      "Docker Hub shorthand, allowed by docker.io/library",
      declaring("python:3.12"),
      policy("docker.io/library"),
      "cpu-general",
      { image: "docker.io/library/python:3.12", source: "repository", note: /is used/ },
    ],
    [
      "a digest keeps working",
      declaring(`ghcr.io/acme/py@${DIGEST}`),
      policy("ghcr.io/acme"),
      "cpu-general",
      { image: `ghcr.io/acme/py@${DIGEST}`, source: "repository", note: /is used/ },
    ],
    [
      "a registry on a port",
      declaring("localhost:5000/py:1"),
      policy("localhost:5000"),
      "cpu-general",
      { image: "localhost:5000/py:1", source: "repository", note: /is used/ },
    ],
    [
      "nothing allowed (the default): the catalog's, naming the setting",
      declaring("ghcr.io/acme/py:3.12"),
      policy(),
      "cpu-general",
      {
        image: "runner:dev",
        source: "catalog",
        note: /declares its own image ghcr\.io\/acme\/py:3\.12 .*not used: this installation allows no registry for repository images \(CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES, Helm environments\.allowedRegistries\); the catalog's image is used/,
      },
    ],
    [
      "a look-alike registry path: the catalog's",
      declaring("ghcr.io/acme-evil/py:3.12"),
      policy("ghcr.io/acme"),
      "cpu-general",
      {
        image: "runner:dev",
        source: "catalog",
        note: /its registry \(ghcr\.io\/acme-evil\/py\) is not one an operator allows .*CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES/,
      },
    ],
    [
      "not a reference: the catalog's, saying why",
      declaring("ghcr.io/Acme/py:1"),
      policy("ghcr.io"),
      "cpu-general",
      { image: "runner:dev", source: "catalog", note: /not used: .*lowercase/ },
    ],
    [
      "a preset whose own catalog image provides a needed package: that image wins there",
      declaring("ghcr.io/acme/py:3.12", { packages: ["torch"] }),
      policy("ghcr.io/acme"),
      "gpu",
      { image: "torch:dev", source: "catalog", note: /not used on compute type 'gpu': its own catalog image provides torch/ },
    ],
    [
      "the same repository on a preset without such an image: its own",
      declaring("ghcr.io/acme/py:3.12", { packages: ["torch"] }),
      policy("ghcr.io/acme"),
      "cpu-general",
      { image: "ghcr.io/acme/py:3.12", source: "repository", note: /is used/ },
    ],
    [
      "a toolchain no catalog image provides: the repository's image provides it",
      declaring("ghcr.io/acme/rust:1.79", { toolchains: [{ name: "rust", version: "1.79", exact: true, source: "rust-toolchain.toml" }], steps: [] }),
      policy("ghcr.io/acme"),
      "cpu-general",
      { image: "ghcr.io/acme/rust:1.79", source: "repository", note: /the repository's to provide in it/ },
    ],
    [
      "that toolchain without the registry allowed: refused, saying what an operator could allow",
      declaring("ghcr.io/acme/rust:1.79", { toolchains: [{ name: "rust", version: "1.79", exact: true, source: "rust-toolchain.toml" }], steps: [] }),
      policy(),
      "cpu-general",
      {
        refused: /no image provides rust 1\.79 .*; the repository declares its own image ghcr\.io\/acme\/rust:1\.79 .*CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES/,
      },
    ],
  ])("%s", (_what, analyzed, images, preset, want) => {
    const r = resolveEnvironment(analyzed, images, preset);
    if ("refused" in want) {
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.reason).toMatch(want.refused);
      return;
    }
    expect(r).toMatchObject({ ok: true, image: want.image, source: want.source });
    if (!r.ok) return;
    expect(r.definition.notes.join("\n")).toMatch(want.note);
    if (want.source === "repository") {
      // Always built (so the contract is checked once per key), the check first, then the repository's own steps.
      expect(r.key).toMatch(/^[0-9a-f]{64}$/);
      expect(r.definition.steps[0]).toEqual(imageContractStep(want.image));
      expect(r.definition.steps.slice(1)).toEqual(analyzed.steps);
      expect(r.definition.warnings).toEqual([]);
    } else {
      expect(r.definition.steps).toEqual(analyzed.steps);
    }
  });

  it("keys the environment by the normalised image: shorthand and full name share one, another tag or a digest does not", () => {
    const key = (image: string) => {
      const r = resolveEnvironment(declaring(image), policy("docker.io/library"), "cpu-general");
      if (!r.ok) throw new Error(r.reason);
      return r.key;
    };
    expect(key("python:3.12")).toBe(key("docker.io/library/python:3.12"));
    expect(key("python:3.12")).not.toBe(key("python:3.13"));
    expect(key("python:3.12")).not.toBe(key(`python:3.12@${DIGEST}`));
    // The catalog's choice for the same manifests is yet another environment.
    const catalog = resolveEnvironment(declaring("python:3.12"), policy(), "cpu-general");
    expect(catalog.ok && catalog.key).not.toBe(key("python:3.12"));
  });

  it("shows the analysis whose image and why, with the contract check among the steps", () => {
    const view = analysisEnvironmentView(declaring("ghcr.io/acme/py:3.12"), policy("ghcr.io/acme"), "cpu-general");
    expect(view).toMatchObject({
      image: "ghcr.io/acme/py:3.12",
      image_source: "repository",
      declared_image: { image: "ghcr.io/acme/py:3.12", path: ".devcontainer/devcontainer.json" },
      problem: null,
    });
    expect(view.steps.map((s) => s.name)).toEqual(["check the image against codeplane's image contract", "pip install"]);
    expect(analysisEnvironmentView(env(), policy("ghcr.io/acme"), "cpu-general")).toMatchObject({
      image: "runner:dev",
      image_source: "catalog",
      declared_image: null,
    });
  });
});

describe("imageContractStep", () => {
  // The check as the build runs it (sh -eu -c), against a PATH holding only what each case gives it.
  const check = (tools: Record<string, string>) => {
    const dir = execFileSync("mktemp", ["-d"], { encoding: "utf8" }).trim();
    for (const [name, script] of Object.entries(tools)) {
      // "@node": this process's own node, so the version test itself (node -e) runs for real.
      if (script === "@node") execFileSync("ln", ["-s", process.execPath, `${dir}/${name}`]);
      else execFileSync("sh", ["-c", `printf '%s\\n' "$1" > "$2/${name}" && chmod +x "$2/${name}"`, "_", script, dir]);
    }
    try {
      const out = execFileSync("/bin/sh", ["-eu", "-c", imageContractStep("ghcr.io/acme/it's:1").run], {
        env: { PATH: dir },
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      });
      return { code: 0, out };
    } catch (err) {
      const e = err as { status: number; stderr: string };
      return { code: e.status, out: e.stderr };
    } finally {
      execFileSync("rm", ["-rf", dir]);
    }
  };
  // Only the tools each case names are on PATH (shell builtins do the rest).
  const node = (version: string) =>
    `#!/bin/sh\ncase "$1" in --version) echo v${version};; -e) v=${version}; major=\${v%%.*}; rest=\${v#*.}; minor=\${rest%%.*}; if [ "$major" -gt 22 ] || { [ "$major" -eq 22 ] && [ "$minor" -ge 18 ]; }; then exit 0; else exit 1; fi;; esac`;
  const git = "#!/bin/sh\necho git version 2.47.0";

  it.each<[string, Record<string, string>, number, RegExp]>([
    ["this node and git: met, the version checked by node itself", { node: "@node", git }, 0, /meets codeplane's image contract \(node v\d+/],
    [
      "node 24 and git: met",
      { node: node("24.1.0"), git },
      0,
      /the image ghcr\.io\/acme\/it's:1 meets codeplane's image contract \(node v24\.1\.0, git version 2\.47\.0\)/,
    ],
    ["node 22.18: met", { node: node("22.18.0"), git }, 0, /meets/],
    [
      "no node",
      { git },
      1,
      /does not meet codeplane's image contract: it has no node on PATH.*node 22\.18 or newer is needed \(docs\/operators\/environments\.md/,
    ],
    ["node 22.17", { node: node("22.17.1"), git }, 1, /does not meet codeplane's image contract: its node is v22\.17\.1; 22\.18 or newer is needed/],
    ["node 18", { node: node("18.20.0"), git }, 1, /its node is v18\.20\.0/],
    ["no git", { node: node("24.1.0") }, 1, /does not meet codeplane's image contract: it has no git on PATH/],
  ])("%s", (_what, tools, code, out) => {
    const got = check(tools);
    expect(got.code, got.out).toBe(code);
    expect(got.out).toMatch(out);
  });
});

// The cache key is one install on one compute type: the build runs with the
// compute type of the runs of its key (memory for the install, nodes and so
// CPU architecture), so runs on another compute type never restore it.

const KEY_CATALOG: Catalog = [
  { image: "runner:dev", toolchains: { python: "3.11", node: "24" }, packages: [] },
  { image: "torch:dev", toolchains: { python: "3.11", node: "24" }, packages: ["torch"], presets: ["gpu"] },
];

const KEY_ENV: AnalyzedEnvironment = {
  ...NO_ENVIRONMENT,
  toolchains: [{ name: "python", version: "3.11", exact: false, source: "pyproject.toml" }],
  manifests: [{ path: "requirements.txt", sha256: "1".repeat(64) }],
  steps: [{ name: "pip install", run: "pip install -r requirements.txt", why: "requirements.txt", ecosystem: "python" }],
};

const keyOf = (env: AnalyzedEnvironment, preset: string) => {
  const r = resolveEnvironment(env, { catalog: KEY_CATALOG, allowedRegistries: [] }, preset);
  if (!r.ok) throw new Error(r.reason);
  return { image: r.image, key: r.key };
};

describe("resolveEnvironment's key", () => {
  const OTHER_LOCKFILE: AnalyzedEnvironment = { ...KEY_ENV, manifests: [{ path: "requirements.txt", sha256: "2".repeat(64) }] };
  it.each<[string, [string, AnalyzedEnvironment], [string, AnalyzedEnvironment], boolean]>([
    ["same install, same compute type: one key", ["cpu-general", KEY_ENV], ["cpu-general", KEY_ENV], true],
    ["same image, other compute type (more memory for the install): another key", ["cpu-general", KEY_ENV], ["cpu-memory", KEY_ENV], false],
    ["a compute type with an image of its own (gpu): another key", ["cpu-general", KEY_ENV], ["gpu", KEY_ENV], false],
    ["another lockfile, same compute type: another key", ["cpu-general", KEY_ENV], ["cpu-general", OTHER_LOCKFILE], false],
  ])("%s", (_name, [p1, e1], [p2, e2], same) => {
    const k1 = keyOf(e1, p1).key;
    const k2 = keyOf(e2, p2).key;
    expect(k1).toMatch(/^[0-9a-f]{64}$/);
    expect(k1 === k2).toBe(same);
  });

  it("is null with nothing to install, whatever the compute type", () => {
    expect(keyOf({ ...KEY_ENV, steps: [] }, "cpu-general").key).toBeNull();
    expect(keyOf({ ...KEY_ENV, steps: [] }, "gpu").key).toBeNull();
  });

  it("is, in the analysis's view, the default compute type's", () => {
    expect(analysisEnvironmentView(KEY_ENV, { catalog: KEY_CATALOG, allowedRegistries: [] }, "cpu-general").key).toBe(keyOf(KEY_ENV, "cpu-general").key);
    expect(analysisEnvironmentView(KEY_ENV, { catalog: KEY_CATALOG, allowedRegistries: [] }, "cpu-general").key).not.toBe(keyOf(KEY_ENV, "cpu-memory").key);
  });
});
