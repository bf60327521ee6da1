import { z } from "zod";

// Warm pools (issue 33): the operator's list (CODEPLANE_WARM_POOLS) of
// (environment, compute preset) pairs that get pods started ahead of their
// runs. A run whose environment key and compute type match a pool starts on
// one of its waiting pods when there is one, and the ordinary way otherwise.

export const warmPoolSchema = z
  .object({
    name: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "a DNS label: lower-case letters, digits and '-'")
      .max(30)
      .meta({ description: "The pool's name: its pods' label codeplane.dev/pool, and what a warm run's timeline names." }),
    environment: z
      .string()
      .regex(/^[0-9a-f]{64}$/, "an environment key (GET /v1/environments)")
      .meta({ description: "The cached environment's key whose runs the pool serves; its pods run the environment's image." }),
    compute_type: z.string().min(1).max(63).default("cpu-general").meta({ description: "The compute preset of the runs it serves (and of its pods)." }),
    size: z.number().int().min(1).max(50).meta({ description: "How many pods wait at any time; claimed ones are replaced at once." }),
    idle_seconds: z
      .number()
      .int()
      .min(60)
      .max(7 * 86_400)
      .default(1800)
      .meta({ description: "A pod that waited this long unclaimed is replaced by a fresh one." }),
  })
  .strict();
export type WarmPool = z.infer<typeof warmPoolSchema>;

export const warmPoolsSchema = z
  .array(warmPoolSchema)
  .max(50)
  .refine((pools) => new Set(pools.map((p) => p.name)).size === pools.length, "pool names must be unique")
  .refine((pools) => new Set(pools.map((p) => `${p.environment}/${p.compute_type}`)).size === pools.length, "one pool per environment and compute type");

/** The pool that serves a run of this environment and compute type, if any. */
export function poolFor(pools: readonly WarmPool[], environmentKey: string | undefined, computeType: string): WarmPool | null {
  if (!environmentKey) return null;
  return pools.find((p) => p.environment === environmentKey && p.compute_type === computeType) ?? null;
}

/** The label every pool pod and Job carries: its pool's name. */
export const POOL_LABEL = "codeplane.dev/pool";
/** The label that ties a pool Job and pod to its row in pool_pods. */
export const POOL_POD_LABEL = "codeplane.dev/pool-pod";
