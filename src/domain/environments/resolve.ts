import { createHash } from "node:crypto";
import type { EnvironmentDefinitionJson } from "../../db/schema.ts";
import { chooseImage, environmentKey, type Catalog } from "../../resources/environment-catalog.ts";
import type { AnalysisEnvironment } from "./environments.schemas.ts";

// From what the analyzer found in a commit (its `environment`) and the
// operator's catalog to what a run gets: an image, and when there is anything
// to install, the key its installed environment is cached under. Pure.

/** The analyzer's environment (packages/analyzer, `environment`). */
export interface AnalyzedEnvironment {
  toolchains: EnvironmentDefinitionJson["toolchains"];
  manifests: EnvironmentDefinitionJson["manifests"];
  steps: EnvironmentDefinitionJson["steps"];
  cache_paths: string[];
  packages: string[];
  notes: string[];
}

export const NO_ENVIRONMENT: AnalyzedEnvironment = { toolchains: [], manifests: [], steps: [], cache_paths: [], packages: [], notes: [] };

export type ResolvedEnvironment =
  | {
      ok: true;
      image: string;
      /** null: nothing to install, the image alone is the environment. */
      key: string | null;
      definition: EnvironmentDefinitionJson;
    }
  | { ok: false; reason: string };

export function resolveEnvironment(env: AnalyzedEnvironment, catalog: Catalog, preset: string): ResolvedEnvironment {
  const choice = chooseImage(catalog, { toolchains: env.toolchains, packages: env.packages }, preset);
  if (!choice.ok) return { ok: false, reason: choice.reason };
  const provided = choice.provided.length ? [`provided by the image, not installed unless a version it lacks is pinned: ${choice.provided.join(", ")}`] : [];
  const definition: EnvironmentDefinitionJson = {
    toolchains: env.toolchains,
    manifests: env.manifests,
    steps: env.steps,
    cache_paths: env.cache_paths,
    packages: env.packages,
    notes: [...env.notes, ...provided],
    warnings: choice.warnings,
  };
  const key =
    env.steps.length === 0
      ? null
      : cacheKey(environmentKey({ image: choice.image, manifests: env.manifests, steps: env.steps, cachePaths: env.cache_paths }), preset);
  return { ok: true, image: choice.image, key, definition };
}

/**
 * The cache key of an install on a compute type. The build runs on the compute type of the runs of
 * its key (its memory for the install, its nodes and so their CPU architecture, which native wheels
 * and node_modules binaries are built for), so one key is one compute type: a build that ran out of
 * memory on a small type fails that type's key only, and a larger type builds its own. The install's
 * own hash (environmentKey: image, manifests, steps, cached folders) stays what it was.
 */
export function cacheKey(installKey: string, computeType: string): string {
  return createHash("sha256")
    .update(JSON.stringify({ v: 2, install: installKey, compute_type: computeType }))
    .digest("hex");
}

/** The analysis's `environment` as the API shows it, resolved for the default compute type (its image and key are that type's). */
export function analysisEnvironmentView(env: AnalyzedEnvironment, catalog: Catalog, preset: string): AnalysisEnvironment {
  const r = resolveEnvironment(env, catalog, preset);
  return {
    key: r.ok ? r.key : null,
    image: r.ok ? r.image : null,
    toolchains: env.toolchains,
    manifests: env.manifests.map((m) => m.path),
    steps: env.steps,
    notes: r.ok ? [...r.definition.notes, ...r.definition.warnings] : env.notes,
    problem: r.ok ? null : r.reason,
  };
}
