import { parseArgs } from "node:util";
import { getAccountByName } from "../domain/accounts/accounts.ts";
import { generateApiKey } from "../domain/auth/api-key-token.ts";
import { createApiKey } from "../domain/auth/api-keys.ts";
import { createApiKeySchema } from "../domain/auth/api-keys.schemas.ts";
import type { CommandGroup } from "./command.ts";
import { withDatabase } from "./database.ts";

/**
 * codeplane keys generate: offline, for seeding a Secret (CODEPLANE_BOOTSTRAP_API_KEY):
 * a well-formed key, checksum included, stored nowhere. Needs no configuration.
 */
export function generate(rest: string[]): number {
  if (rest.length) {
    process.stderr.write("codeplane: keys generate takes no arguments\n");
    return 2;
  }
  process.stdout.write(`${generateApiKey().key}\n`);
  return 0;
}

/** codeplane keys create --account <name> --name <key name> [--scopes s1,s2] [--expires-at RFC3339] */
export const run: CommandGroup = async ({ sub, rest, config, logger, print }) => {
  if (sub !== "create") return "usage";
  const { values } = parseArgs({
    args: rest,
    options: { account: { type: "string" }, name: { type: "string" }, scopes: { type: "string" }, "expires-at": { type: "string" } },
    strict: true,
  });
  if (!values.account || !values.name) return "usage";
  const input = createApiKeySchema.parse({
    name: values.name,
    ...(values.scopes && { scopes: values.scopes.split(",").map((s) => s.trim()) }),
    ...(values["expires-at"] && { expires_at: values["expires-at"] }),
  });
  await withDatabase(config, logger, async ({ db }) => {
    const account = await getAccountByName(db, values.account!);
    print({ account: account.name, ...(await createApiKey(db, account.id, input)) });
  });
  return 0;
};
