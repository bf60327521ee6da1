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

export const analyzerResultSchema = z.object({
  version: z.literal(1),
  repo_summary: repoSummarySchema,
  experiments: z.array(experimentSchema).max(1000),
  primary_ids: z.array(z.string().max(512)).max(20),
  env_vars: z
    .array(envVarUseSchema)
    .max(1000)
    .meta({ description: "Every environment variable the code reads; `required` ones count towards missing_env_vars." }),
  stats: z.object({ files_scanned: z.int().min(0), files_parsed: z.int().min(0), duration_ms: z.int().min(0) }),
});
export type AnalyzerResult = z.infer<typeof analyzerResultSchema>;
