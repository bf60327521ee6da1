import { migrateToLatest } from "../db/migrate.ts";
import type { CommandGroup } from "./command.ts";
import { withDatabase } from "./database.ts";

/** codeplane migrate: applies the pending migrations and prints what was applied. */
export const run: CommandGroup = async ({ config, logger, print }) => {
  await withDatabase({ ...config, database: { ...config.database, migrateOnStart: false } }, logger, async ({ db }) => {
    print(await migrateToLatest(db, logger));
  });
  return 0;
};
