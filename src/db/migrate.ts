import { Migrator } from "kysely/migration";
import type { Logger } from "../logger.ts";
import type { Db } from "./database.ts";
import { migrationProvider } from "./migrations/index.ts";

export interface MigrationOutcome {
  applied: string[];
}

/**
 * Safe to run from several processes at once (every replica migrates on start):
 * Kysely's Postgres adapter holds a session advisory lock around the pending
 * migrations, which run in one transaction, and it tolerates the race to create
 * its own bookkeeping tables. test/db/migrate-concurrently.test.ts pins this.
 */
export async function migrateToLatest(db: Db, logger: Logger): Promise<MigrationOutcome> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  const applied = (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
  for (const r of results ?? []) {
    if (r.status === "Error") logger.error({ migration: r.migrationName }, "migration failed");
  }
  // Kysely types the error as unknown: anything but an Error is wrapped with its String().
  // eslint-disable-next-line @typescript-eslint/no-base-to-string
  if (error) throw error instanceof Error ? error : new Error(String(error));
  if (applied.length) logger.info({ applied }, "database migrated");
  return { applied };
}
