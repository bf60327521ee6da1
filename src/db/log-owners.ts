import type { Kysely } from "kysely";
import type { Db } from "./database.ts";

// Runs and analyses keep their output the same way: a row with byte counters,
// truncation flags and logs_complete, and a table of lines keyed by (owner, seq).
// The log archiver and the SSE log store work on either through this descriptor.

export interface LogOwner {
  /** For logs and metrics. */
  readonly kind: "run" | "analysis";
  readonly table: "runs" | "analyses";
  readonly linesTable: "run_log_lines" | "analysis_log_lines";
  readonly key: "run_id" | "analysis_id";
}

export const RUN_LOGS: LogOwner = { kind: "run", table: "runs", linesTable: "run_log_lines", key: "run_id" };
export const ANALYSIS_LOGS: LogOwner = { kind: "analysis", table: "analyses", linesTable: "analysis_log_lines", key: "analysis_id" };

/**
 * The two schemas have the same log columns, which Kysely's types cannot say
 * about a table chosen at run time; this is the one place that steps outside them.
 */
export const untyped = (db: Db): Kysely<any> => db as unknown as Kysely<any>;
