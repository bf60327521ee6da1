import { sql } from "kysely";
import type { Db } from "../../db/database.ts";
import { untyped, type WorkloadTable } from "../../db/workload-tables.ts";
import type { LogLine, MetricFrame } from "../../logs/contracts.ts";

// Where the log archiver keeps a workload's output in Postgres: lines keyed
// by (owner, seq), so a repeated line is stored once, and per-stream byte
// counters and truncation flags on the workload's row.

export type Stream = "stdout" | "stderr";

export interface ArchiveResume {
  /** The highest stored seq: archiving carries on after it. */
  afterSeq: number;
  bytes: Record<Stream, number>;
}

/** Everything one batch of the log carried, whether its lines are kept or not (past the cap they are not). */
export interface ArchiveBatch {
  lines: readonly LogLine[];
  metrics: readonly MetricFrame[];
}

/** More a kind of workload stores from each batch, in the transaction that stores its lines (a run's metrics). */
export type ArchiveBatchHook = (tx: Db, id: string, batch: ArchiveBatch) => Promise<void>;

/** What the log archiver reads and writes (an interface, so it can be faked). */
export interface LogArchiveRows {
  /** Where archiving resumes; null when the workload is gone or its logs are already complete. */
  resume(id: string): Promise<ArchiveResume | null>;
  /** Stores lines (repeats are ignored) and the counters in one transaction, so they never disagree. */
  write(id: string, lines: readonly LogLine[], bytes: Record<Stream, number>, truncated: Record<Stream, boolean>, batch?: ArchiveBatch): Promise<void>;
  markComplete(id: string): Promise<void>;
}

/** The earliest line's time (lines come in seq order, but a batch after a resume may repeat older ones). */
function firstTs(lines: readonly LogLine[]): Date {
  let first = lines[0]!;
  for (const l of lines) if (l.seq < first.seq) first = l;
  return new Date(first.ts);
}

export function logArchiveRows(typedDb: Db, t: WorkloadTable, onBatch?: ArchiveBatchHook): LogArchiveRows {
  const db = untyped(typedDb);
  return {
    async resume(id) {
      const max = await db
        .selectFrom(t.linesTable)
        .select(sql<string | null>`max(seq)`.as("seq"))
        .where(t.key, "=", id)
        .executeTakeFirst();
      const row = await db.selectFrom(t.table).select(["stdout_bytes", "stderr_bytes", "logs_complete"]).where("id", "=", id).executeTakeFirst();
      if (!row || row.logs_complete) return null;
      return { afterSeq: Number(max?.seq ?? 0), bytes: { stdout: Number(row.stdout_bytes), stderr: Number(row.stderr_bytes) } };
    },
    async write(id, lines, bytes, truncated, batch) {
      await typedDb.transaction().execute(async (typedTx) => {
        const tx = untyped(typedTx);
        if (lines.length) {
          await tx
            .insertInto(t.linesTable)
            .values(lines.map((l) => ({ [t.key]: id, seq: l.seq, stream: l.stream, ts: new Date(l.ts), line: l.line })))
            .onConflict((oc) => oc.columns([t.key, "seq"]).doNothing())
            .execute();
        }
        await tx
          .updateTable(t.table)
          .set({
            stdout_bytes: bytes.stdout,
            stderr_bytes: bytes.stderr,
            ...(truncated.stdout && { stdout_truncated: true }),
            ...(truncated.stderr && { stderr_truncated: true }),
            // The run's timeline's first_output: the earliest line stored, once.
            ...(lines.length > 0 && { first_output_at: sql`coalesce(first_output_at, ${firstTs(lines)})` }),
          })
          .where("id", "=", id)
          .execute();
        if (onBatch && batch) await onBatch(typedTx, id, batch);
      });
    },
    async markComplete(id) {
      await db.updateTable(t.table).set({ logs_complete: true }).where("id", "=", id).execute();
    },
  };
}
