import type { Kysely } from "kysely";
import { ANALYSIS_LIFECYCLE } from "../resources/analysis.ts";
import type { Lifecycle } from "../resources/lifecycle.ts";
import { RUN_LIFECYCLE } from "../resources/run.ts";
import type { Db } from "./database.ts";

// Runs and analyses are mirrored and keep their output the same way: a row
// with a status ordered by rank, start and end times, byte counters,
// truncation flags, logs_complete and deleted_at, and a table of lines keyed
// by (owner, seq). The mirror, the log archiver and the log store work on
// either through this descriptor; a new kind of workload is a new one.

export interface WorkloadTable {
  readonly table: "runs" | "analyses";
  readonly linesTable: "run_log_lines" | "analysis_log_lines";
  /** Every phase the workload went through, in order (migration 0012); keyed by `key` like the lines. */
  readonly transitionsTable: "run_transitions" | "analysis_transitions";
  /** The lines table's column naming the owner. */
  readonly key: "run_id" | "analysis_id";
  readonly startColumn: "start_time" | "started_at";
  readonly endColumn: "close_time" | "completed_at";
  readonly lifecycle: Lifecycle<string>;
  /**
   * Live rows of this kind are unique by more than their id (analyses: one per
   * repository and commit), so a unique violation means another live row holds
   * this one's place.
   */
  readonly liveUniqueKey: boolean;
}

export const RUN_TABLE: WorkloadTable = {
  table: "runs",
  linesTable: "run_log_lines",
  transitionsTable: "run_transitions",
  key: "run_id",
  startColumn: "start_time",
  endColumn: "close_time",
  lifecycle: RUN_LIFECYCLE,
  liveUniqueKey: false,
};

export const ANALYSIS_TABLE: WorkloadTable = {
  table: "analyses",
  linesTable: "analysis_log_lines",
  transitionsTable: "analysis_transitions",
  key: "analysis_id",
  startColumn: "started_at",
  endColumn: "completed_at",
  lifecycle: ANALYSIS_LIFECYCLE,
  liveUniqueKey: true,
};

/**
 * The two schemas have the same workload columns, which Kysely's types cannot
 * say about a table chosen at run time; this is the one place that steps outside them.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the one deliberate step outside the schema's types (above)
export const untyped = (db: Db): Kysely<any> => db;
