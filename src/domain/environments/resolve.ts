import { createHash } from "node:crypto";
import type { EnvironmentDefinitionJson } from "../../db/schema.ts";
import { chooseImage, environmentKey, type Catalog } from "../../resources/environment-catalog.ts";
import { allowingPrefix, parseImageReference, type ImageReference } from "../../resources/image-reference.ts";
import type { AnalysisEnvironment } from "./environments.schemas.ts";

// From what the analyzer found in a commit (its `environment`) and the
// operator's image policy to what a run gets: an image, and when there is
// anything to install, the key its installed environment is cached under.
// The image is the repository's own (its Dev Container `image`) where the
// operator allows that registry (CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES),
// otherwise the catalog's choice. Pure.

/** The analyzer's environment (packages/analyzer, `environment`). */
export interface AnalyzedEnvironment {
  toolchains: EnvironmentDefinitionJson["toolchains"];
  manifests: EnvironmentDefinitionJson["manifests"];
  steps: EnvironmentDefinitionJson["steps"];
  cache_paths: string[];
  packages: string[];
  notes: string[];
  /** The image the repository declares for itself (.devcontainer/devcontainer.json), absent when none. */
  declared_image?: { image: string; path: string } | undefined;
}

/** What decides a commit's image: the operator's catalog and the registries repositories may declare images from. */
export interface ImagePolicy {
  catalog: Catalog;
  /** Normalised registry prefixes (config's environments.allowedRegistries); empty: repository images are never used. */
  allowedRegistries: readonly string[];
}

export const NO_ENVIRONMENT: AnalyzedEnvironment = { toolchains: [], manifests: [], steps: [], cache_paths: [], packages: [], notes: [] };

export type ResolvedEnvironment =
  | {
      ok: true;
      image: string;
      /** null: nothing to install, the image alone is the environment. */
      key: string | null;
      definition: EnvironmentDefinitionJson;
      /** Whose image: the operator's catalog, or the repository's own declaration. */
      source: "catalog" | "repository";
    }
  | { ok: false; reason: string };

const ALLOW_HINT = "CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES, Helm environments.allowedRegistries";
/** The contract's section in the operators' documentation, named in a failed check. */
const CONTRACT_DOC = "docs/operators/environments.md, What every catalog image needs";

/**
 * The first step of every environment in a repository's own image: it checks
 * what codeplane's image contract asks (node 22.18 or newer on PATH, which
 * starts a run's command, and git), so an image that lacks them fails its
 * build once, naming what is missing, and stays failed for its key, instead
 * of every run failing at its start.
 */
export function imageContractStep(image: string): EnvironmentDefinitionJson["steps"][number] {
  const q = `'${image.replaceAll("'", `'\\''`)}'`;
  const fail = (what: string) => `{ echo "the image $image does not meet codeplane's image contract: ${what} (${CONTRACT_DOC})" >&2; exit 1; }`;
  return {
    name: "check the image against codeplane's image contract",
    run: [
      `image=${q}`,
      `command -v node >/dev/null 2>&1 || ${fail("it has no node on PATH; a run's command is started by a Node program, so node 22.18 or newer is needed")}`,
      `node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 18) ? 0 : 1)' 2>/dev/null || ${fail(`its node is $(node --version 2>/dev/null || echo unusable); 22.18 or newer is needed`)}`,
      `command -v git >/dev/null 2>&1 || ${fail("it has no git on PATH")}`,
      `echo "the image $image meets codeplane's image contract (node $(node --version), $(git --version))"`,
    ].join("\n"),
    why: "The repository declares its own image, which the operator did not build for codeplane: checked before anything is installed, so an image that cannot run codeplane's runs fails its build once, saying why.",
    ecosystem: "image",
  };
}

type RepositoryImage = { use: ImageReference; prefix: string } | { use: null; note: string | null };

/** Whether the repository's declared image is used on this preset, and why (not). */
function repositoryImage(env: AnalyzedEnvironment, images: ImagePolicy, preset: string): RepositoryImage {
  const declared = env.declared_image;
  if (!declared) return { use: null, note: null };
  const what = `the repository declares its own image ${declared.image} (${declared.path})`;
  const ref = parseImageReference(declared.image);
  if (!ref.ok) return { use: null, note: `${what}, which is not used: ${ref.reason}` };
  const prefix = allowingPrefix(ref.value, images.allowedRegistries);
  if (prefix === null) {
    const why = images.allowedRegistries.length
      ? `its registry (${ref.value.name}) is not one an operator allows for repository images`
      : "this installation allows no registry for repository images";
    return { use: null, note: `${what}, which is not used: ${why} (${ALLOW_HINT}); the catalog's image is used` };
  }
  // A compute preset's own catalog image that provides a large package the repository needs (a GPU
  // preset's CUDA and PyTorch image) is what the operator set that preset up for: it still wins.
  const needed = env.packages.filter((p) => images.catalog.some((e) => e.presets?.includes(preset) && e.packages.includes(p)));
  if (needed.length) {
    return {
      use: null,
      note: `${what}, which is not used on compute type '${preset}': its own catalog image provides ${needed.join(", ")}, which the repository needs`,
    };
  }
  return { use: ref.value, prefix };
}

export function resolveEnvironment(env: AnalyzedEnvironment, images: ImagePolicy, preset: string): ResolvedEnvironment {
  const own = repositoryImage(env, images, preset);
  if (own.use) {
    const image = own.use.normalized;
    const steps = [imageContractStep(image), ...env.steps];
    const definition: EnvironmentDefinitionJson = {
      toolchains: env.toolchains,
      manifests: env.manifests,
      steps,
      cache_paths: env.cache_paths,
      packages: env.packages,
      notes: [
        ...env.notes,
        `the repository's own image ${image} (${env.declared_image!.path}) is used: its registry is allowed (${own.prefix}, CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES); the toolchains above are the repository's to provide in it, not the catalog's`,
      ],
      warnings: [],
    };
    const key = cacheKey(environmentKey({ image, manifests: env.manifests, steps, cachePaths: env.cache_paths }), preset);
    return { ok: true, image, key, definition, source: "repository" };
  }
  const choice = chooseImage(images.catalog, { toolchains: env.toolchains, packages: env.packages }, preset);
  if (!choice.ok) return { ok: false, reason: own.note ? `${choice.reason}; ${own.note.replace(/; the catalog's image is used$/, "")}` : choice.reason };

  const provided = choice.provided.length ? [`provided by the image, not installed unless a version it lacks is pinned: ${choice.provided.join(", ")}`] : [];
  const definition: EnvironmentDefinitionJson = {
    toolchains: env.toolchains,
    manifests: env.manifests,
    steps: env.steps,
    cache_paths: env.cache_paths,
    packages: env.packages,
    notes: [...env.notes, ...(own.note ? [own.note] : []), ...provided],
    warnings: choice.warnings,
  };
  const key =
    env.steps.length === 0
      ? null
      : cacheKey(environmentKey({ image: choice.image, manifests: env.manifests, steps: env.steps, cachePaths: env.cache_paths }), preset);
  return { ok: true, image: choice.image, key, definition, source: "catalog" };
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
export function analysisEnvironmentView(env: AnalyzedEnvironment, images: ImagePolicy, preset: string): AnalysisEnvironment {
  const r = resolveEnvironment(env, images, preset);
  return {
    key: r.ok ? r.key : null,
    image: r.ok ? r.image : null,
    image_source: r.ok ? r.source : null,
    declared_image: env.declared_image ?? null,
    toolchains: env.toolchains,
    manifests: env.manifests.map((m) => m.path),
    steps: r.ok ? r.definition.steps : env.steps,
    notes: r.ok ? [...r.definition.notes, ...r.definition.warnings] : env.notes,
    problem: r.ok ? null : r.reason,
  };
}
