import { z } from "zod";
import { TIMELINE_EVENTS } from "./run-timeline.ts";
import { RUN_PHASES } from "../../resources/run.ts";

export const runStatusEnum = z.enum(RUN_PHASES);

const paramValue = z.union([z.string().max(4096), z.number(), z.boolean(), z.null()]);

export const createRunSchema = z
  .strictObject({
    analyzed_experiment: z.string().min(1).max(512).optional().meta({
      description:
        "An experiment id from this commit's completed analysis. Refused (422) while one of that experiment's own `required_env_vars` is not configured; other experiments' variables do not matter.",
    }),
    parameters: z.record(z.string().min(1).max(256), paramValue).optional().meta({ description: "Overrides of the experiment's parameter defaults." }),
    command: z
      .array(z.string().max(32_768))
      .min(1)
      .max(4096)
      .optional()
      .meta({ description: 'argv to run in the checkout (no shell: use ["sh", "-c", "..."] for one).' }),
    compute_type: z.string().min(1).max(63).optional().meta({ description: "A named preset; default cpu-general." }),
    timeout_seconds: z.int().min(1).optional().meta({ description: "Default and maximum are set by the operator." }),
    environment: z.enum(["auto", "none"]).optional().meta({
      description:
        "`auto` (the default): the environment the commit's analysis found, in the catalog image that fits it, with its dependencies installed once per key and restored; `none`: the runner image as it is, nothing installed.",
    }),
  })
  .superRefine((v, ctx) => {
    if ((v.command === undefined) === (v.analyzed_experiment === undefined)) {
      ctx.addIssue({ code: "custom", path: ["command"], message: "give exactly one of command or analyzed_experiment" });
    }
    if (v.parameters !== undefined && v.analyzed_experiment === undefined) {
      ctx.addIssue({ code: "custom", path: ["parameters"], message: "parameters apply only to an analyzed_experiment" });
    }
  })
  .meta({ id: "CreateRun" });
export type CreateRunInput = z.infer<typeof createRunSchema>;

export const runSchema = z
  .object({
    run_id: z.uuid(),
    workflow_id: z.string().meta({ description: "namespace/name of the Run custom resource." }),
    repository_id: z.uuid(),
    commit_hash: z.string(),
    status: runStatusEnum,
    experiment_id: z.string().nullable(),
    compute_type: z.string(),
    run_config: z.object({ command: z.array(z.string()), parameters: z.record(z.string(), paramValue), timeout_seconds: z.int() }),
    environment: z
      .object({
        key: z.string().nullable().meta({ description: "The installed environment's key (GET /v1/environments/{key}); null: nothing to install." }),
        image: z.string(),
        cache: z
          .enum(["hit", "built"])
          .nullable()
          .meta({ description: "`hit`: restored from the cache; `built`: the run waited for its build; null until its pod is made." }),
        warnings: z.array(z.string()).meta({ description: "Fits that are not exact (a toolchain version the catalog lacks: the nearest was used)." }),
      })
      .nullable()
      .meta({ description: "The environment the run executes in; null: the runner image, nothing installed." }),
    exit_code: z.int().nullable(),
    error: z.string().nullable(),
    stdout_url: z.string(),
    stderr_url: z.string(),
    duration_seconds: z.number().nullable(),
    start_time: z.iso.datetime().nullable(),
    close_time: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
    timeline: z
      .array(
        z.object({
          event: z.enum(TIMELINE_EVENTS),
          at: z.iso.datetime(),
          cache: z
            .enum(["hit", "built"])
            .optional()
            .meta({ description: "environment_ready only: restored from the cache (`hit`) or built while the run waited (`built`)." }),
        }),
      )
      .meta({
        description:
          "What the run went through so far, in this order: `created`, `admitted` (its Job started), `scheduled` (its pod was bound to a node), `image_ready` (the pod's first container started), `checked_out`, `environment_ready`, `started` (the command), `first_output`, `ended`. Only steps that happened are listed; times from the cluster have whole seconds. A `preprocessing` run with an environment key, no `cache` yet and no `admitted` is waiting for its environment's build.",
      }),
  })
  .meta({ id: "Run" });
export type Run = z.infer<typeof runSchema>;

export const listRunsQuerySchema = z.object({ status: runStatusEnum.optional(), repository_id: z.uuid().optional() });

export const runLogSchema = z
  .object({
    run_id: z.uuid(),
    stream: z.enum(["stdout", "stderr"]),
    content: z.string(),
    size: z.int().meta({ description: "Bytes of the stored log (up to the configured cap)." }),
    truncated: z.boolean().meta({ description: "True when the run wrote more than the cap; the start is kept." }),
  })
  .meta({ id: "RunLog" });
