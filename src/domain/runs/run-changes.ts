import { sql } from "kysely";
import type { Db } from "../../db/database.ts";
import type { RunRow } from "../../db/schema.ts";

// The SQL of the run feed (GET /v1/runs/events): which runs changed since a
// position, and the position reached. A position is a transaction id (xid8,
// as decimal text): "every change made by a transaction below it has been
// read". Each read answers with the oldest transaction still running when it
// read (its snapshot's xmin): every transaction below that one had ended, so
// its changes were in the read. Rows a transaction at or above it changed are
// in the read too when it had committed (a change is never held back); a
// resume from that position reads them again (the feed sends each change once
// per stream: run-feed.ts). A replica's looks go by the snapshot itself
// instead (LookFrom): each reads only what the last one could not see, so a
// transaction left open does not make every look read every change since it
// began. Migration 0026 says why a sequence or a timestamp would skip changes.

/** A run that changed: its row (hidden ones too: deleted through the API) and the phases it went through. */
export interface RunChange {
  row: RunRow;
  /** Its recorded phases (run_transitions), in order: a stream filtered by status hears of runs that left it. */
  phases: string[];
}

/**
 * Where a replica's next look starts: the transactions its last read could
 * not see, those at or above that snapshot's xmax and those still running
 * then (its xip). Every other transaction's changes were in that read, so a
 * look reads each change once, however long a transaction elsewhere stays
 * open (a position, its xmin, would have it read everything since that
 * transaction began, each time).
 */
export interface LookFrom {
  xmax: string;
  xip: string[];
}

export interface ChangesRead {
  /** The position reached (a client resumes from it): the next read from a position starts here. */
  position: string;
  /** Where the next look starts. */
  next: LookFrom;
  /** Ordered by change_xid; at most `limit`. */
  changes: RunChange[];
}

/** The position now: a stream that starts here is told every change from now on. */
export async function currentPosition(db: Db): Promise<string> {
  return (await currentSnapshot(db)).position;
}

/** The position now, and where a look that starts now reads from. */
export async function currentSnapshot(db: Db): Promise<{ position: string; next: LookFrom }> {
  const { rows } = await sql<Snapshot>`select ${SNAPSHOT} from pg_current_snapshot() s`.execute(db);
  return { position: rows[0]!.position, next: lookFrom(rows[0]!) };
}

type Snapshot = { position: string; look_xmax: string; look_xip: string };
/** The snapshot `s`'s xmin, xmax and running transactions (comma-separated), as text. */
const SNAPSHOT = sql`pg_snapshot_xmin(s)::text as position, pg_snapshot_xmax(s)::text as look_xmax,
  array_to_string(array(select pg_snapshot_xip(s)), ',') as look_xip`;
const lookFrom = (r: Snapshot): LookFrom => ({ xmax: r.look_xmax, xip: r.look_xip === "" ? [] : r.look_xip.split(",") });

/**
 * The runs changed since `since`: a position (change_xid at or above it; a
 * client's resume, of its account) or where a look starts (a replica's, of
 * every account), with the position this read reached and where the next
 * look starts. Both come from the same statement, so from the same snapshot.
 */
export async function readChanges(db: Db, since: string | LookFrom, opts: { accountId?: string; limit: number }): Promise<ChangesRead> {
  const account = opts.accountId === undefined ? sql`` : sql`and r.account_id = ${opts.accountId}`;
  // Two ranges of the change_xid index for a look (an OR of them would be
  // read as a filter over the whole index, in its order), merged in order.
  const changed =
    typeof since === "string"
      ? sql`select * from runs r where r.change_xid >= ${since}::xid8 ${account}`
      : sql`select * from runs r where r.change_xid >= ${since.xmax}::xid8 ${account}
          union all
          select * from runs r where r.change_xid = any(string_to_array(${since.xip.join(",")}, ',')::xid8[]) and r.change_xid is not null ${account}`;
  const { rows } = await sql<RunRow & Snapshot & { phases: string[] | null; id: string | null }>`
    select h.*, c.*
    from (select ${SNAPSHOT} from pg_current_snapshot() s) h
    left join lateral (
      select r.*, array(select t.phase from run_transitions t where t.run_id = r.id order by t.seq) as phases
      from (${changed}) r
      order by r.change_xid
      limit ${opts.limit}
    ) c on true`.execute(db);
  const changes = rows.filter((r) => r.id !== null).map(({ position: _p, look_xmax: _x, look_xip: _i, phases, ...row }) => ({ row, phases: phases ?? [] }));
  return { position: rows[0]!.position, next: lookFrom(rows[0]!), changes };
}

/**
 * Which of these accounts (those with streams open in this process) have runs
 * changed since a look's start, as of now: a look that read more than its
 * limit resets only their streams. Read after the look, it finds every
 * account the look's changes belonged to, and perhaps more (changes committed
 * since; a reset is always safe). One probe of the (account_id, change_xid)
 * index per account, which stops at its first row: a bulk change of a
 * million runs costs this a few milliseconds, where reading the accounts of
 * every changed run took seconds.
 */
export async function accountsChangedSince(db: Db, since: LookFrom, accountIds: readonly string[]): Promise<Set<string>> {
  if (accountIds.length === 0) return new Set();
  const { rows } = await sql<{ account_id: string }>`
    select a.id as account_id
    from unnest(${[...accountIds]}::uuid[]) a(id)
    cross join lateral (
      (select 1 from runs r where r.account_id = a.id and r.change_xid >= ${since.xmax}::xid8 limit 1)
      union all
      (select 1 from runs r where r.account_id = a.id and r.change_xid = any(string_to_array(${since.xip.join(",")}, ',')::xid8[]) and r.change_xid is not null limit 1)
      limit 1
    ) x`.execute(db);
  return new Set(rows.map((r) => r.account_id));
}

/** Orders two positions (xid8 text). */
export const positionBelow = (a: string, b: string): boolean => BigInt(a) < BigInt(b);

/** Whether the read a look goes on from `look` saw the transaction `xid` (committed): no later look reads its changes. */
export const seenBy = (look: LookFrom, xid: string): boolean => positionBelow(xid, look.xmax) && !look.xip.includes(xid);
