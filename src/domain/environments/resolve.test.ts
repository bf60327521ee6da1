import { describe, expect, it } from "vitest";
import type { Catalog } from "../../resources/environment-catalog.ts";
import { analysisEnvironmentView, NO_ENVIRONMENT, resolveEnvironment, type AnalyzedEnvironment } from "./resolve.ts";

// The cache key is one install on one compute type: the build runs with the
// compute type of the runs of its key (memory for the install, nodes and so
// CPU architecture), so runs on another compute type never restore it.

const CATALOG: Catalog = [
  { image: "runner:dev", toolchains: { python: "3.11", node: "24" }, packages: [] },
  { image: "torch:dev", toolchains: { python: "3.11", node: "24" }, packages: ["torch"], presets: ["gpu"] },
];

const ENV: AnalyzedEnvironment = {
  ...NO_ENVIRONMENT,
  toolchains: [{ name: "python", version: "3.11", exact: false, source: "pyproject.toml" }],
  manifests: [{ path: "requirements.txt", sha256: "1".repeat(64) }],
  steps: [{ name: "pip install", run: "pip install -r requirements.txt", why: "requirements.txt", ecosystem: "python" }],
};

const keyOf = (env: AnalyzedEnvironment, preset: string) => {
  const r = resolveEnvironment(env, CATALOG, preset);
  if (!r.ok) throw new Error(r.reason);
  return { image: r.image, key: r.key };
};

describe("resolveEnvironment's key", () => {
  const OTHER_LOCKFILE: AnalyzedEnvironment = { ...ENV, manifests: [{ path: "requirements.txt", sha256: "2".repeat(64) }] };
  it.each<[string, [string, AnalyzedEnvironment], [string, AnalyzedEnvironment], boolean]>([
    ["same install, same compute type: one key", ["cpu-general", ENV], ["cpu-general", ENV], true],
    ["same image, other compute type (more memory for the install): another key", ["cpu-general", ENV], ["cpu-memory", ENV], false],
    ["a compute type with an image of its own (gpu): another key", ["cpu-general", ENV], ["gpu", ENV], false],
    ["another lockfile, same compute type: another key", ["cpu-general", ENV], ["cpu-general", OTHER_LOCKFILE], false],
  ])("%s", (_name, [p1, e1], [p2, e2], same) => {
    const k1 = keyOf(e1, p1).key;
    const k2 = keyOf(e2, p2).key;
    expect(k1).toMatch(/^[0-9a-f]{64}$/);
    expect(k1 === k2).toBe(same);
  });

  it("is null with nothing to install, whatever the compute type", () => {
    expect(keyOf({ ...ENV, steps: [] }, "cpu-general").key).toBeNull();
    expect(keyOf({ ...ENV, steps: [] }, "gpu").key).toBeNull();
  });

  it("is, in the analysis's view, the default compute type's", () => {
    expect(analysisEnvironmentView(ENV, CATALOG, "cpu-general").key).toBe(keyOf(ENV, "cpu-general").key);
    expect(analysisEnvironmentView(ENV, CATALOG, "cpu-general").key).not.toBe(keyOf(ENV, "cpu-memory").key);
  });
});
