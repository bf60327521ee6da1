import { parseArgs } from "node:util";
import { createAccount } from "../domain/accounts/accounts.ts";
import type { CommandGroup } from "./command.ts";
import { withDatabase } from "./database.ts";

/** A limit given on the command line: a count (0: none), or `default` (the operator's). */
function limitArg(value: string | undefined, name: string): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === "default") return null;
  if (!/^\d{1,7}$/.test(value)) throw new UsageError(`--${name} takes a count (0: no limit) or 'default'`);
  return Number(value);
}

class UsageError extends Error {}

/**
 * codeplane accounts create <name>
 * codeplane accounts limits <name> [--executing N|default] [--waiting N|default]
 */
export const run: CommandGroup = async ({ sub, rest, config, logger, print }) => {
  if (sub === "create" && rest.length === 1) {
    await withDatabase(config, logger, async ({ db }) => print(await createAccount(db, rest[0]!)));
    return 0;
  }
  if (sub !== "limits") return "usage";
  const { values, positionals } = parseArgs({
    args: rest,
    options: { executing: { type: "string" }, waiting: { type: "string" } },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length !== 1) return "usage";
  let change;
  try {
    change = { executing: limitArg(values.executing, "executing"), waiting: limitArg(values.waiting, "waiting") };
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`codeplane: ${err.message}\n`);
    return 2;
  }
  const { setAccountLimits } = await import("../domain/limits/limits.ts");
  await withDatabase(config, logger, async ({ db }) => print(await setAccountLimits(db, positionals[0]!, change, config.runs.limits)));
  return 0;
};
