import type { Db } from "../../db/database.ts";

/**
 * This installation's identity, made with its database (migration 0004). The
 * API labels every resource it creates with it and the controller acts only on
 * resources that carry it, so the identity travels with the data: a process
 * pointed at another database is another installation.
 */
export async function readInstallationId(db: Db): Promise<string> {
  const row = await db.selectFrom("installation").select("id").executeTakeFirstOrThrow();
  return row.id;
}
