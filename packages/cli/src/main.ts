import { closest, parseArgs, UsageError, type Parsed } from "./args.ts";
import { CliError, EXIT } from "./errors.ts";
import type { Io } from "./output.ts";
import { COMMANDS, commandHelp, findCommand, GLOBAL_OPTIONS, mainHelp, type CommandSpec } from "./spec.ts";

// cpl's entry: finds the command in the table (src/spec.ts), parses its
// arguments, imports only the module that runs it, and turns errors into a
// message on stderr and an exit code (src/errors.ts). Nothing else is loaded
// before a command runs: `cpl --help` reads three small files.

export const VERSION = "0.1.0";

/** What a command is given. */
export interface Ctx {
  args: string[];
  options: Parsed["options"];
  rest: string[] | null;
  io: Io;
  output: "table" | "json";
  /** The client for the current context (--context, CPL_CONTEXT, CPL_URL or config). */
  client(): Promise<import("./client.ts").Client>;
  store(): Promise<import("./config.ts").Store>;
}

export type Handler = (ctx: Ctx) => Promise<number | void>;

const MODULES: Record<CommandSpec["module"], () => Promise<Record<string, unknown>>> = {
  auth: () => import("./commands/auth.ts"),
  repos: () => import("./commands/repos.ts"),
  files: () => import("./commands/files.ts"),
  analyze: () => import("./commands/analyze.ts"),
  runs: () => import("./commands/runs.ts"),
  env: () => import("./commands/env.ts"),
  keys: () => import("./commands/keys.ts"),
  completion: () => import("./commands/completion.ts"),
};

export function processIo(): Io {
  let controller: AbortController | undefined;
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    // Ctrl-C is caught only by the commands that look at the signal (following a run, waiting for
    // an analysis, signing in): the first stops what they wait for, a second ends the process at
    // once. Every other command ends at the first, as a program does by default.
    get signal() {
      if (!controller) {
        const c = (controller = new AbortController());
        process.on("SIGINT", () => (c.signal.aborted ? process.exit(EXIT.interrupted) : c.abort()));
      }
      return controller.signal;
    },
    async readStdin() {
      const chunks: Buffer[] = [];
      for await (const c of process.stdin) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString("utf8");
    },
  };
}

/** `--help`, `help [command]` and `version`: answered without parsing anything else; null for any other command line. */
function answerAlone(argv: readonly string[], io: Io): number | null {
  if (argv.length === 0 || argv[0] === "help" || argv[0] === "--help" || argv[0] === "-h") {
    const topic = argv[0] === "help" && argv[1] ? findCommand(argv.slice(1)) : null;
    io.stdout.write(topic && "command" in topic ? commandHelp(topic.command) : mainHelp(topic && "group" in topic ? topic.group : undefined));
    return EXIT.ok;
  }
  if (argv[0] === "version" || argv[0] === "--version") {
    io.stdout.write(`cpl ${VERSION}\n`);
    return EXIT.ok;
  }
  return null;
}

/** Options given before the command (`cpl -o json runs ls`): they move after its words. */
function splitLeading(argv: readonly string[]): { leading: string[]; words: string[] } {
  let i = 0;
  while (i < argv.length && argv[i]!.startsWith("-") && argv[i] !== "--") i += /^(-o|--output|--context)$/.test(argv[i]!) ? 2 : 1;
  return { leading: argv.slice(0, i), words: argv.slice(i) };
}

function unknownCommand(argv: readonly string[], group: string | null, io: Io): number {
  const words = group ? argv.slice(0, 2).join(" ") : (argv[0] ?? "");
  const candidates = group ? COMMANDS.map((c) => c.words.join(" ")).filter((n) => n.startsWith(`${group} `)) : [...new Set(COMMANDS.map((c) => c.words[0]!))];
  const near = closest(words, candidates);
  if (group && argv.length === 1) io.stderr.write(`cpl ${group}: give one of its commands\n`);
  else
    io.stderr.write(`cpl: unknown command ${JSON.stringify(words)}${near.length ? ` (did you mean ${near.slice(0, 3).join(", ")}?)` : ""}; see cpl --help\n`);
  if (group) io.stderr.write(`\n${mainHelp(group)}`);
  return EXIT.usage;
}

/** The command's arguments parsed and counted; a UsageError for anything wrong. */
function parseFor(command: CommandSpec, argv: readonly string[]): Parsed {
  const parsed = parseArgs(argv, [...command.options, ...GLOBAL_OPTIONS], { passthrough: command.passthrough ?? false });
  const n = parsed.positionals.length;
  if (!parsed.options.help && (n < command.min || n > command.max)) {
    throw new UsageError(n < command.min ? `missing arguments: ${command.args}` : `too many arguments (takes ${command.args || "none"})`);
  }
  return parsed;
}

export async function main(argv: readonly string[], io: Io = processIo()): Promise<number> {
  const alone = answerAlone(argv, io);
  if (alone !== null) return alone;
  const { leading, words } = splitLeading(argv);
  const found = findCommand(words);
  if (!found || "group" in found) return unknownCommand(words, found ? found.group : null, io);
  const { command } = found;
  let parsed: Parsed;
  try {
    parsed = parseFor(command, [...leading, ...words.slice(found.used)]);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    const name = command.words.join(" ");
    io.stderr.write(`cpl ${name}: ${err.message}\nUsage: cpl ${[name, command.args].filter(Boolean).join(" ")} [options] (see --help)\n`);
    return EXIT.usage;
  }
  if (parsed.options.help) {
    io.stdout.write(commandHelp(command));
    return EXIT.ok;
  }
  return runCommand(command, parsed, io);
}

async function runCommand(command: CommandSpec, parsed: Parsed, io: Io): Promise<number> {
  const contextName = typeof parsed.options.context === "string" ? parsed.options.context : undefined;
  let store: import("./config.ts").Store | undefined;
  const ctx: Ctx = {
    args: parsed.positionals,
    options: parsed.options,
    rest: parsed.rest,
    io,
    output: parsed.options.output === "json" ? "json" : "table",
    async store() {
      const { Store } = await import("./config.ts");
      return (store ??= new Store(io.env));
    },
    async client() {
      const [{ resolveTarget }, { Client }] = await Promise.all([import("./config.ts"), import("./client.ts")]);
      const s = await ctx.store();
      return new Client(resolveTarget(s, io.env, contextName), s);
    },
  };
  try {
    const mod = await MODULES[command.module]();
    const handler = mod[command.handler] as Handler;
    return (await handler(ctx)) ?? EXIT.ok;
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`cpl ${command.words.join(" ")}: ${err.message}\n`);
      return EXIT.usage;
    }
    if (err instanceof CliError) {
      const hint = "status" in err && err.status === 401 ? "\n(the credential was refused: run `cpl login <url>` again)" : "";
      io.stderr.write(`cpl: ${err.message}${hint}\n`);
      return err.exitCode;
    }
    throw err;
  }
}
