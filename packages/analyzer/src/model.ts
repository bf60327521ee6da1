import { z } from "zod";

// What the analyzer hands back. It crosses a trust boundary (it is produced in
// a pod that read someone else's repository), so the controller validates it
// with these schemas before anything is stored; the limits keep one analysis
// from filling a row.

export const PARAMETER_CATEGORIES = ["string", "integer", "number", "boolean", "flag", "path"] as const;
export type ParameterCategory = (typeof PARAMETER_CATEGORIES)[number];

export const parameterValue = z.union([z.string().max(4096), z.number(), z.boolean(), z.null()]);
export type ParameterValue = z.infer<typeof parameterValue>;

export const parameterSchema = z.object({
  name: z.string().min(1).max(256).meta({ description: "The name a run's `parameters` object uses." }),
  value: parameterValue.meta({ description: "The default, null when the program has none." }),
  category: z.enum(PARAMETER_CATEGORIES).meta({
    description:
      "The value's type: string, integer, number, boolean (rendered as option=value), flag (a switch: present when true, absent when false) or path (a file or folder).",
  }),
  cli_option: z.string().max(256).nullable().meta({
    description:
      'How the value is passed: null for a positional argument; otherwise the option\'s words ("--lr", "-p alpha"), followed by the value as its own argument, or joined to it when the option ends with "=" ("EPOCHS=", "-verbose=").',
  }),
  choices: z
    .array(z.union([z.string().max(1024), z.number(), z.boolean()]))
    .max(256)
    .nullable(),
  description: z.string().max(4096).nullable(),
  required: z.boolean().meta({ description: "The program refuses to start without it (a positional argument, or an option marked required)." }),
  // Optional only for results stored before it existed.
  env_var: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
    .max(256)
    .nullable()
    .optional()
    .meta({
      description:
        "The environment variable the program reads the value from (a web server's `PORT`): a run passes it as `env NAME=value` before the command instead of as an argument, and cli_option is null. Absent or null: an argument.",
    }),
});
export type Parameter = z.infer<typeof parameterSchema>;

export const EXPERIMENT_KINDS = ["python-script", "python-module", "npm-script", "node-bin", "go-main", "make-target", "shell-script", "notebook"] as const;
export type ExperimentKind = (typeof EXPERIMENT_KINDS)[number];

export const experimentSchema = z.object({
  id: z.string().min(1).max(512).meta({
    description: "Stable across commits: the kind and where it was found, e.g. `python:scripts/train.py`, `npm:test`, `go:./cmd/server`, `make:train`.",
  }),
  title: z.string().max(512),
  description: z.string().max(4096).nullable(),
  entry_point: z.string().max(4096).meta({ description: "The command line, as a user would type it in the repository's root." }),
  command: z.array(z.string().max(4096)).min(1).max(64).meta({ description: "entry_point as argv; a run appends the parameters to it." }),
  language: z.string().max(64),
  kind: z.enum(EXPERIMENT_KINDS),
  path: z.string().max(4096).meta({ description: "The file (or folder, for a Go package) that defines it." }),
  inputs: z.array(z.string().max(4096)).max(256).meta({ description: "Files or folders it reads, where they can be told." }),
  outputs: z.array(z.string().max(4096)).max(256).meta({ description: "Files or folders it writes, where they can be told." }),
  parameters: z.array(parameterSchema).max(256),
  // Optional only for results stored before it existed; the analyzer always writes it.
  required_env_vars: z.array(z.string().min(1).max(256)).max(256).optional().meta({
    description:
      "Variables this experiment cannot start without: those its entry point reaches (its module graph for Python and Node, its target's recipe for Make, its script for npm) reads with no fallback. A run of it is refused while one is not configured.",
  }),
});
export type Experiment = z.infer<typeof experimentSchema>;

export const envVarUseSchema = z.object({
  name: z.string().min(1).max(256),
  /** Repository-relative file and 1-based line of (the first) use. */
  path: z.string().max(4096),
  line: z.int().min(0),
  /** false when the code has a fallback (a default, a `?? "x"`), so the program starts without it. */
  required: z.boolean(),
});
export type EnvVarUse = z.infer<typeof envVarUseSchema>;

export const languageStatSchema = z.object({ name: z.string().max(64), files: z.int().min(0), lines: z.int().min(0), bytes: z.int().min(0) });

export const repoSummarySchema = z.object({
  language: z.enum(["en", "ja"]).meta({ description: "The language of `text`." }),
  text: z.string().max(8192).meta({ description: "A short description of the repository, written from what the analyzer found." }),
  title: z.string().max(512).nullable().meta({ description: "The README's title." }),
  description: z.string().max(4096).nullable().meta({ description: "The README's first paragraph." }),
  languages: z.array(languageStatSchema).max(128).meta({ description: "By lines, most first." }),
  file_count: z.int().min(0),
  total_bytes: z.int().min(0),
  license: z.string().max(128).nullable().meta({ description: "An SPDX identifier when the licence file is recognised." }),
  manifests: z.array(z.string().max(4096)).max(512).meta({ description: "Dependency manifests (package.json, requirements.txt, go.mod, ...)." }),
  frameworks: z.array(z.string().max(128)).max(128).meta({ description: "Notable libraries and frameworks found in the manifests." }),
  truncated: z.boolean().meta({ description: "A size or time budget was reached: some files were not looked at." }),
  skipped: z.object({
    binary: z.int().min(0).meta({ description: "Files that were to be read (source, manifests, READMEs) but hold binary data." }),
    too_large: z.int().min(0),
    symlinks: z.int().min(0),
    unparsable: z.int().min(0),
  }),
});
export type RepoSummary = z.infer<typeof repoSummarySchema>;

export const ENVIRONMENT_ECOSYSTEMS = ["python", "node", "go", "c", "notebook"] as const;
export type EnvironmentEcosystem = (typeof ENVIRONMENT_ECOSYSTEMS)[number];

export const toolchainSchema = z.object({
  name: z
    .string()
    .regex(/^[a-z][a-z0-9+.-]*$/)
    .max(64)
    .meta({
      description:
        'A language toolchain an image must provide: "python", "node", "go", "c" (a C/C++ compiler and make), "cmake", "rust", "java", "ruby", "r", "php".',
    }),
  version: z.string().max(32).nullable().meta({
    description:
      'The version asked for, normalised to what images are catalogued by (Python "3.12", Node "22", Go "1.22"); null when the repository names none.',
  }),
  exact: z.boolean().meta({
    description:
      "true: the repository asks for this version (.python-version, .nvmrc, runtime.txt); false: at least this version (requires-python >=3.10, engines.node >=18, go.mod's go and toolchain lines).",
  }),
  source: z
    .string()
    .max(1024)
    .meta({ description: 'Why the toolchain is needed and where its version comes from, e.g. "pyproject.toml requires-python >=3.10".' }),
});
export type Toolchain = z.infer<typeof toolchainSchema>;

export const environmentStepSchema = z.object({
  name: z.string().min(1).max(128).meta({ description: "A short name for the step, shown with its log." }),
  run: z.string().min(1).max(65_536).meta({
    description:
      "POSIX sh text, run with `sh -eu -c` in the checkout (/workspace/src) with the environment's tools on PATH; what it installs outside the checkout goes under $CODEPLANE_ENV_DIR.",
  }),
  why: z.string().max(2048).meta({ description: "Why this step, and not another, installs the repository's dependencies." }),
  ecosystem: z.enum(ENVIRONMENT_ECOSYSTEMS),
});
export type EnvironmentStep = z.infer<typeof environmentStepSchema>;

export const declaredImageSchema = z
  .object({
    image: z.string().min(1).max(512).meta({ description: "The image reference as the repository wrote it (`python:3.12`, `ghcr.io/acme/dev@sha256:...`)." }),
    path: z.string().max(4096).meta({ description: "The Dev Container configuration that declares it, e.g. `.devcontainer/devcontainer.json`." }),
  })
  .meta({
    description:
      "The image a repository declares for itself (a Dev Container configuration's `image`). The service uses it only where the operator allows its registry (CODEPLANE_ENVIRONMENT_ALLOWED_REGISTRIES).",
  });
export type DeclaredImage = z.infer<typeof declaredImageSchema>;

export const environmentSchema = z
  .object({
    toolchains: z.array(toolchainSchema).max(16).meta({ description: "The toolchains the repository needs; empty for a plain repository." }),
    manifests: z
      .array(
        z.object({
          path: z.string().max(4096),
          sha256: z
            .string()
            .regex(/^[0-9a-f]{64}$/)
            .meta({ description: "Hex SHA-256 of the file's bytes." }),
        }),
      )
      .max(256)
      .meta({ description: "The files that define the install (lockfiles first-class), sorted by path: a change to one is a new environment." }),
    steps: z.array(environmentStepSchema).max(32).meta({ description: "The install, in order; empty when there is nothing to install." }),
    cache_paths: z
      .array(z.string().max(4096))
      .max(256)
      .meta({ description: "Checkout-relative folders the install writes and a later run needs (node_modules, a workspace package's node_modules, ...)." }),
    packages: z
      .array(z.string().max(128))
      .max(64)
      .meta({ description: "Notable large packages the install needs that an image may already provide (torch, tensorflow, jax, ...), as PEP 503 names." }),
    notes: z
      .array(z.string().max(2048))
      .max(64)
      .meta({ description: "What was seen and not acted on, and why (another lockfile, a manifest too large to read, ...)." }),
    // Absent when the repository declares no image (and in results stored before declarations were read).
    declared_image: declaredImageSchema.optional(),
  })
  .meta({
    description:
      "What running the repository needs, resolved from its files without running any of them: toolchains with versions, the manifests that define the install, the install steps and why each was chosen. The service adds the image and the environment's key.",
  });
export type Environment = z.infer<typeof environmentSchema>;

export const analyzerResultSchema = z.object({
  version: z.literal(1),
  repo_summary: repoSummarySchema,
  experiments: z.array(experimentSchema).max(1000),
  primary_ids: z.array(z.string().max(512)).max(20),
  env_vars: z.array(envVarUseSchema).max(1000).meta({
    description:
      "Every environment variable the code (or a config file it uses) reads; `required` when some experiment requires it (the union of the experiments' `required_env_vars`).",
  }),
  // Optional only for results stored before environments existed; the analyzer always writes it.
  environment: environmentSchema.optional(),
  stats: z.object({ files_scanned: z.int().min(0), files_parsed: z.int().min(0), duration_ms: z.int().min(0) }),
});
export type AnalyzerResult = z.infer<typeof analyzerResultSchema>;
