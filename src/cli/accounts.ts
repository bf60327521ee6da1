import { createAccount } from "../domain/accounts/accounts.ts";
import type { CommandGroup } from "./command.ts";
import { withDatabase } from "./database.ts";

/** codeplane accounts create <name> */
export const run: CommandGroup = async ({ sub, rest, config, logger, print }) => {
  if (sub !== "create" || rest.length !== 1) return "usage";
  await withDatabase(config, logger, async ({ db }) => print(await createAccount(db, rest[0]!)));
  return 0;
};
