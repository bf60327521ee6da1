import type { Db } from "../../db/database.ts";
import { DomainValidationError } from "../errors.ts";
import type { RunService } from "./runs.ts";
import type { CreateRunInput, RerunInput, Run } from "./runs.schemas.ts";

// POST /v1/runs/{run_id}/rerun: the same commit, experiment or command,
// parameters, compute type, timeout and kind of environment as the original,
// with the request's overrides; the new run names the original in rerun_of.

/** The creation request that repeats `original` with `overrides`. */
export function rerunRequest(original: Run, overrides: RerunInput): CreateRunInput {
  const common = {
    compute_type: overrides.compute_type ?? original.compute_type,
    timeout_seconds: overrides.timeout_seconds ?? original.run_config.timeout_seconds,
    retries: overrides.retries ?? original.run_config.retries,
    // A run given no environment ran in the runner image as it is; so does its rerun.
    environment: original.environment === null ? ("none" as const) : ("auto" as const),
  };
  if (original.experiment_id !== null) {
    return { analyzed_experiment: original.experiment_id, parameters: { ...original.run_config.parameters, ...overrides.parameters }, ...common };
  }
  if (overrides.parameters !== undefined) {
    throw new DomainValidationError([
      { loc: ["body", "parameters"], msg: "Value error, parameters apply only to a rerun of an analyzed_experiment's run", type: "value_error" },
    ]);
  }
  return { command: original.run_config.command, ...common };
}

export async function rerun(db: Db, runs: RunService, accountId: string, runId: string, overrides: RerunInput): Promise<Run> {
  const original = await runs.get(db, accountId, runId);
  return runs.create(db, accountId, original.repository_id, original.commit_hash, rerunRequest(original, overrides), { rerunOf: original.run_id });
}
