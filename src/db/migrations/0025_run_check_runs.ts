import { sql, type Kysely } from "kysely";

// Check runs for runs (docs/users/github.md): a repository connected through
// the GitHub App can opt in (`report_check_runs`), and each run of it created
// afterwards reports a check run on its commit. The queue is a table like
// github_check_runs (0008), one row per run with what GitHub was last told.
//
// A row is written by a trigger in the same transaction as the run's row, so
// no run is missed across restarts or replicas and the code that creates runs
// (the controller's mirror) does not change: the trigger costs one primary-key
// read of the repository per new run, and nothing for repositories not opted in
// beyond that read. The installation and `owner/name` are taken when the run is
// created: a check run must be updated where it was made.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("repositories")
    .addColumn("report_check_runs", "boolean", (c) => c.notNull().defaultTo(false))
    .execute();

  // github_check_runs' columns, defaults and checks, keyed by the run instead of the analysis.
  await sql`create table github_run_check_runs (like github_check_runs including defaults including constraints)`.execute(db);
  await db.schema.alterTable("github_run_check_runs").dropColumn("analysis_id").execute();
  await db.schema
    .alterTable("github_run_check_runs")
    .addColumn("run_id", "uuid", (c) => c.primaryKey().references("runs.id").onDelete("cascade"))
    .execute();
  await sql`create index github_run_check_runs_unsettled_idx on github_run_check_runs (available_at) where not abandoned and (sent is null or sent <> 'completed')`.execute(
    db,
  );

  // owner/name from the clone URL codeplane registered (`{web_url}/{owner}/{name}.git`).
  await sql`
    create function enqueue_run_check_run() returns trigger language plpgsql as $$
    begin
      -- Most repositories do not report: one index probe, and out.
      perform 1 from repositories where id = new.repository_id and report_check_runs;
      if not found then
        return null;
      end if;
      insert into github_run_check_runs (run_id, installation_id, repository_full_name, head_sha)
      select new.id, i.installation_id, regexp_replace(regexp_replace(p.url, '(\\.git)?/*$', ''), '^.*/([^/]+/[^/]+)$', '\\1'), new.commit_hash
        from repositories p
        join integrations i on i.id = p.integration_id and i.deleted_at is null
       where p.id = new.repository_id and p.report_check_runs and p.provider = 'github'
      on conflict (run_id) do nothing;
      return null;
    end $$`.execute(db);
  await sql`create trigger runs_report_check_run after insert on runs for each row execute function enqueue_run_check_run()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger runs_report_check_run on runs`.execute(db);
  await sql`drop function enqueue_run_check_run()`.execute(db);
  await db.schema.dropTable("github_run_check_runs").execute();
  await db.schema.alterTable("repositories").dropColumn("report_check_runs").execute();
}
