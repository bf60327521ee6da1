import { sql, type Kysely } from "kysely";

// Collapsible groups in the run page's log (issue 35): the stored lines that
// mark a group (`::group::<title>`, `::endgroup::`, as GitHub Actions' runners
// print them) are listed by GET /v1/runs/{id}/logs/groups through this partial
// index, so opening a run of a million lines reads its few markers instead of
// scanning its output. Only lines that start with "::" are in it.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex("run_log_lines_markers")
    .on("run_log_lines")
    .columns(["run_id", "seq"])
    .where(sql<boolean>`line like '::%'`)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("run_log_lines_markers").execute();
}
