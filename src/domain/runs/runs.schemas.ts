import { z } from "zod";
import { TIMELINE_EVENTS } from "./run-timeline.ts";
import { MAX_RUN_RETRIES, RUN_PHASES } from "../../resources/run.ts";

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
    retries: z.int().min(0).max(MAX_RUN_RETRIES).optional().meta({
      description:
        "How many times to start the run again when the infrastructure loses it (its pod evicted, deleted or preempted, its node lost, its image not pulled); 0..5, default 0. The command's own failure (a non-zero exit, out of memory, a timeout) and a cancel are never retried. Each attempt is a Job of its own with the whole `timeout_seconds`; `attempts` on the run records them.",
    }),
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

export const runAttemptSchema = z
  .object({
    attempt: z.int().min(1).meta({ description: "1 for the first attempt." }),
    job_name: z.string().meta({ description: "The attempt's Kubernetes Job (in the Run's namespace)." }),
    created_at: z.iso.datetime().meta({ description: "When the attempt was recorded (its Job is created right after)." }),
    started_at: z.iso.datetime().nullable().meta({ description: "When its command started; null if it never did." }),
    ended_at: z.iso.datetime().nullable().meta({ description: "When it ended; null while it goes on." }),
    reason: z.string().nullable().meta({
      description:
        "How it ended: `PodLost`, `PodDisrupted` or `ImagePullFailed` (the infrastructure's: retried while retries are left), or the run's own ending (`Completed`, `NonZeroExit`, `TimedOut`, `OOMKilled`, `Cancelled`, ...); null while it goes on.",
    }),
    error: z.string().nullable().meta({ description: "Why it failed, in words; null unless it failed or was cancelled." }),
    first_seq: z.int().min(1).meta({
      description:
        "Where its lines begin in the run's log: each attempt's lines have seq from here on (below the next attempt's `first_seq`); a retried attempt's first line, at exactly this seq, is codeplane's own stderr line saying why it started.",
    }),
  })
  .meta({ id: "RunAttempt" });
export type RunAttemptView = z.infer<typeof runAttemptSchema>;

export const runSchema = z
  .object({
    run_id: z.uuid(),
    workflow_id: z.string().meta({ description: "namespace/name of the Run custom resource." }),
    repository_id: z.uuid(),
    commit_hash: z.string(),
    status: runStatusEnum,
    experiment_id: z.string().nullable(),
    compute_type: z.string(),
    run_config: z.object({
      command: z.array(z.string()),
      parameters: z.record(z.string(), paramValue),
      timeout_seconds: z.int().meta({ description: "Each attempt's time budget." }),
      retries: z.int().min(0).max(MAX_RUN_RETRIES).meta({ description: "Attempts an infrastructure failure may add (the creation's `retries`)." }),
    }),
    attempts: z.array(runAttemptSchema).meta({
      description:
        "Each attempt at the run, oldest first (their number is its length): one per Job. A run that lost its pod to the infrastructure with retries left has a second one, and so on. Empty until the run's first Job is made.",
    }),
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
    parameters: z
      .record(z.string(), paramValue)
      .meta({ description: "The experiment's parameter values the run used (as in `run_config.parameters`), beside `final_metrics` for comparing runs." }),
    final_metrics: z.record(z.string(), z.number()).meta({
      description:
        "Each metric series' final value (the point at its highest step): `GET /v1/runs/{run_id}/metrics` has the series. `{}` until the run reports one.",
    }),
    rerun_of: z.uuid().nullable().meta({ description: "The run this one repeats (`POST /v1/runs/{run_id}/rerun`); null for a run started directly." }),
    exit_code: z.int().nullable(),
    error: z.string().nullable().meta({
      description:
        "Why it failed or was cancelled, in words; null otherwise. A queued run whose compute type requests more CPU or memory than its account's cap by itself (the cap was lowered while it waited) fails without starting, and this names the limit and its value: `compute type 'cpu-memory' requests 1Gi memory, more than this account's cap of 512Mi (limit 'memory' per account): a run of it could never start, ...`.",
    }),
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
          warm: z
            .literal(true)
            .optional()
            .meta({ description: "admitted only: the run started on a warm pool's waiting pod, claimed at `at` (no Job or pod was created for it)." }),
          pool: z.string().optional().meta({ description: "admitted only, with `warm`: the warm pool whose pod the run claimed." }),
        }),
      )
      .meta({
        description:
          "What the run went through so far, in this order: `created`, `admitted` (its Job started; for a run on a warm pool's pod, with `warm: true` and `pool`, when it claimed the pod), `scheduled` (its pod was bound to a node), `image_ready` (the pod's first container started; a warm run has neither: its pod had both before the run existed), `checked_out`, `environment_ready`, `started` (the command), `first_output`, `ended`. Only steps that happened are listed; times from the cluster have whole seconds. A `preprocessing` run with an environment key, no `cache` yet and no `admitted` is waiting for its environment's build.",
      }),
    queue: z
      .object({
        position: z.int().min(1).meta({
          description:
            "Its place among the account's queued runs, in submission order (1: admitted next for this account). With Kueue too: codeplane hands Kueue one run per account at a time, oldest first, so this is the order Kueue admits the account's runs in (Kueue's own positions are not read).",
        }),
        reason: z.string().meta({
          description:
            "Without Kueue: `AccountConcurrency` (the account has its limit of runs and analyses executing), `AccountQuota` (this run's compute type's CPU or memory requests would take the account over its cap of requests at once) or `ClusterConcurrency` (the installation has its limit, and accounts take turns). With Kueue admitting runs: `ClusterQuota` (the ClusterQueue's quota is in use; accounts take turns), `KueuePending` (Kueue has not taken it in yet), `KueueInadmissible` (Kueue cannot admit it as things are, e.g. it asks for more than the quota) or `KueueAdmitting` (quota reserved, admission under way).",
        }),
      })
      .nullable()
      .meta({
        description:
          "Set while the run waits for admission; null otherwise. Usually the run is `pending` (its Job is not created yet, or with Kueue is suspended in its queue). With Kueue a run may wait in another phase: one whose environment was built waits in `preprocessing`, and a retried run's next attempt goes through Kueue again while the run stays `running`. Queued runs are admitted round-robin across accounts (with Kueue: Kueue's fair sharing) and in submission order within one; one can be cancelled or deleted, and a cancelled one never starts.",
      }),
  })
  .meta({ id: "Run" });
export type Run = z.infer<typeof runSchema>;

export const listRunsQuerySchema = z.object({
  status: runStatusEnum.optional(),
  repository_id: z.uuid().optional(),
  experiment_id: z
    .string()
    .min(1)
    .max(512)
    .optional()
    .meta({ description: "Runs of this analysed experiment only (with `repository_id`, of one repository): compare their `parameters` and `final_metrics`." }),
});

export const metricsSchema = z
  .object({
    series: z
      .array(
        z.object({
          name: z.string(),
          points: z
            .array(z.object({ step: z.int(), value: z.number(), ts: z.iso.datetime() }))
            .meta({ description: "By step; points at one step in the order reported." }),
        }),
      )
      .meta({ description: "Every series the run reported, by name." }),
    final: z.record(z.string(), z.number()).meta({ description: "Each series' value at its highest step (the later one at equal steps)." }),
    dropped: z.int().meta({ description: "Points refused by the operator's bounds (series per run, points per series, name length)." }),
  })
  .meta({ id: "RunMetrics" });

export const rerunSchema = z
  .strictObject({
    parameters: z
      .record(z.string().min(1).max(256), paramValue)
      .optional()
      .meta({ description: "Overrides merged over the original run's parameter values (experiment runs only)." }),
    compute_type: z.string().min(1).max(63).optional().meta({ description: "Default: the original run's compute type." }),
    timeout_seconds: z.int().min(1).optional().meta({ description: "Default: the original run's timeout." }),
    retries: z.int().min(0).max(MAX_RUN_RETRIES).optional().meta({ description: "Default: the original run's retries." }),
  })
  .meta({ id: "Rerun" });
export type RerunInput = z.infer<typeof rerunSchema>;

export const runLogSchema = z
  .object({
    run_id: z.uuid(),
    stream: z.enum(["stdout", "stderr"]),
    content: z.string(),
    size: z.int().meta({ description: "Bytes of the stored log (up to the configured cap)." }),
    truncated: z.boolean().meta({ description: "True when the run wrote more than the cap; the start is kept." }),
  })
  .meta({ id: "RunLog" });

const seqText = (description: string) => z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().meta({ description });

/** ?after=&before=&limit= of a paged log read (src/domain/runs/run-logs.ts LOG_PAGE: 1..5000, default 1000). */
export const logPageQuerySchema = z.strictObject({
  after: seqText("Lines with seq greater than this, oldest first: 0 (or a page's `next_after`) to read forwards from the start."),
  before: seqText(
    "Lines with seq less than this, the newest `limit` of them (still oldest first): a number above `last_seq` reads the log's end. Ignored when `after` is given.",
  ),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(5000)
    .optional()
    .meta({ description: "Lines per page, 1..5000; default 1000 (and about 4 MiB of text at most, always one line)." }),
});

export const logLineSchema = z
  .object({
    seq: z
      .int()
      .min(1)
      .meta({ description: "Position in the run's output, shared by stdout and stderr (the live stream's `id`); increasing, may skip numbers." }),
    stream: z.enum(["stdout", "stderr"]),
    ts: z.iso.datetime().meta({ description: "When the line was written (RFC 3339 UTC)." }),
    line: z.string().meta({ description: "The line without its newline." }),
  })
  .meta({ id: "RunLogLine" });

export const runLogPageSchema = z
  .object({
    run_id: z.uuid(),
    stream: z.enum(["stdout", "stderr"]).nullable().meta({ description: "The stream read; null: both, interleaved by seq." }),
    lines: z.array(logLineSchema).meta({ description: "In seq order." }),
    next_after: z.int().nullable().meta({ description: "Pass as ?after= for the next page; null when this page reached the last line stored so far." }),
    last_seq: z.int().min(0).meta({ description: "The seq of the run's last stored line, either stream; 0 when none." }),
    complete: z.boolean().meta({ description: "The run is over and all its output is stored: no line will be added." }),
    truncated: z.boolean().meta({ description: "The run wrote more than the stored cap on this stream (either, for both); the start is kept." }),
  })
  .meta({ id: "RunLogPage" });

/** ?q=&stream=&after=&limit=&case_sensitive= of the log search (run-logs.ts LOG_SEARCH). */
export const logSearchQuerySchema = z.strictObject({
  q: z.string().min(1).max(256).meta({ description: "Text to find: a literal substring (no wildcards), 1..256 characters." }),
  stream: z.enum(["stdout", "stderr"]).optional().meta({ description: "Search one stream; both by default." }),
  after: seqText("Search lines with seq greater than this: 0 by default, or the previous answer's `next_after`."),
  limit: z.coerce.number().int().min(1).max(500).optional().meta({ description: "Matches per answer, 1..500; default 50." }),
  case_sensitive: z
    .enum(["true", "false"])
    .optional()
    .transform((v) => v === "true")
    .meta({ description: "`true`: match case exactly; case-insensitive by default." }),
});

export const runLogSearchSchema = z
  .object({
    run_id: z.uuid(),
    q: z.string(),
    items: z.array(logLineSchema).meta({ description: "Matching lines, in seq order." }),
    next_after: z.int().nullable().meta({
      description:
        "Pass as ?after= to go on searching; null when every stored line after `after` was searched. A page may hold fewer than `limit` matches (even none) and still have a `next_after`: the search stops after its time budget.",
    }),
    searched_through: z.int().min(0).meta({ description: "Every stored line with seq up to this (after `after`) was searched." }),
    last_seq: z.int().min(0).meta({ description: "The seq of the run's last stored line when the search ran." }),
  })
  .meta({ id: "RunLogSearch" });
