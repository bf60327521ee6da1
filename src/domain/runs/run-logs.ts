import { sql } from "kysely";
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

/** Bounds of the paged read (GET /v1/runs/{id}/logs/stdout|stderr?after=&limit=, GET /v1/runs/{id}/logs). */
export const LOG_PAGE = { defaultLimit: 1000, maxLimit: 5000, maxBytes: 4 * 1024 * 1024 } as const;

export interface RunLogPageRead {
  run_id: string;
  stream: "stdout" | "stderr" | null;
  lines: RunLogLine[];
  /** Pass as ?after= for the next page; null when this page reached the last stored line. */
  next_after: number | null;
  /** The seq of the last stored line of the run (either stream); 0 when none. */
  last_seq: number;
  /** The run is over and its whole output is archived: nothing more will be stored. */
  complete: boolean;
  truncated: boolean;
}

export interface LogPageQuery {
  stream?: "stdout" | "stderr" | undefined;
  /** Lines with seq > after, oldest first (the default, from the start). */
  after?: number | undefined;
  /** Lines with seq < before, the newest `limit` of them, still in order (a log's end: a large before). */
  before?: number | undefined;
  limit?: number | undefined;
  /** Only the lines that mark a group (`::group::<title>`, `::endgroup::`), through the partial index of lines starting with "::". */
  groups?: boolean | undefined;
}

type LineRow = { seq: string; stream: "stdout" | "stderr"; ts: Date; line: string };

const toLine = (r: LineRow): RunLogLine => ({ seq: Number(r.seq), stream: r.stream, ts: r.ts.toISOString(), line: r.line });

/** The highest stored seq of a run, either stream (the primary key's last entry). */
async function lastSeq(db: Db, runId: string): Promise<number> {
  const row = await db.selectFrom("run_log_lines").select("seq").where("run_id", "=", runId).orderBy("seq", "desc").limit(1).executeTakeFirst();
  return row ? Number(row.seq) : 0;
}

/**
 * One page of a run's stored output by sequence: after a seq (forwards) or before one (the
 * newest lines below it), one stream or both interleaved, at most `limit` lines and about
 * LOG_PAGE.maxBytes of text (always at least one line).
 */
export async function readRunLogPage(db: Db, accountId: string, runId: string, q: LogPageQuery): Promise<RunLogPageRead> {
  const run = await findRun(db, accountId, runId);
  if (!run) throw notFound("Run");
  const complete = RUN_LIFECYCLE.isTerminal(run.status) && run.logs_complete;
  const limit = Math.min(q.limit ?? LOG_PAGE.defaultLimit, LOG_PAGE.maxLimit);
  const backwards = q.before !== undefined && q.after === undefined;
  let query = db.selectFrom("run_log_lines").select(["seq", "stream", "ts", "line"]).where("run_id", "=", runId);
  if (q.stream) query = query.where("stream", "=", q.stream);
  // The index's own predicate, as a literal (migration 0023), so the planner uses it.
  if (q.groups) query = query.where(sql<boolean>`line like '::%' and (line like '::group::%' or line like '::endgroup::%')`);
  if (q.after !== undefined) query = query.where("seq", ">", String(q.after));
  if (q.before !== undefined) query = query.where("seq", "<", String(q.before));
  const rows = (await query
    .orderBy("seq", backwards ? "desc" : "asc")
    .limit(limit + 1)
    .execute()) as LineRow[];
  const more = rows.length > limit;
  let taken = rows.slice(0, limit);
  let bytes = 0;
  let cut = false;
  for (let i = 0; i < taken.length; i++) {
    bytes += Buffer.byteLength(taken[i]!.line) + 1;
    if (i > 0 && bytes > LOG_PAGE.maxBytes) {
      taken = taken.slice(0, i);
      cut = true;
      break;
    }
  }
  if (backwards) taken.reverse();
  const lines = taken.map(toLine);
  const last = lines.at(-1)?.seq;
  const maxSeq = await lastSeq(db, runId);
  // Backwards, the next page forwards starts after the last line given, if anything is stored after it.
  const nextAfter = backwards ? (last !== undefined && last < maxSeq ? last : null) : (more || cut) && last !== undefined ? last : null;
  const truncated = q.stream === "stdout" ? run.stdout_truncated : q.stream === "stderr" ? run.stderr_truncated : run.stdout_truncated || run.stderr_truncated;
  return { run_id: runId, stream: q.stream ?? null, lines, next_after: nextAfter, last_seq: maxSeq, complete, truncated };
}

/** Bounds of the search (GET /v1/runs/{id}/logs/search). */
export const LOG_SEARCH = {
  maxQueryLength: 256,
  defaultLimit: 50,
  maxLimit: 500,
  /** Lines (by seq) one statement examines; a request goes on window after window up to the budget. */
  window: 100_000,
  /** Time one request may spend scanning before it answers with what it found and where to go on. */
  budgetMs: 2_000,
} as const;

export interface LogSearchQuery {
  q: string;
  stream?: "stdout" | "stderr" | undefined;
  after?: number | undefined;
  limit?: number | undefined;
  caseSensitive?: boolean | undefined;
}

export interface RunLogSearch {
  run_id: string;
  q: string;
  items: RunLogLine[];
  /** Pass as ?after= to go on; null when the whole stored log after `after` was searched. */
  next_after: number | null;
  /** Every stored line with seq <= this (and > after) was searched. */
  searched_through: number;
  last_seq: number;
}

/**
 * The stored lines of a run that contain `q` (a literal substring; case-insensitive unless asked),
 * after a seq, in order. The scan goes through the primary key by seq windows, so it is bounded per
 * statement, and a request stops at `limit` matches or after its time budget, saying where to go on.
 */
export async function searchRunLog(db: Db, accountId: string, runId: string, s: LogSearchQuery, budgetMs: number = LOG_SEARCH.budgetMs): Promise<RunLogSearch> {
  const run = await findRun(db, accountId, runId);
  if (!run) throw notFound("Run");
  const limit = Math.min(s.limit ?? LOG_SEARCH.defaultLimit, LOG_SEARCH.maxLimit);
  const maxSeq = await lastSeq(db, runId);
  const started = Date.now();
  const pattern = `%${s.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const items: RunLogLine[] = [];
  let from = s.after ?? 0;
  while (from < maxSeq && items.length < limit) {
    const to = Math.min(from + LOG_SEARCH.window, maxSeq);
    // LIKE with its wildcards and escape character escaped: a literal match.
    let query = db
      .selectFrom("run_log_lines")
      .select(["seq", "stream", "ts", "line"])
      .where("run_id", "=", runId)
      .where("seq", ">", String(from))
      .where("seq", "<=", String(to))
      .where(s.caseSensitive ? sql<boolean>`line like ${pattern}` : sql<boolean>`line ilike ${pattern}`);
    if (s.stream) query = query.where("stream", "=", s.stream);
    const rows = (await query
      .orderBy("seq")
      .limit(limit - items.length)
      .execute()) as LineRow[];
    items.push(...rows.map(toLine));
    from = items.length >= limit ? items.at(-1)!.seq : to;
    if (Date.now() - started >= budgetMs) break;
  }
  const done = from >= maxSeq;
  return { run_id: runId, q: s.q, items, next_after: done ? null : from, searched_through: Math.min(from, maxSeq), last_seq: maxSeq };
}
