import type { Db } from "../../db/database.ts";
import { notFound } from "../errors.ts";
import { findRun, readRunLogLines } from "./run-rows.ts";

export interface RunLog {
  run_id: string;
  stream: "stdout" | "stderr";
  content: string;
  size: number;
  truncated: boolean;
}

/** A run's stored output for one stream: the lines in order, newline-terminated. */
export async function readRunLog(db: Db, accountId: string, runId: string, stream: "stdout" | "stderr"): Promise<RunLog> {
  const run = await findRun(db, accountId, runId);
  if (!run) throw notFound("Run");
  const content = (await readRunLogLines(db, runId, stream)).map((l) => `${l}\n`).join("");
  return {
    run_id: runId,
    stream,
    content,
    size: Buffer.byteLength(content),
    truncated: stream === "stdout" ? run.stdout_truncated : run.stderr_truncated,
  };
}
