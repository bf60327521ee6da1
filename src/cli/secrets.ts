import { SecretBox } from "../domain/crypto/secret-box.ts";
import { EnvVarService } from "../domain/env-vars/env-vars.ts";
import type { CommandGroup } from "./command.ts";
import { withDatabase } from "./database.ts";

/** codeplane secrets reencrypt: every stored value again, under the current encryption key. */
export const run: CommandGroup = async ({ sub, config, logger, print }) => {
  if (sub !== "reencrypt") return "usage";
  await withDatabase(config, logger, async ({ db }) => {
    print({ reencrypted: await new EnvVarService(new SecretBox(config.encryption)).reencryptAll(db) });
  });
  return 0;
};
