import { parseArgs } from "node:util";
import { createAccount } from "../domain/accounts/accounts.ts";
import { cpuMillis, formatCpu, formatMemory, memoryBytes } from "../domain/limits/limits.ts";
import type { CommandGroup } from "./command.ts";
import { withDatabase } from "./database.ts";

/** A limit given on the command line: a count (0: none), or `default` (the operator's). */
function limitArg(value: string | undefined, name: string): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === "default") return null;
  if (!/^\d{1,7}$/.test(value)) throw new UsageError(`--${name} takes a count (0: no limit) or 'default'`);
  return Number(value);
}

/** A cap given on the command line: a Kubernetes quantity (0: none), or `default`. */
function quantityArg(value: string | undefined, name: string, parse: (q: string) => number | null, example: string): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === "default") return null;
  const n = parse(value);
  if (n === null) throw new UsageError(`--${name} takes a Kubernetes quantity such as ${example} (0: no cap) or 'default'`);
  return n;
}

/** CPU and memory as people write them (millicores and bytes inside). */
const readable = <T extends { cpu: number | null; memory: number | null }>(l: T) => ({
  ...l,
  cpu: l.cpu === null ? null : formatCpu(l.cpu),
  memory: l.memory === null ? null : formatMemory(l.memory),
});

class UsageError extends Error {}

/**
 * codeplane accounts create <name>
 * codeplane accounts limits <name> [--executing N|default] [--waiting N|default] [--cpu Q|default] [--memory Q|default]
 */
export const run: CommandGroup = async ({ sub, rest, config, logger, print }) => {
  if (sub === "create" && rest.length === 1) {
    await withDatabase(config, logger, async ({ db }) => print(await createAccount(db, rest[0]!)));
    return 0;
  }
  if (sub !== "limits") return "usage";
  const { values, positionals } = parseArgs({
    args: rest,
    options: { executing: { type: "string" }, waiting: { type: "string" }, cpu: { type: "string" }, memory: { type: "string" } },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length !== 1) return "usage";
  let change;
  try {
    change = {
      executing: limitArg(values.executing, "executing"),
      waiting: limitArg(values.waiting, "waiting"),
      cpu: quantityArg(values.cpu, "cpu", cpuMillis, "'4' or '500m'"),
      memory: quantityArg(values.memory, "memory", memoryBytes, "'16Gi'"),
    };
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`codeplane: ${err.message}\n`);
    return 2;
  }
  const { setAccountLimits } = await import("../domain/limits/limits.ts");
  await withDatabase(config, logger, async ({ db }) => {
    const limits = await setAccountLimits(db, positionals[0]!, change, config.runs.limits);
    print({ ...readable(limits), overrides: readable(limits.overrides) });
  });
  return 0;
};
