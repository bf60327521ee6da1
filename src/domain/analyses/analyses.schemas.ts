import { analysisEnvironmentSchema } from "../environments/environments.schemas.ts";
import { z } from "zod";
import { experimentSchema, repoSummarySchema } from "@codeplane/analyzer";
import { ANALYSIS_PHASES } from "../../resources/analysis.ts";

export const analysisStatusEnum = z.enum(ANALYSIS_PHASES);

export const createAnalysisSchema = z
  .strictObject({
    branch: z.string().min(1).max(255).optional().meta({ description: "The branch this commit is analysed for (recorded with the analysis)." }),
    language: z.enum(["en", "ja"]).optional().meta({ description: "The language of repo_summary.text; default en." }),
  })
  .meta({ id: "CreateAnalysis" });
export type CreateAnalysisInput = z.infer<typeof createAnalysisSchema>;

export const envVarsReportSchema = z
  .object({
    valid: z.boolean().meta({ description: "True when no experiment's required variable is missing." }),
    required_env_vars: z.array(z.string()).meta({
      description:
        "The union of the experiments' `required_env_vars`: variables some entry point cannot start without (its code, or a config file it uses, reads them with no fallback). A run is refused only for its own experiment's.",
    }),
    missing_env_vars: z
      .array(z.string())
      .meta({ description: "Required variables that are not configured for this account or repository, computed when the analysis is read." }),
  })
  .meta({ id: "AnalysisEnvVars" });

export const analysisSchema = z
  .object({
    id: z.uuid(),
    repository_id: z.uuid(),
    commit_hash: z.string(),
    branch: z.string().nullable(),
    language: z.enum(["en", "ja"]),
    status: analysisStatusEnum,
    workflow_id: z.string().meta({ description: "namespace/name of the Analysis custom resource." }),
    created_at: z.iso.datetime(),
    started_at: z.iso.datetime().nullable(),
    completed_at: z.iso.datetime().nullable(),
    repo_summary: repoSummarySchema.nullable().meta({ description: "null until the analysis has completed." }),
    experiments: z.array(experimentSchema).meta({ description: "Runnable entry points; empty until the analysis has completed." }),
    primary_ids: z.array(z.string()).meta({ description: "The experiments most likely to be what a user wants to run, best first." }),
    env_vars: envVarsReportSchema.nullable().meta({ description: "null until the analysis has completed." }),
    environment: analysisEnvironmentSchema.nullable().meta({
      description: "What runs of this commit execute in: the image the catalog gives it and what is installed. null until the analysis has completed.",
    }),
    error: z.string().nullable(),
    trigger: z
      .object({
        kind: z
          .enum(["api", "push", "pull_request"])
          .meta({ description: "api: started through the API (or the dashboard); push / pull_request: by a GitHub webhook." }),
        delivery_id: z
          .string()
          .nullable()
          .meta({ description: "The webhook delivery (X-GitHub-Delivery) that started it; see GET /v1/webhooks/github/deliveries." }),
      })
      .meta({
        description: "What started the analysis. A commit is analysed once: a later trigger of the same commit finds this analysis and does not change it.",
      }),
    logs_url: z.string().meta({ description: "The analysis's log stream (SSE)." }),
  })
  .meta({ id: "Analysis" });
export type Analysis = z.infer<typeof analysisSchema>;
