import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AnalyzerResult, Environment } from "@codeplane/analyzer";
import { twoTenantsWithRepository, type TwoTenants } from "../helpers/two-tenants.ts";

// The analysis API shows which image runs of a commit get when the repository
// declares its own (.devcontainer/devcontainer.json): the declared one where
// the operator allows its registry (CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES,
// matched on whole path segments), the catalog's otherwise, with a note
// naming the setting. Analyses are written the way the controller writes them.

let setup: TwoTenants;

const environment = (image: string): Environment => ({
  toolchains: [{ name: "python", version: "3.11", exact: false, source: "pyproject.toml requires-python >=3.11" }],
  manifests: [{ path: "requirements.txt", sha256: "e".repeat(64) }],
  steps: [{ name: "install requirements.txt", run: "pip install --no-input -r requirements.txt", why: "requirements.txt", ecosystem: "python" }],
  cache_paths: [],
  packages: [],
  notes: [],
  declared_image: { image, path: ".devcontainer/devcontainer.json" },
});

const result = (env: Environment): AnalyzerResult => ({
  version: 1,
  repo_summary: {
    language: "en",
    text: "A Python project.",
    title: "Demo",
    description: null,
    languages: [{ name: "Python", files: 1, lines: 10, bytes: 200 }],
    file_count: 1,
    total_bytes: 200,
    license: null,
    manifests: [],
    frameworks: [],
    truncated: false,
    skipped: { binary: 0, too_large: 0, symlinks: 0, unparsable: 0 },
  },
  experiments: [],
  primary_ids: [],
  env_vars: [],
  environment: env,
  stats: { files_scanned: 1, files_parsed: 1, duration_ms: 5 },
});

async function completedAnalysis(commit: string, env: Environment): Promise<void> {
  const id = randomUUID();
  await setup.svc.db
    .insertInto("analyses")
    .values({
      id,
      account_id: setup.alice.accountId,
      repository_id: setup.repoId,
      commit_hash: commit,
      branch: "main",
      language: "en",
      workflow_id: `codeplane/analysis-${id}`,
      status: "completed",
      status_rank: 2,
      result: JSON.stringify(result(env)),
      started_at: new Date(),
      completed_at: new Date(),
      updated_at: new Date(),
    })
    .execute();
}

beforeAll(async () => {
  setup = await twoTenantsWithRepository({
    CODEPLANE_ENVIRONMENT_IMAGES: JSON.stringify([{ image: "codeplane-runner:dev", toolchains: { python: "3.11", node: "24" } }]),
    CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES: "ghcr.io/acme",
  });
  await completedAnalysis(setup.fixture.commits.main, environment("ghcr.io/acme/research:2024.11"));
  await completedAnalysis(setup.fixture.commits.feature, environment("ghcr.io/acme-evil/research:2024.11"));
}, 60_000);
afterAll(() => setup?.close());

async function analysisEnvironment(commit: string) {
  const res = await setup.alice.api(`/v1/repositories/${setup.repoId}/analysis/${commit}`);
  expect(res.status).toBe(200);
  return (await res.json()).environment;
}

describe("a repository's own image in the analysis", () => {
  it("is the environment's image when the operator allows its registry, and the analysis says why", async () => {
    const env = await analysisEnvironment(setup.fixture.commits.main);
    expect(env).toMatchObject({
      image: "ghcr.io/acme/research:2024.11",
      image_source: "repository",
      declared_image: { image: "ghcr.io/acme/research:2024.11", path: ".devcontainer/devcontainer.json" },
      problem: null,
      key: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(env.steps.map((s: { name: string }) => s.name)).toEqual(["check the image against codeplane's image contract", "install requirements.txt"]);
    expect(env.notes.join("\n")).toMatch(
      /the repository's own image ghcr\.io\/acme\/research:2024\.11 \(\.devcontainer\/devcontainer\.json\) is used: its registry is allowed \(ghcr\.io\/acme,/,
    );
  });

  it("is not used from a registry that merely starts the same: the catalog's image, with a note naming the setting", async () => {
    const env = await analysisEnvironment(setup.fixture.commits.feature);
    expect(env).toMatchObject({
      image: "codeplane-runner:dev",
      image_source: "catalog",
      declared_image: { image: "ghcr.io/acme-evil/research:2024.11", path: ".devcontainer/devcontainer.json" },
      problem: null,
    });
    expect(env.steps.map((s: { name: string }) => s.name)).toEqual(["install requirements.txt"]);
    expect(env.notes.join("\n")).toMatch(
      /declares its own image ghcr\.io\/acme-evil\/research:2024\.11 .*not used: its registry \(ghcr\.io\/acme-evil\/research\) is not one an operator allows for repository images \(CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES, Helm environments\.allowedRegistries\)/,
    );
  });

  it("is described in the OpenAPI document", async () => {
    const doc = await (await fetch(`${setup.svc.url}/openapi.json`)).json();
    // Wherever the generator puts the environment's schema (a component of its own, or inside Analysis).
    const found: Record<string, { description?: string }>[] = [];
    JSON.stringify(doc.components.schemas, (_k, v: unknown) => {
      const props = (v as { properties?: Record<string, { description?: string }> } | null)?.properties;
      if (props?.image_source && props.declared_image) found.push(props);
      return v;
    });
    expect(found.length).toBeGreaterThan(0);
    expect(found[0]!.image_source!.description).toMatch(/CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES/);
    expect(JSON.stringify(found[0]!.declared_image)).toMatch(/Dev Container/);
  });
});
