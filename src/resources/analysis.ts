import { z } from "zod";
import { COMMIT, UUID, workloadPrinterColumns, workloadStatusShape } from "./common.ts";
import { defineLifecycle, type WorkloadKind } from "./lifecycle.ts";

// The Analysis custom resource: one per repository and commit. The analyzer's
// result lives in Postgres, not here (it can be large); the resource carries
// what a kubectl user needs to see the analysis's state.

export const ANALYSIS_KIND = "Analysis";
export const ANALYSIS_PLURAL = "analyses";

export const ANALYSIS_LIFECYCLE = defineLifecycle(["pending", "running"], ["completed", "failed", "cancelled"]);
export const ANALYSIS_PHASES = ANALYSIS_LIFECYCLE.phases;
export const ANALYSIS_WORKLOAD: WorkloadKind = { noun: "analysis", kind: ANALYSIS_KIND, plural: ANALYSIS_PLURAL, lifecycle: ANALYSIS_LIFECYCLE };
export type AnalysisPhase = (typeof ANALYSIS_PHASES)[number];

export const analysisSpecSchema = z.object({
  analysisId: UUID,
  accountId: UUID,
  repositoryId: UUID,
  repositoryUrl: z.string().min(1).max(2048),
  commitHash: COMMIT,
  branch: z.string().max(255).optional().meta({ description: "The branch the commit was asked for by, if any." }),
  language: z.enum(["en", "ja"]).meta({ description: "The language of the summary text." }),
  timeoutSeconds: z
    .int()
    .min(1)
    .max(24 * 3600),
  cancelRequested: z.boolean().optional(),
});
export type AnalysisSpec = z.infer<typeof analysisSpecSchema>;

export const analysisStatusSchema = z.object({
  phase: z.enum(ANALYSIS_PHASES).optional(),
  ...workloadStatusShape,
  experiments: z.int().min(0).optional().meta({ description: "How many runnable experiments the analysis found." }),
});
export type AnalysisStatus = z.infer<typeof analysisStatusSchema>;

export const ANALYSIS_PRINTER_COLUMNS = workloadPrinterColumns([{ name: "Experiments", type: "integer", jsonPath: ".status.experiments" }]);
