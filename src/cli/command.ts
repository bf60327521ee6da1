import type { Config } from "../config.ts";
import type { Logger } from "../logger.ts";

// What every command group of the CLI gets (index.ts builds it once the
// configuration has loaded) and what it answers. Types only: importing this
// loads nothing.

export interface CommandContext {
  /** The word after the command (`create` in `keys create`). */
  sub: string | undefined;
  /** Everything after that. */
  rest: string[];
  config: Readonly<Config>;
  /** Logs to stderr (to stdout for serve), so a command's JSON on stdout stays clean. */
  logger: Logger;
  /** Prints a command's result as JSON on stdout. */
  print: (value: unknown) => void;
}

/** The exit code, or "usage" when the arguments did not name a command: index.ts prints the usage then. */
export type CommandResult = number | "usage";

export type CommandGroup = (c: CommandContext) => Promise<CommandResult>;
