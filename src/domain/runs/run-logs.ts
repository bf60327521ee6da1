import type { Db } from "../../db/database.ts";
import { RUN_LIFECYCLE } from "../../k8s/crds/run.ts";
import { notFound } from "../errors.ts";
import { findRun, readRunLogLines } from "./run-rows.ts";

export interface RunLog {
  run_id: string;
  stream: "stdout" | "stderr";
  content: string;
  size: number;
  truncated: boolean;
}

export interface ReadRunLogOptions {
  /**
   * How long a finished run's read waits for the controller to finish
   * archiving (logs_complete). The status turns terminal as soon as the pod
   * says so, while the last lines are still on their way from the pod log to
   * Postgres: a client that polls the status and then reads the output must
   * not get an empty or cut answer. Past this, what is stored is served.
   */
  settleMs?: number;
  pollMs?: number;
}

const SETTLE_MS = 10_000;
const POLL_MS = 100;

/** A run's stored output for one stream: the lines in order, newline-terminated. */
export async function readRunLog(db: Db, accountId: string, runId: string, stream: "stdout" | "stderr", opts: ReadRunLogOptions = {}): Promise<RunLog> {
  let run = await findRun(db, accountId, runId);
  if (!run) throw notFound("Run");
  const deadline = Date.now() + (opts.settleMs ?? SETTLE_MS);
  while (RUN_LIFECYCLE.isTerminal(run.status) && !run.logs_complete && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, opts.pollMs ?? POLL_MS));
    run = await findRun(db, accountId, runId);
    if (!run) throw notFound("Run");
  }
  const content = (await readRunLogLines(db, runId, stream)).map((l) => `${l}\n`).join("");
  return {
    run_id: runId,
    stream,
    content,
    size: Buffer.byteLength(content),
    truncated: stream === "stdout" ? run.stdout_truncated : run.stderr_truncated,
  };
}
