import { sql, type Kysely } from "kysely";

// The account's run feed, GET /v1/runs/events (issue 35: the runs list live
// without polling). Each API replica reads what changed since its last look
// and hands it to its streams; a client resumes after a drop from the id it
// last saw. Both need a position in the order changes became visible, which a
// sequence or a timestamp is not (a lower number can commit after a higher one
// was read, and would be skipped). So a run's row records which transaction
// last changed what the API shows of it (`change_xid`, set by this trigger
// whoever writes: the controller's mirror, the API, the archiver, SQL by
// hand), and a reader takes the oldest transaction still running when it read
// (`pg_snapshot_xmin(pg_current_snapshot())`) as the point before which it has
// seen everything: every transaction below it has ended, so its changes were
// in the read. The byte counts and metric sequence the archiver writes on
// every batch are not what a run's state is, and leave the column alone.
// Each change also NOTIFYs `runs_changed`, so a process listening reads at
// once instead of at its next look (the looks stay: they are what is
// relied on; a notification only makes them sooner).

const SHOWN = [
  "status",
  "exit_code",
  "error",
  "start_time",
  "close_time",
  "environment",
  "timeline",
  "first_output_at",
  "final_metrics",
  "queue_reason",
  "attempts",
  "deleted_at",
];

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("runs")
    .addColumn("change_xid", sql`xid8`)
    .execute();
  await sql`
    create function runs_change_xid() returns trigger language plpgsql as $$
    begin
      new.change_xid := pg_current_xact_id();
      return new;
    end $$`.execute(db);
  // The notification is sent AFTER the row is written: a BEFORE INSERT trigger
  // also fires for an upsert that becomes an update (the controller's mirror
  // writes every reconcile so), which would wake every feed for a change of
  // nothing. Identical payloads of one transaction are sent once, at commit.
  await sql`
    create function runs_changed_notify() returns trigger language plpgsql as $$
    begin
      perform pg_notify('runs_changed', '');
      return null;
    end $$`.execute(db);
  const changed = SHOWN.map((c) => `old.${c} is distinct from new.${c}`).join(" or ");
  await sql`create trigger runs_change_xid_insert before insert on runs for each row execute function runs_change_xid()`.execute(db);
  await sql`create trigger runs_change_xid_update before update on runs for each row when (${sql.raw(changed)}) execute function runs_change_xid()`.execute(db);
  await sql`create trigger runs_changed_notify_insert after insert on runs for each row execute function runs_changed_notify()`.execute(db);
  await sql`create trigger runs_changed_notify_update after update on runs for each row when (${sql.raw(changed)}) execute function runs_changed_notify()`.execute(
    db,
  );
  // The replicas' look at every account's changes, and a resuming client's at its own account's.
  await db.schema
    .createIndex("runs_change_xid")
    .on("runs")
    .column("change_xid")
    .where(sql<boolean>`change_xid is not null`)
    .execute();
  await db.schema
    .createIndex("runs_account_change_xid")
    .on("runs")
    .columns(["account_id", "change_xid"])
    .where(sql<boolean>`change_xid is not null`)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists runs_changed_notify_update on runs`.execute(db);
  await sql`drop trigger if exists runs_changed_notify_insert on runs`.execute(db);
  await sql`drop function if exists runs_changed_notify()`.execute(db);
  await sql`drop trigger if exists runs_change_xid_update on runs`.execute(db);
  await sql`drop trigger if exists runs_change_xid_insert on runs`.execute(db);
  await sql`drop function if exists runs_change_xid()`.execute(db);
  await db.schema.alterTable("runs").dropColumn("change_xid").execute();
}
