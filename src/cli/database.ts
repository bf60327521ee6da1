import type { Config } from "../config.ts";
import { openDatabase, type DatabaseHandle } from "../db/database.ts";
import { migrateToLatest } from "../db/migrate.ts";
import type { Logger } from "../logger.ts";

/** Runs `fn` with a small pool of the configured database (migrated first unless turned off), closed afterwards. */
export async function withDatabase<T>(config: Readonly<Config>, logger: Logger, fn: (db: DatabaseHandle) => Promise<T>): Promise<T> {
  const database = await openDatabase({
    url: config.database.url,
    poolMax: 2,
    preparedStatements: config.database.preparedStatements,
    dataDir: config.dataDir,
    logger,
  });
  try {
    if (config.database.migrateOnStart) await migrateToLatest(database.db, logger);
    return await fn(database);
  } finally {
    await database.close();
  }
}
