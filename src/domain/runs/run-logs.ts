import type { Db } from "../../db/database.ts";
import { notFound } from "../errors.ts";

export interface RunLog {
  run_id: string;
  stream: "stdout" | "stderr";
  content: string;
  size: number;
  truncated: boolean;
}

/** A run's stored output for one stream: the lines in order, newline-terminated. */
export async function readRunLog(db: Db, accountId: string, runId: string, stream: "stdout" | "stderr"): Promise<RunLog> {
  const run = await db
    .selectFrom("runs")
    .select(["id", "stdout_truncated", "stderr_truncated"])
    .where("id", "=", runId)
    .where("account_id", "=", accountId)
    .where("deleted_at", "is", null)
    .executeTakeFirst();
  if (!run) throw notFound("Run");
  const rows = await db.selectFrom("run_log_lines").select("line").where("run_id", "=", runId).where("stream", "=", stream).orderBy("seq").execute();
  const content = rows.map((r) => `${r.line}\n`).join("");
  return {
    run_id: runId,
    stream,
    content,
    size: Buffer.byteLength(content),
    truncated: stream === "stdout" ? run.stdout_truncated : run.stderr_truncated,
  };
}
