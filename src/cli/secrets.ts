import { SecretBox } from "../domain/crypto/secret-box.ts";
import { EnvVarService } from "../domain/env-vars/env-vars.ts";
import { NotificationService } from "../domain/notifications/notifications.ts";
import type { CommandGroup } from "./command.ts";
import { withDatabase } from "./database.ts";

/** codeplane secrets reencrypt: every stored value (variables, notification endpoints' signing secrets) again, under the current encryption key. */
export const run: CommandGroup = async ({ sub, config, logger, print }) => {
  if (sub !== "reencrypt") return "usage";
  await withDatabase(config, logger, async ({ db }) => {
    const box = new SecretBox(config.encryption);
    const variables = await new EnvVarService(box).reencryptAll(db);
    const endpoints = await new NotificationService({ box, allowLocal: false, maxEndpointsPerAccount: 0 }).reencryptAll(db);
    print({ reencrypted: variables + endpoints });
  });
  return 0;
};
