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

/** The most retries a run may ask for (design.md: `retries` 0..5). */
export const MAX_RUN_RETRIES = 5;

/**
 * Each attempt of a run numbers its lines in a range of its own: its pod's seq plus (attempt - 1)
 * times this (src/controller/run-retry.ts). A pod's lines past the stride are not kept.
 */
export const ATTEMPT_SEQ_STRIDE = 1_000_000_000;
/** On the pod of an attempt of a run with retries: the attempt's number and the offset added to its lines' seq. */
export const ATTEMPT_ANNOTATION = "codeplane.dev/attempt";
export const LOG_SEQ_OFFSET_ANNOTATION = "codeplane.dev/log-seq-offset";

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
  retries: z.int().min(0).max(MAX_RUN_RETRIES).optional().meta({
    description:
      "How many more attempts an infrastructure failure (pod evicted or deleted, node lost, image pull) may start, each as a Job of its own; absent: 0. A command's own failure is never retried.",
  }),
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
    warm: z.boolean().optional().meta({ description: "The run started on a warm pool's waiting pod (admitted is when it claimed it)." }),
    pool: z.string().max(63).optional().meta({ description: "The warm pool whose pod the run claimed." }),
  })
  .meta({ description: "Start-up steps the cluster recorded; the API's `timeline` adds creation, start, first output and end." });
export type RunTimelineMarks = z.infer<typeof runTimelineMarksSchema>;

/** Why a pending run waits for admission (the controller's admission; docs/operators/limits.md). */
export const runQueueSchema = z
  .object({
    reason: z.string().max(128).meta({
      description:
        "`AccountConcurrency`: its account has its limit executing; `AccountQuota`: its requests would take its account over its CPU or memory cap; `ClusterConcurrency`: the installation has. With Kueue: `ClusterQuota`, `KueuePending`, `KueueInadmissible`, `KueueAdmitting` (the Admitted condition's message quotes Kueue).",
    }),
  })
  .meta({ description: "Present while the run waits for admission; its Job is created once it is admitted." });

/** One attempt at the run: a Job of its own (src/controller/run-retry.ts). */
export const runAttemptSchema = z
  .object({
    attempt: z
      .int()
      .min(1)
      .max(MAX_RUN_RETRIES + 1),
    jobName: z.string().min(1).max(63).meta({ description: "The attempt's Job (the first attempt's is named after the Run, later ones `<run>-attempt-<n>`)." }),
    createdAt: z.iso.datetime().meta({ description: "When the attempt was recorded: always before its Job was created." }),
    startTime: z.iso.datetime().optional().meta({ description: "When the attempt's command started." }),
    completionTime: z.iso.datetime().optional().meta({ description: "When the attempt ended." }),
    reason: z
      .string()
      .max(128)
      .optional()
      .meta({ description: "How the attempt ended (`PodLost`, `PodDisrupted`, `ImagePullFailed`, `Completed`, `NonZeroExit`, ...)." }),
    message: z.string().max(4096).optional().meta({ description: "Why, in words." }),
    logSeqOffset: z
      .int()
      .min(0)
      .meta({ description: "Added to the seq of each line the attempt's pod writes, so every attempt's lines keep their own range of the run's log." }),
  })
  .meta({ description: "One attempt at the run." });
export type RunAttempt = z.infer<typeof runAttemptSchema>;

export const runStatusSchema = z.object({
  phase: z.enum(RUN_PHASES).optional(),
  ...workloadStatusShape,
  timeline: runTimelineMarksSchema.optional(),
  queue: runQueueSchema.optional(),
  attempts: z
    .array(runAttemptSchema)
    .max(MAX_RUN_RETRIES + 1)
    .optional()
    .meta({ description: "The run's attempts, oldest first; the last is the current one. Recorded before each attempt's Job is created." }),
});
export type RunStatus = z.infer<typeof runStatusSchema>;

export const RUN_PRINTER_COLUMNS = workloadPrinterColumns([
  { name: "Queued", type: "string", jsonPath: ".status.queue.reason" },
  { name: "Compute", type: "string", jsonPath: ".spec.computeType" },
  { name: "Exit", type: "integer", jsonPath: ".status.exitCode" },
]);
