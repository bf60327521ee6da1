import { createHash } from "node:crypto";
import { z } from "zod";

// The operator's image catalog (CODEPLANE_ENVIRONMENT_IMAGES, Helm
// `environments.images`) and the pure choice of an image for what an analysis
// says a commit needs. Choosing is a ranking, not a lookup: a repository asks
// for "Python at least 3.10" or "Node 20", and the catalog offers what the
// operator built; the nearest fit wins, and a fit that is not exact says so
// (a warning the run shows), while a need nothing can meet is refused before
// any pod starts.

const name = z.string().regex(/^[a-z][a-z0-9+-]{0,31}$/, "must be a lowercase toolchain or package name");

export const catalogEntrySchema = z.strictObject({
  image: z.string().min(1).max(512),
  toolchains: z.record(name, z.string().min(1).max(64)).meta({ description: 'Toolchain → version the image holds, e.g. {"python": "3.11", "node": "24"}.' }),
  packages: z.array(name).max(64).default([]).meta({ description: "Large packages the image already holds (torch), so installs need not fetch them." }),
  presets: z
    .array(z.string().min(1).max(63))
    .max(64)
    .optional()
    .meta({ description: "Compute presets this image is for; absent: any preset. An image naming a preset is preferred on it." }),
});
export type CatalogEntry = z.infer<typeof catalogEntrySchema>;

export const catalogSchema = z.array(catalogEntrySchema).min(1).max(256);
export type Catalog = readonly CatalogEntry[];

/** One toolchain a commit needs (the analyzer's environment.toolchains). */
export interface ToolchainNeed {
  name: string;
  /** Normalised ("3.12", "22", "1.22"); null: any version. */
  version: string | null;
  /** true: that version; false: that version or newer. */
  exact: boolean;
  /** Why the analyzer thinks so (".python-version", "go.mod go 1.22"). */
  source: string;
}

export interface EnvironmentNeeds {
  toolchains: readonly ToolchainNeed[];
  /** Large packages the install needs that an image may provide. */
  packages: readonly string[];
}

export type ImageChoice =
  | {
      ok: true;
      image: string;
      /** Fits that are not exact: the run shows them. */ warnings: string[];
      /** Needed packages the image provides. */ provided: string[];
    }
  | { ok: false; /** What is missing and what an operator can add. */ reason: string };

/** Dotted numbers, compared numerically ("3.9" < "3.10"); null when a part is not a number. */
export function parseVersion(v: string): number[] | null {
  const parts = v.trim().replace(/^v/i, "").split(".");
  const nums = parts.map((p) => (/^\d+$/.test(p) ? Number(p) : NaN));
  return nums.some(Number.isNaN) ? null : nums;
}

/** Compares on the parts both sides give ("3.11" vs "3.11.7" is equal): negative, zero or positive. */
export function compareVersions(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

/** How far a provided version is from the asked one, for ranking: 0 is exact; Infinity when it does not satisfy. */
function distance(need: ToolchainNeed, provided: string): number {
  if (need.version === null) return 0;
  const want = parseVersion(need.version);
  const have = parseVersion(provided);
  if (!want || !have) return need.version === provided ? 0 : need.exact ? 1000 : Infinity;
  const cmp = compareVersions(have, want);
  if (!need.exact) return cmp >= 0 ? 0 : Infinity;
  if (cmp === 0) return 0;
  // Nearest by major first, then minor: 3.11 is nearer to 3.12 than 2.7 is.
  return have.slice(0, 2).reduce((sum, part, i) => sum + Math.abs(part - (want[i] ?? 0)) * (i === 0 ? 100 : 1), 0);
}

const describeNeed = (n: ToolchainNeed) => `${n.name}${n.version === null ? "" : n.exact ? ` ${n.version}` : ` >= ${n.version}`} (${n.source})`;

const ADD_HINT = "an operator can add an image that provides it to the catalog (CODEPLANE_ENVIRONMENT_IMAGES, Helm environments.images)";

/** Catalog entries usable on a preset: those for it first, then those for any preset, each in catalog order. */
function usableOn(catalog: Catalog, preset: string): CatalogEntry[] {
  return [...catalog.filter((e) => e.presets?.includes(preset)), ...catalog.filter((e) => e.presets === undefined)];
}

/** The image a commit's environment runs in on a compute preset, or why none can be. */
export function chooseImage(catalog: Catalog, needs: EnvironmentNeeds, preset: string): ImageChoice {
  const usable = usableOn(catalog, preset);
  if (usable.length === 0) return { ok: false, reason: `no image in the catalog is for compute type '${preset}'; ${ADD_HINT}` };

  for (const need of needs.toolchains) {
    if (!catalog.some((e) => Object.hasOwn(e.toolchains, need.name))) return { ok: false, reason: `no image provides ${describeNeed(need)}; ${ADD_HINT}` };
    if (!usable.some((e) => Object.hasOwn(e.toolchains, need.name))) {
      return {
        ok: false,
        reason: `${describeNeed(need)} is provided only on compute types ${presetsOffering(catalog, (e) => Object.hasOwn(e.toolchains, need.name))}`,
      };
    }
  }
  // A large package that some preset's image provides but this preset's does not: the run would
  // fetch gigabytes (or fail) where the operator meant it to run elsewhere.
  for (const pkg of needs.packages) {
    const anywhere = catalog.filter((e) => e.packages.includes(pkg));
    if (anywhere.length > 0 && !usable.some((e) => e.packages.includes(pkg))) {
      return {
        ok: false,
        reason: `the repository needs ${pkg}, which this installation provides only on compute types ${presetsOffering(catalog, (e) => e.packages.includes(pkg))}: ask for one of them (compute_type)`,
      };
    }
  }

  let best: { entry: CatalogEntry; score: number; rank: number } | null = null;
  usable.forEach((entry, rank) => {
    let score = 0;
    for (const need of needs.toolchains) {
      const have = entry.toolchains[need.name];
      score += have === undefined ? Infinity : distance(need, have);
    }
    // A needed package the image provides saves an install: prefer it among equal fits.
    score -= needs.packages.filter((p) => entry.packages.includes(p)).length * 0.5;
    if (score !== Infinity && (!best || score < best.score)) best = { entry, score, rank };
  });
  if (!best) {
    const unmet = needs.toolchains.filter((n) => !usable.some((e) => e.toolchains[n.name] !== undefined && distance(n, e.toolchains[n.name]!) !== Infinity));
    const offered = (n: ToolchainNeed) =>
      usable
        .filter((e) => e.toolchains[n.name] !== undefined)
        .map((e) => `${e.toolchains[n.name]} (${e.image})`)
        .join(", ");
    const what = unmet.length
      ? unmet.map((n) => `${describeNeed(n)}: the catalog offers ${offered(n) || "none"}`).join("; ")
      : "no single image provides every toolchain together";
    return { ok: false, reason: `no image meets ${what}; ${ADD_HINT}` };
  }
  const chosen = (best as { entry: CatalogEntry }).entry;
  const warnings = needs.toolchains
    .filter((n) => distance(n, chosen.toolchains[n.name]!) > 0)
    .map((n) => `${describeNeed(n)} is not in the catalog: using the nearest, ${n.name} ${chosen.toolchains[n.name]} (${chosen.image})`);
  return { ok: true, image: chosen.image, warnings, provided: needs.packages.filter((p) => chosen.packages.includes(p)) };
}

function presetsOffering(catalog: Catalog, has: (e: CatalogEntry) => boolean): string {
  const presets = [...new Set(catalog.filter(has).flatMap((e) => e.presets ?? ["(any)"]))];
  return presets.join(", ");
}

/** What defines an environment's install: the key hashes exactly this (never a branch or commit). */
export interface EnvironmentDefinition {
  image: string;
  manifests: readonly { path: string; sha256: string }[];
  steps: readonly { run: string }[];
  cachePaths: readonly string[];
}

/**
 * The cache key: SHA-256 over the image and what the install reads and does,
 * in a fixed order, so the same lockfiles on any branch or commit share one
 * environment and a changed lockfile, step or image makes a new one.
 */
export function environmentKey(d: EnvironmentDefinition): string {
  const canonical = JSON.stringify({
    v: 1,
    image: d.image,
    manifests: [...d.manifests].map((m) => [m.path, m.sha256]).sort((a, b) => (a[0]! < b[0]! ? -1 : a[0]! > b[0]! ? 1 : 0)),
    steps: d.steps.map((s) => s.run),
    cache_paths: [...d.cachePaths].sort(),
  });
  return createHash("sha256").update(canonical).digest("hex");
}
