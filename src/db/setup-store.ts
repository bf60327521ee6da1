import { sql } from "kysely";
import type { SetupStore } from "../logs/contracts.ts";
import type { Db } from "./database.ts";

/**
 * Postgres as the setup lines' store (the run log stream's `setup` events): which build a run
 * waits for, and that build's row and stored log.
 */
export function pgSetupStore(db: Db): SetupStore {
  return {
    async target(runId) {
      // The run's environment, by the key it records: the account's live row of that key.
      const row = await db
        .selectFrom("runs")
        .innerJoin("environments", (j) =>
          j
            .onRef("environments.account_id", "=", "runs.account_id")
            .on("environments.key", "=", sql<string>`runs.environment->>'key'`)
            .on("environments.deleted_at", "is", null),
        )
        .select([
          "environments.id as environment_id",
          "environments.status",
          "environments.completed_at",
          "runs.created_at",
          sql<string | null>`runs.environment->>'cache'`.as("cache"),
        ])
        .where("runs.id", "=", runId)
        .where("runs.deleted_at", "is", null)
        .executeTakeFirst();
      if (!row || row.cache === "hit") return null;
      // Ready (or failed) before the run was made: a cache hit, nothing was built while it waited.
      if (row.status !== "building" && row.cache !== "built" && (row.completed_at === null || row.completed_at <= row.created_at)) return null;
      return { environmentId: row.environment_id };
    },
    async environment(environmentId) {
      const row = await db
        .selectFrom("environments")
        .select(["status", "completed_at"])
        .where("id", "=", environmentId)
        .where("deleted_at", "is", null)
        .executeTakeFirst();
      return row ? { status: row.status, completedAt: row.completed_at?.toISOString() ?? null } : null;
    },
    async storedLog(environmentId) {
      const row = await db.selectFrom("environments").select("log").where("id", "=", environmentId).executeTakeFirst();
      return row?.log ?? null;
    },
  };
}
