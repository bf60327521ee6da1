import { sql } from "kysely";
import type { Db } from "../../db/database.ts";
import type { RunRow } from "../../db/schema.ts";

// The SQL of the run feed (GET /v1/runs/events): which runs changed since a
// position, and the position reached. A position is a transaction id (xid8,
// as decimal text): "every change made by a transaction below it has been
// read". Each read answers with the oldest transaction still running when it
// read (its snapshot's xmin): every transaction below that one had ended, so
// its changes were in the read. Rows a transaction at or above it changed are
// in the read too when it had committed (a change is never held back), and are
// read again next time, since their change_xid is not below the position (the
// feed sends each change once per stream: run-feed.ts). Migration 0026 says
// why a sequence or a timestamp would skip changes.

/** A run that changed: its row (hidden ones too: deleted through the API) and the phases it went through. */
export interface RunChange {
  row: RunRow;
  /** Its recorded phases (run_transitions), in order: a stream filtered by status hears of runs that left it. */
  phases: string[];
}

export interface ChangesRead {
  /** The position reached: the next read starts here. */
  position: string;
  /** Ordered by change_xid; at most `limit`. */
  changes: RunChange[];
}

/** The position now: a stream that starts here is told every change from now on. */
export async function currentPosition(db: Db): Promise<string> {
  const { rows } = await sql<{ position: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as position`.execute(db);
  return rows[0]!.position;
}

/**
 * The runs whose change_xid is at or above `since` (of one account, or of
 * every account for a replica's look), with the position this read reached.
 * The position comes from the same statement, so from the same snapshot.
 */
export async function readChanges(db: Db, since: string, opts: { accountId?: string; limit: number }): Promise<ChangesRead> {
  const account = opts.accountId === undefined ? sql`` : sql`and r.account_id = ${opts.accountId}`;
  const { rows } = await sql<RunRow & { position: string; phases: string[] | null; id: string | null }>`
    select h.position::text as position, c.*
    from (select pg_snapshot_xmin(pg_current_snapshot()) as position) h
    left join lateral (
      select r.*, array(select t.phase from run_transitions t where t.run_id = r.id order by t.seq) as phases
      from runs r
      where r.change_xid >= ${since}::xid8 ${account}
      order by r.change_xid
      limit ${opts.limit}
    ) c on true`.execute(db);
  const position = rows[0]!.position;
  const changes = rows.filter((r) => r.id !== null).map(({ position: _p, phases, ...row }) => ({ row, phases: phases ?? [] }));
  return { position, changes };
}

/** Orders two positions (xid8 text). */
export const positionBelow = (a: string, b: string): boolean => BigInt(a) < BigInt(b);
