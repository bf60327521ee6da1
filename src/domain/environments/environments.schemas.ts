import { z } from "zod";

// The API's view of environments: what a commit's analysis resolved (the
// image, toolchains, manifests and install steps), and the account's cache of
// installed environments (GET/DELETE /v1/environments).

const toolchain = z.object({
  name: z.string(),
  version: z.string().nullable().meta({ description: "Normalised: Python `3.12`, Node `22`, Go `1.22`; null when any version does." }),
  exact: z.boolean().meta({ description: "true: that version was asked for; false: that version or newer." }),
  source: z.string().meta({ description: "Why: the file and line that asked for it." }),
});
const step = z.object({
  name: z.string(),
  run: z.string().meta({ description: "POSIX sh, run in the checkout with the environment's PATH." }),
  why: z.string(),
  ecosystem: z.string(),
});

export const analysisEnvironmentSchema = z
  .object({
    key: z.string().nullable().meta({
      description:
        "SHA-256 of the image and of what defines the install; runs with the same key share one installed environment. null: nothing to install, or no image fits.",
    }),
    image: z.string().nullable().meta({
      description:
        "The image runs of this commit get on the default compute type: the repository's own (`image_source: repository`) or the catalog's; null when none fits (see `problem`).",
    }),
    image_source: z.enum(["catalog", "repository"]).nullable().meta({
      description:
        "`repository`: the image the repository declares (`declared_image`), used because the operator allows its registry (CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES); `catalog`: the operator's catalog chose it (`notes` says why a declared image was not used); null when no image fits.",
    }),
    declared_image: z
      .object({
        image: z.string().meta({ description: "As the repository wrote it, e.g. `python:3.12` or `ghcr.io/acme/dev@sha256:...`." }),
        path: z.string().meta({ description: "The Dev Container configuration that declares it, e.g. `.devcontainer/devcontainer.json`." }),
      })
      .nullable()
      .meta({ description: "The image the repository declares for itself (a Dev Container configuration's `image`); null when it declares none." }),
    toolchains: z.array(toolchain),
    manifests: z.array(z.string()).meta({ description: "The files that define the install (lockfiles and manifests)." }),
    steps: z.array(step),
    notes: z.array(z.string()).meta({ description: "What was seen and why it was or was not acted on; fits that are not exact." }),
    problem: z
      .string()
      .nullable()
      .meta({ description: "Why no image of the catalog can provide this environment (runs of it are refused with 422); null when one can." }),
  })
  .meta({ id: "AnalysisEnvironment" });
export type AnalysisEnvironment = z.infer<typeof analysisEnvironmentSchema>;

export const environmentStatusEnum = z.enum(["building", "ready", "failed"]);

export const environmentSchema = z
  .object({
    key: z.string(),
    image: z.string(),
    status: environmentStatusEnum,
    size: z.int().nullable().meta({ description: "Bytes of the stored archive; null until it is stored." }),
    repository_id: z.uuid().nullable().meta({ description: "The repository it was first built for (null once that repository is deleted)." }),
    commit_hash: z.string().meta({ description: "The commit it was built from; later commits with the same manifests reuse it." }),
    toolchains: z.array(toolchain),
    manifests: z.array(z.object({ path: z.string(), sha256: z.string() })),
    steps: z.array(step),
    error: z.string().nullable().meta({ description: "Why the build failed, naming the step and its last lines." }),
    log: z
      .string()
      .nullable()
      .meta({ description: "The install's output (its last 256 KiB), for builds that have ended; only in GET /v1/environments/{key}, null in lists." }),
    created_at: z.iso.datetime(),
    completed_at: z.iso.datetime().nullable(),
    last_used_at: z.iso.datetime(),
  })
  .meta({ id: "Environment" });
export type Environment = z.infer<typeof environmentSchema>;

export const environmentKeyParam = z.strictObject({
  key: z.string().regex(/^[0-9a-f]{64}$/, "should be an environment key (64 lowercase hex digits)"),
});

export const runSetupLogSchema = z
  .object({
    run_id: z.uuid(),
    environment_key: z.string().nullable().meta({ description: "The run's environment; null when it has none (nothing installed)." }),
    status: environmentStatusEnum.nullable().meta({ description: "The environment's build: `building`, `ready` or `failed`; null without an environment." }),
    content: z.string().meta({
      description: "The install's output (its last 256 KiB), kept with the environment once its build has ended: the same text for every run of the key.",
    }),
  })
  .meta({ id: "RunSetupLog" });
export type RunSetupLog = z.infer<typeof runSetupLogSchema>;
