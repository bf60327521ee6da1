import { sql } from "kysely";
import type { Db } from "../src/db/database.ts";

// Seeds the runs table for the run-list benchmark in one INSERT ... SELECT
// generate_series (seconds for a million rows, where row-by-row would take
// minutes). Ids are UUIDv7 in creation order, as the service mints them, so
// keyset pages over them behave as in production.

/** Status mix of a busy installation: mostly finished runs, a few live ones. */
const STATUS_CASE = sql`case
  when k < 70 then 'completed' when k < 85 then 'failed' when k < 90 then 'cancelled'
  when k < 95 then 'running' when k < 99 then 'pending' else 'preprocessing' end`;

export async function seedRuns(db: Db, accountId: string, repositoryIds: string[], rows: number): Promise<void> {
  // One statement per million keeps the transaction (and its WAL) bounded.
  const chunk = 1_000_000;
  for (let from = 0; from < rows; from += chunk) {
    const to = Math.min(rows, from + chunk) - 1;
    await sql`
      insert into runs (id, account_id, repository_id, commit_hash, workflow_id, status, compute_type, run_config, exit_code, start_time, close_time, created_at, updated_at)
      select
        (lpad(to_hex(t.ms), 12, '0') || '7' || substr(h, 1, 3) || '8' || substr(h, 4, 15))::uuid,
        ${accountId}::uuid,
        (${repositoryIds}::uuid[])[1 + i % ${repositoryIds.length}],
        h || '00000000',
        'bench-' || i,
        ${STATUS_CASE},
        'cpu-small',
        '{"command":["python","train.py"],"parameters":{"lr":0.01},"timeout_seconds":3600}'::jsonb,
        case when k < 85 then (k >= 70)::int end,
        to_timestamp(t.ms / 1000.0),
        case when k < 90 then to_timestamp(t.ms / 1000.0 + 60) end,
        to_timestamp(t.ms / 1000.0),
        to_timestamp(t.ms / 1000.0)
      from generate_series(${from}::int, ${to}::int) as i,
        -- k: the status draw, independent of the repository (i % repositories)
        lateral (select md5(i::text) as h, abs(hashint4(i)) % 100 as k) as m,
        -- a run a second, ending now
        lateral (select (extract(epoch from now()) * 1000)::bigint - (${rows}::bigint - i) * 1000 as ms) as t`.execute(db);
  }
  // Vacuumed and checkpointed now, so autovacuum and the checkpointer do not run during the measurements.
  await sql`vacuum analyze runs`.execute(db);
  await sql`checkpoint`.execute(db);
}
