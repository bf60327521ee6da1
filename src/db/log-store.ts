import { sql, type AliasedRawBuilder } from "kysely";
import type { LogLine, LogStore, StreamState } from "../logs/contracts.ts";
import { transitionsSince } from "../resources/lifecycle.ts";
import type { Db } from "./database.ts";
import { untyped, type WorkloadTable } from "./workload-tables.ts";

/**
 * More of one kind's row for its stream's state (a run's timeline), read in the same statement as
 * the rest of it: what to select, and what that adds to the state.
 */
export interface StateExtra {
  /** Column names of owner.table, or aliased expressions over them (sql`...`.as(name)); names other than the state's own. */
  readonly select: readonly (string | AliasedRawBuilder<unknown, string>)[];
  readonly state: (row: Record<string, unknown>) => Pick<StreamState, "timeline">;
}

/** Postgres as the log hub's store, over one kind of workload's row and lines tables (and, optionally, more of its row). */
export function pgLogStore(typedDb: Db, owner: WorkloadTable, extra?: StateExtra): LogStore {
  const db = untyped(typedDb);
  const phases = owner.lifecycle.phases;
  return {
    phases: { all: phases, live: phases.filter((p) => !owner.lifecycle.isTerminal(p)) },
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
      // One statement, so the row and its transitions are of the same moment (they are written together).
      // The extra's columns make the row's type unknowable here; it is the base's plus those.
      const row = (await db
        .selectFrom(owner.table)
        .select([
          "status",
          "exit_code",
          "logs_complete",
          `${owner.startColumn} as start`,
          `${owner.endColumn} as end`,
          sql<
            string[]
          >`array(select phase from ${sql.table(owner.transitionsTable)} where ${sql.ref(owner.key)} = ${sql.ref(`${owner.table}.id`)} order by seq)`.as(
            "recorded",
          ),
          ...(extra?.select ?? []),
        ])
        .where("id", "=", id)
        .where("deleted_at", "is", null)
        .executeTakeFirst()) as
        | ({ status: string; exit_code: number | null; logs_complete: boolean; start: Date | null; end: Date | null; recorded: string[] | null } & Record<
            string,
            unknown
          >)
        | undefined;
      if (!row) return null;
      const recorded = row.recorded ?? [];
      // A status written without its transitions (by hand, or before they were recorded) still counts, with what it implies.
      const implied = transitionsSince(owner.lifecycle, recorded, { phase: row.status, startTime: row.start, endTime: row.end }, new Date());
      return {
        status: row.status,
        history: [...recorded, ...implied.map((t) => t.phase)],
        terminal: owner.lifecycle.isTerminal(row.status),
        exitCode: row.exit_code,
        logsComplete: row.logs_complete,
        ...extra?.state(row),
      };
    },
  };
}
