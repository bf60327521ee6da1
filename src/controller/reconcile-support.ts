import { isDeepStrictEqual } from "node:util";
import { setCondition } from "../resources/conditions.ts";
import type { Condition } from "../resources/common.ts";

// The pure parts of writing a workload's status.

/**
 * The API server hands status back with its keys in its own order and
 * without undefined fields; compare meaning, not bytes, or every reconcile
 * would write (and so trigger) another.
 */
export function sameStatus(a: object | undefined, b: object): boolean {
  return isDeepStrictEqual(JSON.parse(JSON.stringify(a ?? {})), JSON.parse(JSON.stringify(b)));
}

export interface LifecycleFacts {
  /** "run" or "analysis", for the messages kubectl shows. */
  noun: string;
  phase: string;
  terminal: boolean;
  reason: string;
  error: string | null;
  startTime?: string | undefined;
  /** Reason and message of Started once the main container has started. */
  started: { reason: string; message: string };
  generation: number;
}

/** The Started and Finished conditions both resources carry, updated from one observation. */
export function lifecycleConditions(previous: Condition[] | undefined, f: LifecycleFacts, now: Date): Condition[] {
  const conditions = setCondition(
    previous,
    {
      type: "Started",
      status: f.startTime ? "True" : "False",
      reason: f.startTime ? f.started.reason : f.reason,
      message: f.startTime ? f.started.message : `the ${f.noun} is ${f.phase}`,
      observedGeneration: f.generation,
    },
    now,
  );
  return setCondition(
    conditions,
    {
      type: "Finished",
      status: f.terminal ? "True" : "False",
      reason: f.reason,
      message: f.terminal ? (f.error ?? `the ${f.noun} ${f.phase}`) : `the ${f.noun} is ${f.phase}`,
      observedGeneration: f.generation,
    },
    now,
  );
}
