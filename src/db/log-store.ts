import type { LogLine, LogStore, StreamState } from "../logs/contracts.ts";
import type { Db } from "./database.ts";
import { untyped, type WorkloadTable } from "./workload-tables.ts";

/** Postgres as the log hub's store, over one kind of workload's row and lines tables. */
export function pgLogStore(typedDb: Db, owner: WorkloadTable): LogStore {
  const db = untyped(typedDb);
  return {
    async readLines(id, afterSeq, limit): Promise<LogLine[]> {
      const rows: { seq: string; stream: "stdout" | "stderr"; ts: Date; line: string }[] = await db
        .selectFrom(owner.linesTable)
        .select(["seq", "stream", "ts", "line"])
        .where(owner.key, "=", id)
        .where("seq", ">", String(afterSeq))
        .orderBy("seq")
        .limit(limit)
        .execute();
      // bigint comes back from pg as a string.
      return rows.map((r) => ({ seq: Number(r.seq), stream: r.stream, ts: r.ts.toISOString(), line: r.line }));
    },
    async maxSeq(id) {
      const row = await db
        .selectFrom(owner.linesTable)
        .select((eb) => eb.fn.max("seq").as("max"))
        .where(owner.key, "=", id)
        .executeTakeFirst();
      return row?.max == null ? 0 : Number(row.max);
    },
    async readState(id): Promise<StreamState | null> {
      const row: { status: string; exit_code: number | null; logs_complete: boolean } | undefined = await db
        .selectFrom(owner.table)
        .select(["status", "exit_code", "logs_complete"])
        .where("id", "=", id)
        .where("deleted_at", "is", null)
        .executeTakeFirst();
      return row ? { status: row.status, terminal: owner.lifecycle.isTerminal(row.status), exitCode: row.exit_code, logsComplete: row.logs_complete } : null;
    },
  };
}
