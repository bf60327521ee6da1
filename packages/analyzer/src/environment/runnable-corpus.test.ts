import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { analyzeRepository } from "../analyze.ts";
import { Syntax } from "../syntax.ts";

// The runnable corpus (test/fixtures/runnable): repositories the end-to-end
// test runs on the local cluster through the package mirror. What the
// cluster installs and runs is what the analyzer resolves here, so each
// repository's environment and primary experiment are pinned: a change in
// the resolvers that would break a run shows up in this unit test first.

const RUNNABLE = join(import.meta.dirname, "../../../../test/fixtures/runnable");

interface Expected {
  primary: string;
  toolchains: [name: string, version: string | null][];
  steps: [ecosystem: string, run: RegExp][];
  cache_paths?: string[];
  packages?: string[];
  manifests: string[];
  /** What was seen and not acted on; none unless named. */
  notes?: string[];
  declared_image?: { image: string; path: string };
}

const VENV: [string, RegExp] = ["python", /^venv="\$CODEPLANE_ENV_DIR\/python"\ncd \/ && python3 -m venv --system-site-packages --without-pip "\$venv"\n/];

const EXPECTED: Record<string, Expected> = {
  "py-cli-requirements": {
    primary: "python:src/csvstat/cli.py",
    toolchains: [["python", "3.10"]],
    steps: [VENV, ["python", /^pip install --no-input -r requirements\.txt$/], ["python", /^pip install --no-input -e \.$/]],
    manifests: ["pyproject.toml", "requirements.txt"],
  },
  "py-uv-package": {
    primary: "python-module:src.tidewatch",
    toolchains: [["python", "3.11"]],
    steps: [
      VENV,
      ["python", /^command -v uv >\/dev\/null 2>&1 \|\| pip install --no-input uv$/],
      ["python", /uv export --frozen --no-hashes --no-emit-project .*\npip install --no-input -r /],
      ["python", /^pip install --no-input --no-deps -e \.$/],
    ],
    manifests: ["pyproject.toml", "uv.lock"],
  },
  "node-cli-lock": {
    primary: "node-bin:todo-digest",
    toolchains: [["node", "20"]],
    steps: [["node", /^npm ci --ignore-scripts --no-audit --no-fund$/]],
    cache_paths: ["node_modules"],
    manifests: ["package-lock.json", "package.json"],
  },
  "pnpm-workspace-app": {
    primary: "npm:start",
    toolchains: [["node", "22"]],
    steps: [["node", /npx --yes pnpm@9 install --frozen-lockfile --ignore-scripts$/]],
    cache_paths: ["node_modules", "packages/cli/node_modules", "packages/units/node_modules"],
    manifests: ["package.json", "packages/cli/package.json", "packages/units/package.json", "pnpm-lock.yaml", "pnpm-workspace.yaml"],
  },
  "go-cli": { primary: "go:.", toolchains: [["go", "1.22"]], steps: [], manifests: ["go.mod"] },
  "go-cobra-cli": {
    primary: "go:.",
    toolchains: [["go", "1.23"]],
    steps: [["go", /else go mod download; fi$/]],
    manifests: ["go.mod", "go.sum"],
  },
  "make-c-program": { primary: "make:run", toolchains: [["c", null]], steps: [], manifests: [] },
  "notebook-papermill": {
    primary: "notebook:notebooks/reading_summary.ipynb",
    toolchains: [["python", null]],
    steps: [
      VENV,
      ["python", /^pip install --no-input -r requirements\.txt$/],
      ["notebook", /^pip install --no-input papermill ipykernel$/],
      ["notebook", /^python -m ipykernel install --sys-prefix --name python3 /],
    ],
    manifests: ["requirements.txt"],
  },
  "py-newer-python": { primary: "python:main.py", toolchains: [["python", "3.12"]], steps: [], manifests: [] },
  "rust-no-image": {
    primary: "make:run",
    toolchains: [["rust", "1.74"]],
    steps: [],
    manifests: ["Cargo.lock", "Cargo.toml"],
    notes: ["Cargo.toml: rust dependencies are not installed; the image must provide the rust toolchain"],
  },
  // Its dev container names the image its team uses (Python 3.13, where the catalog's first fit for
  // requires-python >=3.11 is 3.11): the service uses it where the operator allows that registry.
  "py-devcontainer": {
    primary: "python-module:logsift",
    toolchains: [["python", "3.11"]],
    steps: [],
    manifests: [],
    declared_image: { image: "codeplane-python-next:dev", path: ".devcontainer/devcontainer.json" },
    notes: [".devcontainer/devcontainer.json: postCreateCommand is not run; the install steps come from the repository's manifests"],
  },
  "py-torch-standin": {
    primary: "python:check_env.py",
    toolchains: [["python", null]],
    steps: [VENV, ["python", /^pip install --no-input -r requirements\.txt$/]],
    packages: ["torch"],
    manifests: ["requirements.txt"],
  },
};

let syntax: Syntax;
beforeAll(async () => {
  syntax = await Syntax.load({ timeoutMsPerFile: 60_000 });
});

describe("the runnable corpus", () => {
  it("has a repository for every expectation and an expectation for every repository", () => {
    const repos = readdirSync(RUNNABLE, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
    expect(repos).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(Object.entries(EXPECTED))("%s", async (name, want) => {
    const dir = join(RUNNABLE, name);
    expect(existsSync(dir)).toBe(true);
    const result = await analyzeRepository(dir, { syntax });
    const env = result.environment!;
    expect(result.primary_ids[0]).toBe(want.primary);
    expect(env.toolchains.map((t) => [t.name, t.version])).toEqual(want.toolchains);
    expect(env.steps.map((s) => s.ecosystem)).toEqual(want.steps.map(([e]) => e));
    env.steps.forEach((s, i) => expect(s.run).toMatch(want.steps[i]![1]));
    expect(env.cache_paths).toEqual(want.cache_paths ?? []);
    expect(env.packages).toEqual(want.packages ?? []);
    expect(env.manifests.map((m) => m.path)).toEqual(want.manifests);
    expect(env.declared_image).toEqual(want.declared_image);
    // Nothing else seen and left out: the corpus needs only what its environment installs.
    expect(env.notes).toEqual(want.notes ?? []);
  });
});
