import { z } from "zod";
import { COMMIT, UUID, workloadPrinterColumns, workloadStatusShape } from "./common.ts";
import { defineLifecycle, type WorkloadKind } from "./lifecycle.ts";

// The Run custom resource: the source of truth for one execution. The spec
// says what to run and never holds a secret value (those travel in a Secret
// the Run owns); the status is written only by the controller.

export const RUN_KIND = "Run";
export const RUN_PLURAL = "runs";

export const RUN_LIFECYCLE = defineLifecycle(["pending", "preprocessing", "running"], ["completed", "failed", "cancelled"]);
export const RUN_PHASES = RUN_LIFECYCLE.phases;
export const RUN_WORKLOAD: WorkloadKind = { noun: "run", kind: RUN_KIND, plural: RUN_PLURAL, lifecycle: RUN_LIFECYCLE };
export type RunPhase = (typeof RUN_PHASES)[number];

/** The installed environment a run restores before its command (built once per key by a Job of its own). */
export const runEnvironmentSpecSchema = z.object({
  key: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .meta({ description: "The environment's cache key." }),
  image: z.string().min(1).max(512),
  steps: z
    .array(z.object({ name: z.string().max(512), run: z.string().max(65_536) }))
    .max(64)
    .meta({ description: "The install steps (what the build Job runs when the key has no environment yet)." }),
  cachePaths: z.array(z.string().max(1024)).max(256).meta({ description: "Checkout-relative folders the install writes that the archive keeps." }),
  warnings: z.array(z.string().max(1024)).max(32),
});
export type RunEnvironmentSpec = z.infer<typeof runEnvironmentSpecSchema>;

export const runSpecSchema = z.object({
  runId: UUID.meta({ description: "The API's run id." }),
  accountId: UUID,
  repositoryId: UUID,
  repositoryUrl: z.string().min(1).max(2048).meta({ description: "Clone URL; credentials are never part of it." }),
  commitHash: COMMIT,
  command: z.array(z.string().max(32768)).min(1).max(4096).meta({ description: "argv run in the checkout." }),
  experimentId: z.string().max(512).optional().meta({ description: "The analysed experiment this run executes." }),
  parameters: z
    .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
    .optional()
    .meta({ description: "The experiment's parameter values (defaults with the request's overrides); never secret." }),
  computeType: z.string().min(1).max(63),
  image: z.string().min(1).max(512).optional().meta({
    description:
      "The image the command runs in (the catalog's choice, or the repository's own where the operator allows its registry); absent: the runner image.",
  }),
  environment: runEnvironmentSpecSchema.optional().meta({ description: "The installed environment restored before the command; absent: none." }),
  timeoutSeconds: z
    .int()
    .min(1)
    .max(7 * 24 * 3600),
  rerunOf: UUID.optional().meta({ description: "The run this one repeats (POST /v1/runs/{run_id}/rerun)." }),
  outputPaths: z
    .array(z.string().min(1).max(1024))
    .max(256)
    .optional()
    .meta({ description: "The analysed experiment's output paths inside the checkout, collected with $CODEPLANE_OUTPUT_DIR when the command ends." }),
  cancelRequested: z.boolean().optional().meta({ description: "Set by the API to stop the run; the controller deletes its pod." }),
});
export type RunSpec = z.infer<typeof runSpecSchema>;

/** When the run passed each start-up step the cluster records (src/controller/run-timeline.ts). */
export const runTimelineMarksSchema = z
  .object({
    admitted: z.iso.datetime().optional().meta({ description: "The Job started (a suspended Job: when it was resumed)." }),
    scheduled: z.iso.datetime().optional().meta({ description: "The pod was bound to a node." }),
    imageReady: z.iso.datetime().optional().meta({ description: "The pod's first container started." }),
    checkedOut: z.iso.datetime().optional().meta({ description: "The checkout finished." }),
    environmentReady: z.iso.datetime().optional().meta({ description: "The installed environment was restored." }),
  })
  .meta({ description: "Start-up steps the cluster recorded; the API's `timeline` adds creation, start, first output and end." });
export type RunTimelineMarks = z.infer<typeof runTimelineMarksSchema>;

/** Why a pending run waits for admission (the controller's admission; docs/operators/limits.md). */
export const runQueueSchema = z
  .object({
    reason: z.string().max(128).meta({
      description:
        "`AccountConcurrency`: its account has its limit executing; `ClusterConcurrency`: the installation has. With Kueue: `ClusterQuota`, `KueuePending`, `KueueInadmissible`, `KueueAdmitting` (the Admitted condition's message quotes Kueue).",
    }),
  })
  .meta({ description: "Present while the run waits for admission; its Job is created once it is admitted." });

export const runStatusSchema = z.object({
  phase: z.enum(RUN_PHASES).optional(),
  ...workloadStatusShape,
  timeline: runTimelineMarksSchema.optional(),
  queue: runQueueSchema.optional(),
});
export type RunStatus = z.infer<typeof runStatusSchema>;

export const RUN_PRINTER_COLUMNS = workloadPrinterColumns([
  { name: "Queued", type: "string", jsonPath: ".status.queue.reason" },
  { name: "Compute", type: "string", jsonPath: ".spec.computeType" },
  { name: "Exit", type: "integer", jsonPath: ".status.exitCode" },
]);
