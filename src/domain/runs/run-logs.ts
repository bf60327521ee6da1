import type { Db } from "../../db/database.ts";
import { pgLogStore } from "../../db/log-store.ts";
import { RUN_TABLE } from "../../db/workload-tables.ts";
import { RUN_LIFECYCLE } from "../../resources/run.ts";
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

/** One stored line of a run's output, as the log stream numbers it. */
export interface RunLogLine {
  seq: number;
  stream: "stdout" | "stderr";
  ts: string;
  line: string;
}

export interface RunLogPage {
  /** Lines with seq > after, in order. */
  lines: RunLogLine[];
  /** The run is over and every stored line after `after` is in `lines`: nothing more will come. */
  complete: boolean;
}

/**
 * A run's stored output after a line number (the `seq` the SSE stream sends
 * as `id:`), both streams interleaved, for readers that poll: at most `limit`
 * lines and about `maxBytes` of text (always at least one line).
 */
export async function readRunLogAfter(db: Db, accountId: string, runId: string, after: number, opts: { limit: number; maxBytes: number }): Promise<RunLogPage> {
  const run = await findRun(db, accountId, runId);
  if (!run) throw notFound("Run");
  // Read the row before the lines: when it says the archive is complete, the lines read next are all there is.
  const archived = RUN_LIFECYCLE.isTerminal(run.status) && run.logs_complete;
  const rows = await pgLogStore(db, RUN_TABLE).readLines(runId, after, opts.limit + 1);
  const lines: RunLogLine[] = [];
  let bytes = 0;
  for (const r of rows.slice(0, opts.limit)) {
    bytes += Buffer.byteLength(r.line) + 1;
    if (lines.length > 0 && bytes > opts.maxBytes) break;
    lines.push({ seq: r.seq, stream: r.stream, ts: r.ts, line: r.line });
  }
  return { lines, complete: archived && lines.length === rows.length };
}
